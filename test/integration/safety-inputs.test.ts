/** Inputs that sent the user the wrong way (issue 23, items 10 and 11). */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { makeExportProject, makeExportUpstream } from '../support/export-fixtures.js';
import { git, makeProject, makeUpstream, runCli } from '../support/repos.js';

describe('a config saved with a UTF-8 byte-order mark', () => {
  it('is read as the same config: apply succeeds', async () => {
    const upstream = makeUpstream();
    const project = makeProject(upstream.sha);
    const file = path.join(project, 'mlx-storage-pr.config.json');
    writeFileSync(file, `\uFEFF${readFileSync(file, 'utf8')}`);
    const result = await runCli(['apply', '--json'], { cwd: project, env: { MLX_REPO: upstream.dir } });
    expect(result.code, result.stdout).toBe(0);
    expect(result.json.ok).toBe(true);
  });
});

describe('bump --to a short commit id', () => {
  it('resolves it in a source on this machine, as check --against does', async () => {
    const upstream = makeExportUpstream();
    const project = makeExportProject(upstream.sha);
    const cli = (...args: string[]) => runCli([...args, '--mlx-repo', upstream.dir], { cwd: project });
    expect((await cli('apply')).code).toBe(0);
    const version = path.join(upstream.dir, 'mlx/version.h');
    writeFileSync(
      version,
      readFileSync(version, 'utf8')
        .replace(/MLX_VERSION_MINOR \d+/, 'MLX_VERSION_MINOR 33')
        .replace(/MLX_VERSION_PATCH \d+/, 'MLX_VERSION_PATCH 0'),
    );
    git(upstream.dir, 'commit', '--quiet', '-am', 'release');
    const target = git(upstream.dir, 'rev-parse', 'HEAD').trim();
    const short = target.slice(0, 10);

    const checked = await cli('check', '--against', short, '--json');
    expect(checked.code, checked.stdout).toBe(0);
    const bumped = await cli('bump', '--to', short, '--json');
    expect(bumped.code, bumped.stdout).toBe(0);
    expect(bumped.json).toMatchObject({ status: 'bumped', to: { commit: target } });
  });
});
