import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { makeProject, makeUpstream, runCli, tempDir } from '../support/repos.js';

let upstream: { dir: string; sha: string };
let project: string;

beforeEach(() => {
  upstream = makeUpstream();
  project = makeProject(upstream.sha);
});

/** Every file and folder name in the project, so a test can prove that nothing was added. */
const projectEntries = () => readdirSync(project, { recursive: true }).map(String).sort();

describe('choosing the workdir', () => {
  it('refuses an empty --workdir instead of using the project folder', async () => {
    const before = projectEntries();
    const result = await runCli(['apply', '--mlx-repo', upstream.dir, '--workdir', '', '--json'], { cwd: project });
    expect(result.code).toBe(2);
    expect(result.json.error.code).toBe('WORKDIR_INVALID');
    expect(result.json.error.message).toContain('--workdir is empty');
    expect(projectEntries()).toEqual(before);
  });

  it('refuses an empty MLX_STORAGE_PR_WORKDIR instead of using the project folder', async () => {
    const before = projectEntries();
    const result = await runCli(['apply', '--mlx-repo', upstream.dir, '--json'], {
      cwd: project,
      env: { MLX_STORAGE_PR_WORKDIR: '' },
    });
    expect(result.code).toBe(2);
    expect(result.json.error.message).toContain('MLX_STORAGE_PR_WORKDIR is set but empty');
    expect(result.json.error.hint).toContain('unset MLX_STORAGE_PR_WORKDIR');
    expect(projectEntries()).toEqual(before);
  });

  it('refuses an empty --mlx-repo or MLX_REPO instead of fetching from the current folder', async () => {
    // The current folder is a repository with the pinned commit, so an empty source read as "." would work.
    const cwd = makeUpstream().dir;
    const workdir = tempDir();
    for (const [args, env, name] of [
      [['--mlx-repo', ''], {}, '--mlx-repo is empty'],
      [['--mlx-repo', '  '], {}, '--mlx-repo is empty'],
      [[], { MLX_REPO: ' ' }, 'MLX_REPO holds only spaces'],
    ] as const) {
      const result = await runCli(['apply', ...args, '--project', project, '--workdir', workdir, '--json'], {
        cwd,
        env,
      });
      expect(result.code, name).toBe(2);
      expect(result.json.error.code).toBe('SOURCE_INVALID');
      expect(result.json.error.message).toContain(name);
      expect(readdirSync(workdir)).toEqual([]);
    }
  });

  it('refuses the project folder and folders inside it', async () => {
    const before = projectEntries();
    for (const workdir of [project, path.join(project, 'templates'), 'sub/work']) {
      const result = await runCli(['apply', '--mlx-repo', upstream.dir, '--workdir', workdir, '--json'], {
        cwd: project,
      });
      expect(result.code, workdir).toBe(2);
      expect(result.json.error.code).toBe('WORKDIR_INVALID');
      expect(result.json.error.message).toContain('inside the project');
    }
    const viaEnv = await runCli(['status', '--json'], { cwd: project, env: { MLX_STORAGE_PR_WORKDIR: project } });
    expect(viaEnv.code).toBe(2);
    expect(projectEntries()).toEqual(before);
  });

  it('accepts the default .work folder, named or not, and folders outside the project', async () => {
    expect(
      (await runCli(['apply', '--mlx-repo', upstream.dir, '--workdir', path.join(project, '.work')], { cwd: project }))
        .code,
    ).toBe(0);
    expect(existsSync(path.join(project, '.work', 'mlx', '.git'))).toBe(true);
    const outside = tempDir('msp-work-');
    expect((await runCli(['apply', '--mlx-repo', upstream.dir, '--workdir', outside], { cwd: project })).code).toBe(0);
    expect(existsSync(path.join(outside, 'mlx', '.git'))).toBe(true);
  });
});
