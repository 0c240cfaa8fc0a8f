import { describe, expect, it } from 'vitest';

import {
  conflictMarkerLine,
  editSeries,
  keepLiteralLines,
  newPatchName,
  routeEdits,
  withIndexLine,
  type ChainFile,
} from '../../src/upkeep/export-plan.js';
import { mlxVersion, repinConfigText } from '../../src/upkeep/repin.js';
import { UserError } from '../../src/core/errors.js';

const base = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n'];
/** Two patches on one file: P1 adds `x` after `b`, P2 adds `y` after `l`, far apart. */
const afterFirst = ['a', 'b', 'x', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n'];
const afterSecond = ['a', 'b', 'x', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'y', 'm', 'n'];
const chain: ChainFile = {
  path: 'f.cpp',
  base,
  steps: [
    { patch: '0001-a.patch', post: afterFirst },
    { patch: '0002-b.patch', post: afterSecond },
  ],
};

function refusal(fn: () => unknown): UserError {
  try {
    fn();
  } catch (error) {
    if (error instanceof UserError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('routeEdits', () => {
  it('gives every edit to the only patch of a file, even far from its hunk', () => {
    const single: ChainFile = { path: 'f.cpp', base, steps: [{ patch: '0001-a.patch', post: afterFirst }] };
    const edited = afterFirst.map((l) => (l === 'm' ? 'M' : l));
    expect(routeEdits(single, edited)).toEqual([edited]);
  });

  it('gives an edit of a line a patch added to that patch, and the later patch keeps its own change', () => {
    const edited = afterSecond.map((l) => (l === 'x' ? 'X' : l));
    const [first, second] = routeEdits(chain, edited);
    expect(first).toEqual(afterFirst.map((l) => (l === 'x' ? 'X' : l)));
    expect(second).toEqual(edited);
  });

  it("gives an edit of MLX's own line to the one patch whose hunk (three lines of context) it falls in", () => {
    const edited = afterSecond.map((l) => (l === 'k' ? 'K' : l));
    const [first, second] = routeEdits(chain, edited);
    expect(first).toEqual(afterFirst);
    expect(second).toEqual(edited);
  });

  it('refuses an edit in neither hunk, naming the file, the line and both patches', () => {
    const edited = afterSecond.map((l) => (l === 'g' ? 'G' : l));
    const error = refusal(() => routeEdits(chain, edited));
    expect(error.code).toBe('EXPORT_REFUSED');
    expect(error.message).toContain('f.cpp: the edit at line 8 lies outside the hunks of');
    expect(error.details).toEqual({
      file: 'f.cpp',
      line: 8,
      patches: ['patches/0001-a.patch', 'patches/0002-b.patch'],
    });
  });

  it('refuses an edit in the hunks of both patches', () => {
    const close: ChainFile = {
      path: 'f.cpp',
      base,
      steps: [
        { patch: '0001-a.patch', post: ['a', 'b', 'x', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n'] },
        {
          patch: '0002-b.patch',
          post: ['a', 'b', 'x', 'c', 'd', 'e', 'y', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n'],
        },
      ],
    };
    const error = refusal(() =>
      routeEdits(close, ['a', 'b', 'x', 'c', 'D', 'e', 'y', 'f', 'g', 'h', 'i', 'j', 'k', 'l', 'm', 'n']),
    );
    expect(error.message).toContain('falls in the hunks of both patches/0001-a.patch and patches/0002-b.patch');
  });
});

describe('export helpers', () => {
  it('keeps the raw text of lines the patch keeps from the text before it', () => {
    expect(
      keepLiteralLines(['{{name}}', '{{name}} more'], { rendered: ['Foo'], raw: ['Foo'] }, ['Foo', 'Foo more']),
    ).toEqual(['Foo', '{{name}} more']);
  });

  it('finds a conflict block only when both markers are there', () => {
    expect(conflictMarkerLine(['a', '<<<<<<< ours', 'b', '=======', 'c', '>>>>>>> theirs'])).toBe(2);
    expect(conflictMarkerLine(['Title', '=======', '<<<<<<<< not a marker'])).toBeNull();
  });

  it('rewrites blob ids in an index line keeping their length and the mode', () => {
    expect(
      withIndexLine(['diff --git a/x b/x', 'index 1234567..89abcde 100644'], 'f'.repeat(40), 'e'.repeat(40)),
    ).toEqual(['diff --git a/x b/x', 'index fffffff..eeeeeee 100644']);
  });

  it('names a new patch after the highest number and the path', () => {
    expect(newPatchName(['0001-a.patch', '0004-docs.patch'], 'mlx/mlx.h')).toBe('0005-mlx-mlx-h.patch');
    expect(newPatchName([], 'CMakeLists.txt')).toBe('0001-cmakelists-txt.patch');
  });

  it('edits patches/series keeping comments and order', () => {
    expect(editSeries('# order\n0001-a.patch\n0002-b.patch # note\n', ['0002-b.patch'], ['0003-c.patch'])).toBe(
      '# order\n0001-a.patch\n0003-c.patch\n',
    );
  });

  it("reads MLX's version from mlx/version.h, else from CMake's project()", () => {
    const header = '#define MLX_VERSION_MAJOR 0\n#define MLX_VERSION_MINOR 32\n#define MLX_VERSION_PATCH 2\n';
    expect(mlxVersion(header, null)).toBe('0.32.2');
    expect(mlxVersion(null, 'project(mlx LANGUAGES C CXX VERSION 0.21.1)\n')).toBe('0.21.1');
    expect(mlxVersion('// nothing\n', 'project(mlx)\n')).toBeNull();
  });

  it('changes only the commit and version in the config text', () => {
    const text = '{\n  "upstream": {\n    "commit":   "aaaa",\n    "version": "0.32.2"\n  },\n  "x": "0.32.2"\n}\n';
    expect(repinConfigText(text, { commit: 'aaaa', version: '0.32.2' }, { commit: 'bbbb', version: '0.33.0' })).toBe(
      '{\n  "upstream": {\n    "commit":   "bbbb",\n    "version": "0.33.0"\n  },\n  "x": "0.32.2"\n}\n',
    );
    expect(repinConfigText(text, { commit: 'cccc', version: '0.32.2' }, { commit: 'b', version: '1.0.0' })).toBeNull();
  });
});
