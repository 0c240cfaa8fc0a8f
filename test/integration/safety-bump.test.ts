/** `bump --abort` keeps the work done during the bump (issue 23, item 2). */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { makeExportProject, makeExportUpstream, projectFiles } from '../support/export-fixtures.js';
import { git, runCli, sh } from '../support/repos.js';

let upstream: { dir: string; sha: string };
let project: string;
let worktree: string;

const cli = (...args: string[]) => runCli([...args, '--mlx-repo', upstream.dir], { cwd: project });
const NO_METAL = 'mlx/backend/metal/no_metal.cpp';

function commitUpstream(edits: Record<string, (text: string) => string>): string {
  for (const [file, edit] of Object.entries(edits)) {
    const full = path.join(upstream.dir, file);
    writeFileSync(full, edit(readFileSync(full, 'utf8')));
  }
  git(upstream.dir, 'commit', '--quiet', '-am', 'upstream change');
  return git(upstream.dir, 'rev-parse', 'HEAD').trim();
}

beforeEach(async () => {
  upstream = makeExportUpstream();
  project = makeExportProject(upstream.sha);
  worktree = path.join(project, '.work', 'bump', 'mlx');
  expect((await cli('apply')).code).toBe(0);
  commitUpstream({
    'mlx/version.h': (t) =>
      t
        .replace(/MLX_VERSION_MINOR \d+/, 'MLX_VERSION_MINOR 33')
        .replace(/MLX_VERSION_PATCH \d+/, 'MLX_VERSION_PATCH 0'),
    [NO_METAL]: (t) =>
      t.replace('without metal backend");\n}\n\n', 'without metal backend");\n}\n\nvoid reset_peak_memory() {}\n\n'),
  });
  expect((await cli('bump', '--to', 'main')).code).toBe(4);
});

describe('bump --abort after work in the bump', () => {
  it('keeps the resolutions, the export and a later edit, says so, and the printed commands bring them back', async () => {
    const conflicted = readFileSync(path.join(worktree, NO_METAL), 'utf8');
    const resolved = conflicted.replace(/<<<<<<< .*\n([\s\S]*?)=======\n([\s\S]*?)>>>>>>> .*\n/, '$1$2');
    writeFileSync(path.join(worktree, NO_METAL), resolved);
    expect((await cli('export')).code).toBe(0);
    const exported = projectFiles(project);
    const later = `${resolved}// one more edit\n`;
    writeFileSync(path.join(worktree, NO_METAL), later);

    const aborted = await cli('bump', '--abort', '--json');
    expect(aborted.code, aborted.stderr).toBe(0);
    expect(existsSync(worktree)).toBe(false);
    const saved = aborted.json.saved;
    expect(saved.worktree.ref).toMatch(/^refs\/mlx-storage-pr\/backup\//);
    expect(saved.project.folder).toContain(path.join(project, '.work'));

    const human = aborted.stderr;
    expect(human).toContain(saved.worktree.ref);
    expect(human).toContain(saved.worktree.restore[0]);
    expect(human).toContain(saved.project.restore[0]);

    for (const command of [...saved.worktree.restore, ...saved.project.restore]) await sh(command, { cwd: project });
    const folder = /worktree add --detach (\S+)/.exec(saved.worktree.restore[0])?.[1] as string;
    expect(readFileSync(path.join(folder, NO_METAL), 'utf8')).toBe(later);
    expect(projectFiles(project)).toEqual(exported);
  });

  it('keeps nothing when nothing was done during the bump', async () => {
    const aborted = await cli('bump', '--abort', '--json');
    expect(aborted.code, aborted.stderr).toBe(0);
    expect(aborted.json.saved).toEqual({ worktree: null, project: null });
    expect(git(path.join(project, '.work', 'mlx'), 'for-each-ref', 'refs/mlx-storage-pr/backup/')).toBe('');
  });
});
