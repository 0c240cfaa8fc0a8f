import { describe, expect, it } from 'vitest';

import { laneToolchain, metalCppDir, skipName } from '../support/check-metal-fixtures.js';
import { mlxRepo } from '../support/mlx.js';
import { REPO_ROOT, runCli, tempDir } from '../support/repos.js';

const lane = await laneToolchain();
const metalCpp = metalCppDir();
const { repo, reason: repoReason } = mlxRepo();
const skip = lane.toolchain === null || metalCpp.dir === null || repo === null;

describe.skipIf(skip)(
  skipName('check-metal on the real MLX at the pinned commit', [lane.reason, metalCpp.reason, repoReason]),
  () => {
    const workdir = tempDir('msp-e2e-metal-');
    const base = ['--mlx-repo', repo as string, '--workdir', workdir, '--json'];
    const args = [...base, '--metal-cpp', metalCpp.dir as string, '--jobs', '2'];

    it('self-test: every MLX Metal TU type-checks and the broken TU is flagged', { timeout: 30 * 60_000 }, async () => {
      const result = await runCli(['check-metal', '--self-test', ...args], { cwd: REPO_ROOT });
      expect(result.code, result.stdout).toBe(0);
      expect(result.json.mlx.total).toBeGreaterThanOrEqual(35);
      expect(result.json.mlx.ok).toBe(result.json.mlx.total);
      const broken = result.json.outcomes.filter((o: { label: string }) =>
        o.label.startsWith('shims/selftest/broken.cpp'),
      );
      expect(
        broken.map((o: { expect: string; good: boolean; exitCode: number }) => [o.expect, o.good, o.exitCode !== 0]),
      ).toEqual([
        ['fail', true, true],
        ['verify', true, false],
      ]);
    });

    it("the PR's Metal TUs type-check in the applied checkout", { timeout: 10 * 60_000 }, async () => {
      const applied = await runCli(['apply', ...base], { cwd: REPO_ROOT });
      expect(applied.code, applied.stderr).toBe(0);
      const result = await runCli(['check-metal', ...args], { cwd: REPO_ROOT });
      expect(result.code, JSON.stringify(result.json.outcomes, null, 2)).toBe(0);
      expect(result.json).toMatchObject({ mode: 'pr', failed: 0, passed: 2 });
    });
  },
);
