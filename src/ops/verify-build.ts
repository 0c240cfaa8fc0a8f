import type { Context } from '../commands/context.js';
import type { CheckResult } from '../core/checks.js';

export interface BuildCheckOptions {
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  jobs?: number | undefined;
}

/**
 * The checks that need a build of MLX: the patched Linux build with the test
 * suite compared against the baseline build, and proof that the new tests
 * fail without the implementation (MLX CONTRIBUTING.md). `verify` lists
 * whatever this returns.
 */
export async function buildChecks(_ctx: Context, _options: BuildCheckOptions): Promise<CheckResult[]> {
  return [
    {
      id: 'linux-build',
      title: 'Linux build and test suite against the baseline',
      status: 'not-checked',
      detail: 'not implemented yet',
      fix: 'mlx-storage-pr test',
      required: true,
    },
    {
      id: 'tests-fail-without-implementation',
      title: 'New tests fail without the implementation',
      status: 'not-checked',
      detail: 'not implemented yet',
      required: true,
    },
  ];
}
