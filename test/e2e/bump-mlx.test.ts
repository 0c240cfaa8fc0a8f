import { cpSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

import { REPO_ROOT, runCli, tempDir } from '../support/repos.js';
import { describeName, mlxRepo } from '../support/mlx.js';

const { repo } = mlxRepo();
/** The release before the shipped pin (846d176, 0.32.2): one of its ancestors. */
const OLDER = 'v0.32.1';

describe.skipIf(repo === null)(describeName('bump to an older real MLX commit'), () => {
  it('refuses v0.32.1 from the pin (2, naming --allow-older) and moves the shipped series there with --allow-older', async () => {
    const project = tempDir('msp-e2e-bump-');
    for (const entry of ['mlx-storage-pr.config.json', 'templates', 'patches', 'pr', 'mutants.json'])
      cpSync(path.join(REPO_ROOT, entry), path.join(project, entry), { recursive: true });
    const config = () =>
      (
        JSON.parse(readFileSync(path.join(project, 'mlx-storage-pr.config.json'), 'utf8')) as {
          upstream: { commit: string; version: string };
        }
      ).upstream;
    const pin = config().commit;
    const cli = (...args: string[]) => runCli([...args, '--mlx-repo', repo as string], { cwd: project });
    const applied = await cli('apply');
    expect(applied.code, applied.stderr).toBe(0);

    const refused = await cli('bump', '--to', OLDER, '--json');
    expect(refused.code).toBe(2);
    expect(refused.json.error.message).toContain(`is older than the pin ${pin.slice(0, 12)}`);
    expect(refused.json.error.hint).toContain(`--to ${OLDER} --allow-older`);
    expect(config().commit).toBe(pin);

    const moved = await cli('bump', '--to', OLDER, '--allow-older', '--json');
    expect(moved.code, moved.stderr).toBe(0);
    const older = (await execa('git', ['--git-dir', repo as string, 'rev-parse', `${OLDER}^{commit}`])).stdout.trim();
    expect(config()).toMatchObject({ commit: older, version: '0.32.1' });
    expect(moved.json).toMatchObject({ status: 'bumped', relation: 'older' });
    expect(moved.json.patches.map((p: { result: string }) => p.result)).not.toContain('conflict');
  });
});
