import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { git, REPO_ROOT, runCli, tempDir } from '../support/repos.js';
import { describeName, mlxRepo } from '../support/mlx.js';

const { repo } = mlxRepo();
const config = JSON.parse(readFileSync(path.join(REPO_ROOT, 'mlx-storage-pr.config.json'), 'utf8'));

describe.skipIf(repo === null)(describeName('apply on the real MLX at the pinned commit'), () => {
  it('applies the shipped series, then is a no-op', async () => {
    const workdir = tempDir('msp-e2e-');
    const args = ['--mlx-repo', repo as string, '--workdir', workdir, '--json'];
    const first = await runCli(['apply', ...args], { cwd: REPO_ROOT });
    expect(first.code, first.stderr).toBe(0);
    expect(first.json.status).toBe('applied');
    const checkout = path.join(workdir, 'mlx');
    expect(git(checkout, 'rev-parse', 'HEAD~1').trim()).toBe(config.upstream.commit);
    for (const file of first.json.files as string[]) expect(git(checkout, 'ls-files', file).trim()).toBe(file);
    expect(readFileSync(path.join(checkout, config.variables.header_path), 'utf8')).toContain(
      `class ${config.variables.class_name} {`,
    );
    const second = await runCli(['apply', ...args], { cwd: REPO_ROOT });
    expect(second.json.status).toBe('already-applied');
    const status = await runCli(['status', ...args], { cwd: REPO_ROOT });
    expect(status.json).toMatchObject({
      state: 'applied',
      base: config.upstream.commit,
      differs: [],
      dirty: [],
      conflicts: [],
    });
  });
});
