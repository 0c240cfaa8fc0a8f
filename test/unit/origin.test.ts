import { describe, expect, it } from 'vitest';

import { lineOrigin } from '../../src/series/origin.js';
import type { ApplyPlan } from '../../src/series/plan.js';
import { parsePatchFiles } from '../../src/series/series-file.js';

// MLX's file before the series: lines a1..a6.
const FIRST = `diff --git a/src/f.cpp b/src/f.cpp
index 1111111..2222222 100644
--- a/src/f.cpp
+++ b/src/f.cpp
@@ -1,3 +1,4 @@
 a1
+p1
 a2
 a3
@@ -5,2 +6,3 @@ context
 a5
 a6
+p2
`;
// Applied after FIRST: the file is then a1 p1 a2 a3 a4 a5 a6 p2.
const SECOND = `diff --git a/src/f.cpp b/src/f.cpp
--- a/src/f.cpp
+++ b/src/f.cpp
@@ -2,2 +2,3 @@
 p1
+q1
 a2
`;

const patch = (name: string, text: string) => ({ name, text, files: parsePatchFiles(text, `patches/${name}`) });
const plan: ApplyPlan = {
  commit: 'c'.repeat(40),
  files: [{ path: 'tests/new_tests.cpp', content: 'x\n', template: 'tests/{{stub_test_file}}' }],
  patches: [patch('0001-first.patch', FIRST), patch('0002-second.patch', SECOND)],
  inputHash: 'h',
  warnings: [],
};

describe('lineOrigin', () => {
  it('names the template line of a new file', () => {
    expect(lineOrigin(plan, 'tests/new_tests.cpp', 7)).toBe('templates/tests/{{stub_test_file}}:7');
  });

  it('names the patch and the line in the patch file that added a line, through later patches', () => {
    // Final file: a1 p1 q1 a2 a3 a4 a5 a6 p2.
    expect(lineOrigin(plan, 'src/f.cpp', 2)).toBe('patches/0001-first.patch:7');
    expect(lineOrigin(plan, 'src/f.cpp', 3)).toBe('patches/0002-second.patch:6');
    expect(lineOrigin(plan, 'src/f.cpp', 9)).toBe('patches/0001-first.patch:13');
  });

  it("says nothing for MLX's own lines, in and between hunks", () => {
    for (const line of [1, 4, 5, 6, 7, 8]) expect(lineOrigin(plan, 'src/f.cpp', line)).toBeNull();
    expect(lineOrigin(plan, 'src/other.cpp', 2)).toBeNull();
  });
});
