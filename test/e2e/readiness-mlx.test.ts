import { describe, expect, it } from 'vitest';

import { REPO_ROOT, runCli, tempDir } from '../support/repos.js';
import { describeName, mlxRepo } from '../support/mlx.js';

const { repo } = mlxRepo();

describe.skipIf(repo === null)(describeName('verify build checks on the real MLX'), () => {
  it(
    'shows the new tests failing without the implementation and the suite passing with it',
    async () => {
      const workdir = process.env['MLX_STORAGE_PR_E2E_WORKDIR'] ?? tempDir('msp-e2e-verify-');
      const args = ['--mlx-repo', repo as string, '--workdir', workdir, '--json'];
      expect((await runCli(['apply', ...args], { cwd: REPO_ROOT })).code).toBe(0);
      const result = await runCli(['verify', '--offline', ...args], { cwd: REPO_ROOT });
      const byId = Object.fromEntries(
        (result.json.checks as Array<{ id: string; status: string; detail: string }>).map((c) => [c.id, c]),
      );
      expect(byId['linux-build']?.status, byId['linux-build']?.detail).toBe('pass');
      expect(byId['linux-build']?.detail).toMatch(
        /0 new failure\(s\), 0 failing new test\(s\), [1-9]\d* new test\(s\) passing/,
      );
      expect(byId['tests-fail-without-implementation']?.status, byId['tests-fail-without-implementation']?.detail).toBe(
        'pass',
      );
      expect(byId['format-cpp']?.status).toBe('pass');
    },
    90 * 60_000,
  );
});
