/** `reset` prints restore steps that work, and `status` sees an unmerged conflict (issue 23, items 12 and 17). */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { git, makeProject, makeUpstream, runCli, sh } from '../support/repos.js';

let upstream: { dir: string; sha: string };
let project: string;
let checkout: string;
const cli = (...args: string[]) => runCli([...args, '--mlx-repo', upstream.dir], { cwd: project, env: {} });
const SERIES_FILE = 'mlx/backend/metal/storage_view.cpp';

beforeEach(async () => {
  upstream = makeUpstream();
  project = makeProject(upstream.sha);
  checkout = path.join(project, '.work', 'mlx');
  expect((await cli('apply')).code).toBe(0);
});

describe('reset: the printed restore steps', () => {
  it('with an edit of a file the series adds and an untracked file: running exactly the printed commands brings both back', async () => {
    const edited = `${readFileSync(path.join(checkout, SERIES_FILE), 'utf8')}// my edit\n`;
    writeFileSync(path.join(checkout, SERIES_FILE), edited);
    writeFileSync(path.join(checkout, 'notes.txt'), 'my notes\n');
    const reset = await cli('reset', '--json');
    expect(reset.code, reset.stderr).toBe(0);
    // The commands as a person reads them, on stderr.
    const human = reset.stderr;
    const restore: string[] = reset.json.saved.restore;
    expect(restore.length).toBeGreaterThan(0);
    // The untracked file went into the stash, so nothing of it is left in the way.
    expect(existsSync(path.join(checkout, 'notes.txt'))).toBe(false);
    for (const command of restore) expect(human).toContain(command);
    for (const command of restore) {
      try {
        await sh(command, { cwd: project });
      } catch (e) {
        throw new Error(`${command}: ${String((e as { stderr: string }).stderr)} ${git(checkout, 'status')}`);
      }
    }
    expect(readFileSync(path.join(checkout, SERIES_FILE), 'utf8')).toBe(edited);
    expect(readFileSync(path.join(checkout, 'notes.txt'), 'utf8')).toBe('my notes\n');
    expect(git(checkout, 'diff', '--name-only', '--diff-filter=U')).toBe('');
  });
});

describe('status during an unmerged conflict in the checkout', () => {
  it('names the unmerged files and does not call the checkout clean', async () => {
    writeFileSync(path.join(checkout, SERIES_FILE), 'mine\n');
    expect((await cli('reset')).code).toBe(0);
    // A stash applied onto the pinned commit, which lacks the file: a modify/delete conflict.
    await expect(sh(`git -C ${checkout} stash apply`)).rejects.toThrow();
    expect(git(checkout, 'diff', '--name-only', '--diff-filter=U').trim()).toBe(SERIES_FILE);
    const status = await cli('status', '--json');
    expect(status.json.unmerged).toEqual([SERIES_FILE]);
    expect(status.json.state).toBe('unmerged');
    const human = await cli('status');
    expect(human.stdout).not.toContain('clean pinned commit');
    expect(human.stdout).toContain(SERIES_FILE);
    expect(human.stdout).toMatch(/unresolved merge conflicts/);
  });
});
