import { describe, expect, it } from 'vitest';

import { REPO_ROOT, runCli, tempDir } from '../support/repos.js';
import { describeName, mlxRepo } from '../support/mlx.js';

const { repo } = mlxRepo();
// Two MLX builds take about 25 minutes cold on 2 cores; a warm ccache makes it minutes.
const TIMEOUT = 90 * 60_000;

describe.skipIf(repo === null)(describeName('test --offline on the real MLX at the pinned commit'), () => {
  it(
    'builds the patched tree, runs the whole suite and finds no new failure',
    async () => {
      const workdir = process.env['MLX_STORAGE_PR_E2E_WORKDIR'] ?? tempDir('msp-e2e-test-');
      const args = ['--mlx-repo', repo as string, '--workdir', workdir, '--json'];
      const applied = await runCli(['apply', ...args], { cwd: REPO_ROOT });
      expect(applied.code, applied.stderr).toBe(0);

      const result = await runCli(['test', '--offline', ...args], { cwd: REPO_ROOT });
      expect(result.code, result.stderr.slice(-3000)).toBe(0);
      const cases = result.json.cases as Array<{ name: string; classification: string }>;
      const byClass = (kind: string) => cases.filter((c) => c.classification === kind).map((c) => c.name);
      expect(result.json.summary.cases).toBeGreaterThan(250);
      expect(byClass('new-failure')).toEqual([]);
      expect(byClass('new-test-failed')).toEqual([]);
      // GGUF is off offline: its cases fail on the unpatched tree as well.
      expect(byClass('pre-existing-failure').every((name) => name.includes('gguf'))).toBe(true);
      expect(byClass('pre-existing-failure')).toHaveLength(4);
      // Without Metal only the stub cases of the new API run.
      expect(byClass('new-test-passed')).toEqual([
        'test metal storage export without metal',
        'test metal storage view is empty by default',
      ]);
    },
    TIMEOUT,
  );
});
