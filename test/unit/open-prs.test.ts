import { describe, expect, it } from 'vitest';

import {
  mostRecent,
  openPrsExitCode,
  openPrsLines,
  openPrsMarkdown,
  pullNumbers,
  sharingFiles,
  type OpenPrsData,
  type PullRequestCheck,
} from '../../src/upkeep/open-prs-report.js';

const DOCS = 'docs/src/dev/extensions.rst';
const TESTS = 'tests/CMakeLists.txt';

describe('which pull requests share a file with the series', () => {
  it('keeps only the files in common, drops a pull request with none, highest number first', () => {
    const shared = sharingFiles(
      [
        { number: 4004, title: 'Docs', author: 'a', url: null, files: ['README.md', DOCS, DOCS] },
        { number: 4380, title: 'Other', author: 'b', url: null, files: ['mlx/ops.cpp'] },
        { number: 4356, title: 'Tests', author: 'c', url: null, files: [TESTS, 'tests/new.cpp'] },
      ],
      [DOCS, TESTS, 'mlx/backend/metal/no_metal.cpp'],
    );
    expect(shared.map((s) => [s.number, s.files])).toEqual([
      [4356, [TESTS]],
      [4004, [DOCS]],
    ]);
  });

  it('--limit takes the highest numbers; pull numbers are read from refs/pull/<n>/<kind> only', () => {
    expect(mostRecent([{ number: 3 }, { number: 10 }, { number: 7 }], 2)).toEqual([{ number: 10 }, { number: 7 }]);
    expect(
      pullNumbers(
        [
          'refs/pull/12/merge',
          'refs/pull/12/head',
          'refs/pull/0/merge',
          'refs/pull/x/merge',
          'refs/heads/pull/3/merge',
        ],
        'merge',
      ),
    ).toEqual([12]);
  });
});

const check = (number: number, status: PullRequestCheck['status'], extra: Partial<PullRequestCheck> = {}) =>
  ({
    number,
    title: `PR ${number} | with a bar`,
    author: 'someone',
    url: `https://github.com/ml-explore/mlx/pull/${number}`,
    files: [TESTS],
    checked:
      status === 'could-not-check'
        ? null
        : { ref: `refs/pull/${number}/merge`, commit: 'a'.repeat(40), how: 'merge-ref' as const, unmerged: [] },
    status,
    reason: status === 'could-not-check' ? 'could not fetch it' : null,
    report: null,
    ...extra,
  }) satisfies PullRequestCheck;

const data = (pullRequests: PullRequestCheck[], kind: 'github' | 'source-refs' = 'github'): OpenPrsData => ({
  command: 'check',
  source: '/src/mlx',
  pinned: 'b'.repeat(40),
  pinnedVersion: '0.32.2',
  openPrs: {
    listing:
      kind === 'github'
        ? { kind, apiUrl: 'https://api.github.com', repository: 'ml-explore/mlx' }
        : { kind, source: '/src/mlx', why: 'no network' },
    listed: 60,
    considered: 30,
    limit: 30,
    seriesFiles: [DOCS, TESTS],
    pullRequests,
  },
});

describe('the exit code of check --open-prs', () => {
  it('4 for a conflict whatever else; 5 when one could not be checked; 0 for clean, three-way and already-upstream', () => {
    expect(openPrsExitCode([check(1, 'could-not-check'), check(2, 'conflict')])).toBe(4);
    expect(openPrsExitCode([check(1, 'could-not-check'), check(2, 'clean')])).toBe(5);
    expect(openPrsExitCode([check(1, 'three-way'), check(2, 'already-upstream'), check(3, 'clean')])).toBe(0);
    expect(openPrsExitCode([])).toBe(0);
  });
});

describe('the reports of check --open-prs', () => {
  it('lines: where the list came from, each pull request with its files and result, a verdict', () => {
    const lines = openPrsLines(data([check(4356, 'three-way'), check(4300, 'could-not-check')], 'source-refs'));
    expect(lines[0]).toBe(
      "open pull requests from the source's refs/pull/*/merge (/src/mlx; no network): 60 merge ref(s), the 30 most recent looked at (--limit 30); open state unknown: the source may keep refs of closed pull requests",
    );
    expect(lines).toContain('#4356 "PR 4356 | with a bar" by someone: three-way');
    expect(lines).toContain('  checked: refs/pull/4356/merge (aaaaaaaaaaaa)');
    expect(lines).toContain('  could not check: could not fetch it');
    expect(lines.at(-1)).toBe(
      'Could not check #4300: not a clean result. Applies only with a three-way merge on #4356.',
    );
  });

  it('Markdown: one row per pull request with a link, its cells escaped; a listing with none says so', () => {
    const md = openPrsMarkdown(data([check(4279, 'conflict')]));
    expect(md).toContain('| pull request | title | author | files in common | checked | result | why |');
    expect(md).toContain(
      '| [#4279](https://github.com/ml-explore/mlx/pull/4279) | PR 4279 \\| with a bar | someone | `tests/CMakeLists.txt` | refs/pull/4279/merge (aaaaaaaaaaaa) | conflict |  |',
    );
    expect(md).toContain('**The series conflicts with #4279 once merged: expect to rebase when it lands.**');
    expect(openPrsMarkdown(data([]))).toContain(
      '**No pull request looked at changes a file the series changes (30 looked at).**',
    );
  });
});
