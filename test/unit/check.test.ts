import { describe, expect, it } from 'vitest';

import type { Summary } from '../../src/suite/baseline.js';
import {
  checkExitCode,
  checkLines,
  checkMarkdown,
  worstStatus,
  type CheckData,
  type RefBuild,
  type RefReport,
} from '../../src/upkeep/drift-report.js';
import type { StepOutcome, StepStatus } from '../../src/series/applied-tree.js';

const step = (name: string, status: StepStatus, kind: StepOutcome['kind'] = 'patch'): StepOutcome => ({
  kind,
  name,
  files: [`mlx/${name}.txt`],
  status,
  reasons: [],
});

const summary: Summary = {
  cases: 2,
  passed: 1,
  failed: 1,
  skipped: 0,
  assertions: { passed: 1, failed: 1 },
  byClass: {
    passed: 1,
    skipped: 0,
    'new-failure': 1,
    'pre-existing-failure': 0,
    'new-test-passed': 0,
    'new-test-failed': 0,
    fixed: 0,
  },
};

function ref(status: StepStatus, build?: RefBuild): RefReport {
  return {
    ref: `ref-${status}`,
    commit: 'a'.repeat(40),
    date: '2026-05-22T12:39:27+09:00',
    status,
    upstreamChanged: [],
    templates: [],
    patches: [step('0001-x.patch', status)],
    ...(build ? { build } : {}),
  };
}

const failed: RefBuild = {
  status: 'failed',
  blocking: 1,
  test: { buildDir: '/b', summary, cases: [{ name: 'test x', classification: 'new-failure' }], twin: null },
};
const missingTool: RefBuild = {
  status: 'error',
  error: { code: 'TOOL_MISSING', message: 'no cmake', hint: 'install cmake' },
};

describe('check report', () => {
  it('a commit takes the worst status of its steps: conflict, three-way, already-upstream, clean', () => {
    expect(worstStatus([])).toBe('clean');
    expect(worstStatus([step('a', 'clean'), step('b', 'already-upstream')])).toBe('already-upstream');
    expect(worstStatus([step('a', 'already-upstream'), step('b', 'three-way'), step('c', 'clean')])).toBe('three-way');
    expect(worstStatus([step('a', 'conflict'), step('b', 'three-way')])).toBe('conflict');
  });

  it('exits 4 on any conflict, before failed tests (8) and builds that could not run (their own code); else 0', () => {
    expect(checkExitCode([ref('clean'), ref('three-way'), ref('already-upstream')])).toBe(0);
    expect(checkExitCode([ref('clean', failed), ref('conflict', { status: 'not-run' })])).toBe(4);
    expect(checkExitCode([ref('clean', missingTool), ref('clean', failed)])).toBe(8);
    expect(checkExitCode([ref('clean', missingTool)])).toBe(9);
  });

  it('keeps every Markdown table row on one line, with | escaped', () => {
    const data: CheckData = {
      command: 'check',
      source: '/src/mlx',
      pinned: 'b'.repeat(40),
      pinnedVersion: '0.32.2',
      refs: [
        {
          ...ref('conflict'),
          patches: [
            {
              ...step('0001-x.patch', 'conflict'),
              reasons: [
                {
                  patch: '0001-x.patch',
                  file: 'a|b.txt',
                  hunk: 1,
                  hunkHeader: '@@ -1,2 +1,3 @@',
                  reason: 'upstream_changed',
                  detail: 'two\nlines',
                },
              ],
            },
          ],
        },
      ],
    };
    const rows = checkMarkdown(data).filter((l) => l.startsWith('| patch'));
    expect(rows).toEqual([
      '| patch | `0001-x.patch` | conflict | `a\\|b.txt` hunk 1 `@@ -1,2 +1,3 @@`: `upstream_changed` (two lines) |',
    ]);
  });

  it('lists the failing cases of a build that failed, and the hint of one that could not run', () => {
    const data: CheckData = {
      command: 'check',
      source: '/src/mlx',
      pinned: 'b'.repeat(40),
      pinnedVersion: '0.32.2',
      refs: [ref('clean', failed), { ...ref('three-way', missingTool), ref: 'other' }],
    };
    const lines = checkLines(data);
    expect(lines).toContain('    new-failure: test x');
    expect(lines).toContain('    hint: install cmake');
    expect(lines.at(-1)).toBe(
      'The series applies to all 2 (with a three-way merge on other). Tests fail on ref-clean. The build could not run on other.',
    );
  });

  it("with --metal-twin, says the twin is not a Metal run and lists its failing cases with the suite's", () => {
    const twinFailed: RefBuild = {
      status: 'failed',
      blocking: 1,
      test: {
        buildDir: '/b',
        summary,
        cases: [],
        twin: {
          summary: { ...summary, cases: 26, failed: 1 },
          cases: [{ name: 'test y', classification: 'new-test-failed' }],
        },
      },
    };
    const lines = checkLines({
      command: 'check',
      source: '/src/mlx',
      pinned: 'b'.repeat(40),
      pinnedVersion: '0.32.2',
      refs: [ref('clean', twinFailed)],
    });
    expect(lines.find((l) => l.includes('build: failed'))).toContain(
      'Metal twin (not a Metal run): 26 case(s), 1 failed',
    );
    expect(lines).toContain('    new-test-failed: test y');
  });
});
