import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

import { REPO_ROOT, runCli, tempDir } from '../support/repos.js';
import { describeName, mlxRepo } from '../support/mlx.js';

const found = mlxRepo();
const mlx = async (...args: string[]) => (await execa('git', ['-C', found.repo as string, ...args])).stdout.trim();

/** Why the test cannot run: no MLX_REPO, or one without pull request refs (a clone that is not a mirror). */
async function skipReason(): Promise<string | null> {
  if (found.reason) return found.reason;
  if ((await mlx('for-each-ref', '--count=1', '--format=%(refname)', 'refs/pull/')) === '')
    return `skipped: MLX_REPO=${found.repo} has no refs/pull/*; a mirror has them (git clone --mirror https://github.com/ml-explore/mlx.git)`;
  return null;
}
const reason = await skipReason();
if (reason) console.warn(`check --open-prs on the real MLX: ${reason}`);

const LIMIT = 30;

type Check = {
  number: number;
  files: string[];
  checked: { ref: string; how: string } | null;
  status: string;
  reason: string | null;
};

describe.skipIf(reason !== null)(
  reason ? `check --open-prs on the real MLX (${reason})` : describeName('check --open-prs on the real MLX'),
  () => {
    it(`lists exactly the ${LIMIT} highest merge refs that change a file of the series, each with the files it shares and a result`, async () => {
      const workdir = tempDir('msp-e2e-open-prs-');
      const started = performance.now();
      const result = await runCli(
        [
          'check',
          '--open-prs',
          '--open-prs-from',
          'source',
          '--mlx-repo',
          found.repo as string,
          '--workdir',
          workdir,
          '--limit',
          String(LIMIT),
          '--json',
        ],
        { cwd: REPO_ROOT },
      );
      console.info(`check --open-prs --limit ${LIMIT}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
      const { openPrs } = result.json;
      const checks = openPrs.pullRequests as Check[];
      const series = new Set(openPrs.seriesFiles as string[]);

      // The same selection, made with git in the mirror.
      const merges = (await mlx('for-each-ref', '--format=%(refname)', 'refs/pull/*/merge'))
        .split('\n')
        .map((ref) => Number(ref.split('/')[2]))
        .sort((a, b) => b - a)
        .slice(0, LIMIT);
      const expected: Array<[number, string[]]> = [];
      for (const n of merges) {
        const files = (await mlx('diff', '--name-only', `refs/pull/${n}/merge^1`, `refs/pull/${n}/merge`, '--'))
          .split('\n')
          .filter((f) => series.has(f))
          .sort();
        if (files.length > 0) expected.push([n, files]);
      }
      expect(checks.map((c) => [c.number, c.files])).toEqual(expected);

      for (const c of checks) {
        expect(['clean', 'three-way', 'already-upstream', 'conflict', 'could-not-check']).toContain(c.status);
        if (c.status === 'could-not-check') expect(c.reason).toBeTruthy();
        else expect(c.checked?.ref).toMatch(new RegExp(`^refs/pull/${c.number}/(merge|head)$`));
      }
      const statuses = checks.map((c) => c.status);
      expect(result.code, result.stderr).toBe(
        statuses.includes('conflict') ? 4 : statuses.includes('could-not-check') ? 5 : 0,
      );
    });
  },
);
