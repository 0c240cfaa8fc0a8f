import { execFileSync } from 'node:child_process';
import { PassThrough } from 'node:stream';

import { describe, expect, it } from 'vitest';

import { createLogger } from '../../src/adapters/log.js';
import { loadContext } from '../../src/series/context.js';
import { buildDocsReport } from '../../src/readiness/docs-build.js';
import { REPO_ROOT, runCli, tempDir } from '../support/repos.js';
import { describeName, mlxRepo } from '../support/mlx.js';

const { repo } = mlxRepo();

function hasSphinx(): boolean {
  try {
    execFileSync('sphinx-build', ['--version']);
    return true;
  } catch {
    return false;
  }
}
const sphinx = hasSphinx();
const name = sphinx
  ? 'docs check on the real MLX'
  : 'docs check on the real MLX (skipped: sphinx-build is not on PATH; sudo apt-get install python3-sphinx)';
if (!sphinx) console.warn(name);

describe.skipIf(repo === null || !sphinx)(describeName(name), () => {
  it('passes for the shipped series: the pinned page has two warnings (labels on other pages) and the patched page the same two', async () => {
    const workdir = tempDir('msp-e2e-docs-');
    const applied = await runCli(['apply', '--mlx-repo', repo as string, '--workdir', workdir], { cwd: REPO_ROOT });
    expect(applied.code, applied.stderr).toBe(0);
    const env = { PATH: process.env['PATH'] };
    const ctx = await loadContext({
      platform: process.platform,
      cwd: REPO_ROOT,
      env,
      workdir,
      logger: createLogger({ stream: new PassThrough() }),
    });
    const report = await buildDocsReport(ctx, env);
    expect(report.files).toEqual([
      {
        path: 'docs/src/dev/extensions.rst',
        origins: ['patches/0004-docs-extensions.patch'],
        baseline: 2,
        patched: 2,
        newWarnings: [],
        failure: null,
      },
    ]);
  });
});
