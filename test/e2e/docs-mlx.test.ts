import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';

import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

import { createLogger } from '../../src/adapters/log.js';
import { loadContext } from '../../src/series/context.js';
import { buildDocsReport } from '../../src/readiness/docs-build.js';
import { makeProject, REPO_ROOT, runCli, tempDir } from '../support/repos.js';
import { describeName, mlxRepo } from '../support/mlx.js';

const { repo } = mlxRepo();
const PIN = '846d176227a0ac13d2667e58d2bb68b322109ab0';

async function hasSphinx(): Promise<boolean> {
  try {
    await execa('sphinx-build', ['--version']);
    return true;
  } catch {
    return false;
  }
}
const sphinx = await hasSphinx();
const name = sphinx
  ? 'docs check on the real MLX'
  : 'docs check on the real MLX (skipped: sphinx-build is not on PATH; sudo apt-get install python3-sphinx)';
if (!sphinx) console.warn(name);

async function docsReport(cwd: string, workdir: string) {
  const env = { PATH: process.env['PATH'] };
  const ctx = await loadContext({
    platform: process.platform,
    cwd,
    env,
    workdir,
    logger: createLogger({ stream: new PassThrough() }),
  });
  const started = performance.now();
  const report = await buildDocsReport(ctx, env);
  console.log(`docs check of ${report.files.length} page(s): ${Math.round(performance.now() - started)} ms`);
  return report;
}

/** A series of one patch to MLX's quick start page at the pin that adds a line with `refs`. */
function docsOnlyProject(refs: string): string {
  const project = makeProject(PIN, 'docs/project');
  rmSync(path.join(project, 'templates'), { recursive: true, force: true });
  rmSync(path.join(project, 'patches'), { recursive: true, force: true });
  mkdirSync(path.join(project, 'patches'));
  const page = 'docs/src/usage/quick_start.rst';
  writeFileSync(path.join(project, 'patches', 'series'), '0001-quick-start.patch\n');
  writeFileSync(
    path.join(project, 'patches', '0001-quick-start.patch'),
    [
      `diff --git a/${page} b/${page}`,
      `--- a/${page}`,
      `+++ b/${page}`,
      '@@ -1,6 +1,8 @@',
      ' Quick Start Guide',
      ' =================',
      ' ',
      `+See ${refs} first.`,
      '+',
      ' ',
      ' Basics',
      ' ------',
      '',
    ].join('\n'),
  );
  return project;
}

describe.skipIf(repo === null || !sphinx)(describeName(name), () => {
  it('passes for the shipped series: the labels on other pages resolve, so neither the pinned nor the patched page warns', async () => {
    const workdir = tempDir('msp-e2e-docs-');
    const applied = await runCli(['apply', '--mlx-repo', repo as string, '--workdir', workdir], { cwd: REPO_ROOT });
    expect(applied.code, applied.stderr).toBe(0);
    expect((await docsReport(REPO_ROOT, workdir)).files).toEqual([
      {
        path: 'docs/src/dev/extensions.rst',
        origins: ['patches/0004-docs-extensions.patch'],
        baseline: 0,
        patched: 0,
        newWarnings: [],
        failure: null,
      },
    ]);
  });

  it('passes a docs-only series whose :ref: points at labels on other pages, and reports one to a label defined nowhere', async () => {
    const good = docsOnlyProject(':ref:`build_and_install` and :ref:`compile <shapeless_compile>`');
    const applied = await runCli(['apply', '--mlx-repo', repo as string], { cwd: good });
    expect(applied.code, applied.stderr).toBe(0);
    const verify = await runCli(['verify', '--skip', 'format', 'metal-typecheck', 'pr-text', 'build', '--json'], {
      cwd: good,
    });
    expect(verify.json.checks).toEqual([expect.objectContaining({ id: 'docs', status: 'pass' })]);
    expect(verify.code).toBe(0);

    const bad = docsOnlyProject(':ref:`build_and_install` and :ref:`no_such_label_anywhere`');
    expect((await runCli(['apply', '--mlx-repo', repo as string], { cwd: bad })).code).toBe(0);
    const report = await docsReport(bad, path.join(bad, '.work'));
    expect(report.files[0]?.newWarnings.map((w) => w.message)).toEqual(["undefined label: 'no_such_label_anywhere'"]);
  });
});
