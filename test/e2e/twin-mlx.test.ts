import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { REPO_ROOT, runCli, snapshot, tempDir } from '../support/repos.js';
import { describeName, mlxRepo } from '../support/mlx.js';

const { repo } = mlxRepo();
// libmlx, the twin and the mutants' tree: minutes with a warm ccache, about 30 cold on 2 cores.
const TIMEOUT = 90 * 60_000;

const metalTestFile = path.join(REPO_ROOT, 'templates', '{{metal_test_file}}');

describe.skipIf(repo === null)(
  describeName('the Metal twin and the mutants on the real MLX at the pinned commit'),
  () => {
    const workdir = process.env['MLX_STORAGE_PR_E2E_WORKDIR'] ?? tempDir('msp-e2e-twin-');
    const args = ['--mlx-repo', repo as string, '--workdir', workdir, '--json'];

    it(
      'runs every case of the Metal-only test file on the twin, with none failing',
      async () => {
        const applied = await runCli(['apply', ...args], { cwd: REPO_ROOT });
        expect(applied.code, applied.stderr).toBe(0);
        const result = await runCli(['test', '--offline', '--metal-twin', '--no-suite', ...args], { cwd: REPO_ROOT });
        expect(result.code, result.stderr.slice(-3000)).toBe(0);
        const cases = (readFileSync(metalTestFile, 'utf8').match(/^TEST_CASE\(/gm) ?? []).length;
        expect(result.json.twin.summary).toMatchObject({ cases, passed: cases, failed: 0 });
        // The two definitions of the non-Metal stub, and nothing else, are replaced by the PR's.
        expect(result.json.twin.weakened.map((w: { member: string }) => w.member)).toEqual([
          'no_metal.cpp.o',
          'no_metal.cpp.o',
        ]);
      },
      TIMEOUT,
    );

    it(
      'kills every shipped mutant and leaves the checkout as it was',
      async () => {
        const checkout = path.join(workdir, 'mlx');
        const before = snapshot(checkout);
        const skip = ['format', 'metal-typecheck', 'docs', 'pr-text', 'tests-fail-without-implementation'];
        const result = await runCli(['verify', '--offline', ...skip.flatMap((s) => ['--skip', s]), ...args], {
          cwd: REPO_ROOT,
        });
        const mutants = result.json.checks.find((c: { id: string }) => c.id === 'mutants');
        const shipped = (
          JSON.parse(readFileSync(path.join(REPO_ROOT, 'mutants.json'), 'utf8')) as { mutants: unknown[] }
        ).mutants.length;
        expect(mutants.status, mutants.detail).toBe('pass');
        expect(mutants.detail).toContain(`all ${shipped} mutants killed`);
        expect(snapshot(checkout)).toBe(before);
      },
      TIMEOUT,
    );
  },
);
