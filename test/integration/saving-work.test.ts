import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { createLogger } from '../../src/adapters/log.js';
import { Git } from '../../src/adapters/git.js';
import { ProcessError } from '../../src/adapters/process-error.js';
import { git, makeProject, makeUpstream, runCli, sh, snapshot } from '../support/repos.js';

let upstream: { dir: string; sha: string };
let project: string;
let checkout: string;

const apply = (...extra: string[]) => runCli(['apply', '--mlx-repo', upstream.dir, ...extra], { cwd: project });
const inCheckout = (file: string) => path.join(checkout, file);
const read = (file: string) => readFileSync(inCheckout(file), 'utf8');
const TEMPLATE = path.join('templates', 'mlx', 'backend', 'metal', 'storage_view.cpp');
const SOURCE = 'mlx/backend/metal/storage_view.cpp';

beforeEach(() => {
  upstream = makeUpstream();
  project = makeProject(upstream.sha);
  checkout = path.join(project, '.work', 'mlx');
});

/** Changes the first line of the source template, so `apply` rewrites SOURCE. */
function changeTemplate() {
  const file = path.join(project, TEMPLATE);
  writeFileSync(file, readFileSync(file, 'utf8').replace('Apple Inc.', 'Apple Inc. All rights reserved.'));
}

describe('apply --force', () => {
  it('saves only the files apply changes, leaves other edits in place, and its restore command brings them back', async () => {
    expect((await apply()).code).toBe(0);
    writeFileSync(inCheckout(SOURCE), `${read(SOURCE)}// my note\n`);
    writeFileSync(
      inCheckout('mlx/backend/metal/no_metal.cpp'),
      `${read('mlx/backend/metal/no_metal.cpp')}// unrelated edit\n`,
    );
    writeFileSync(inCheckout('notes.txt'), 'my notes\n');
    changeTemplate();

    const result = await apply('--force', '--json');
    expect(result.code, result.stderr).toBe(0);
    const saved = result.json.saved as { stash: string; files: string[]; untracked: string[]; restore: string[] };
    expect(saved.files).toEqual([SOURCE]);
    expect(saved.untracked).toEqual([]);
    expect(
      git(checkout, 'stash', 'show', '--include-untracked', '--name-only', saved.stash).trim().split('\n'),
    ).toEqual([SOURCE]);
    expect(result.stderr).toContain(`saved your uncommitted changes to 1 file apply changes: ${SOURCE}`);
    expect(result.stderr).toContain('Other uncommitted changes were left in place');

    // The applied series is in place; the unrelated edit and the untracked file were never touched.
    expect(read(SOURCE)).toContain('All rights reserved.');
    expect(read(SOURCE)).not.toContain('// my note');
    expect(read('mlx/backend/metal/no_metal.cpp')).toContain('// unrelated edit');
    expect(read('notes.txt')).toBe('my notes\n');

    for (const command of saved.restore) await sh(command);
    expect(read(SOURCE)).toContain('All rights reserved.');
    expect(read(SOURCE)).toContain('// my note');
    expect(git(checkout, 'status', '--porcelain').split('\n').filter(Boolean).sort()).toEqual([
      ' M mlx/backend/metal/no_metal.cpp',
      ` M ${SOURCE}`,
      '?? notes.txt',
    ]);
  });

  it('saves an untracked file where a template goes and says how to read it back', async () => {
    expect((await apply()).code).toBe(0);
    expect((await runCli(['reset'], { cwd: project })).code).toBe(0);
    writeFileSync(inCheckout(SOURCE), '// mine\n');
    const result = await apply('--force', '--json');
    expect(result.code, result.stderr).toBe(0);
    const saved = result.json.saved as { stash: string; files: string[]; untracked: string[]; restore: string[] };
    expect(saved.untracked).toEqual([SOURCE]);
    const show = saved.restore.find((c) => c.includes(' show '));
    expect(show).toBe(`git -C ${checkout} show ${saved.stash}^3:${SOURCE}`);
    expect(await sh(show as string)).toBe('// mine\n');
  });

  it("stops with git's reason, changing nothing, when the stash cannot be made", async () => {
    expect((await apply()).code).toBe(0);
    writeFileSync(inCheckout(SOURCE), `${read(SOURCE)}// my note\n`);
    changeTemplate();
    // Another git process seems to be running: git stash cannot take the index lock.
    writeFileSync(path.join(checkout, '.git', 'index.lock'), '');
    const before = snapshot(checkout);
    const result = await apply('--force', '--json');
    expect(result.code, result.stderr).toBe(3);
    expect(result.json.error.code).toBe('SAVE_FAILED');
    expect(result.json.error.message).toContain('index.lock');
    expect(result.json.error.hint).toContain('Nothing was changed');
    expect(snapshot(checkout)).toBe(before);
    expect(read(SOURCE)).toContain('// my note');
  });
});

describe('an unmerged index', () => {
  /** The state the printed restore command leaves when the saved edit conflicts with the new series. */
  async function conflictedRestore(): Promise<void> {
    expect((await apply()).code).toBe(0);
    writeFileSync(inCheckout('docs/src/dev/extensions.rst'), 'my own words\n');
    const patch = path.join(project, 'patches', '0002-docs.patch');
    writeFileSync(patch, readFileSync(patch, 'utf8').replace('+Keep the view', '+Always keep the view'));
    const forced = await apply('--force', '--json');
    expect(forced.code, forced.stderr).toBe(0);
    await expect(sh(forced.json.saved.restore[0])).rejects.toThrow();
    expect(git(checkout, 'status', '--porcelain')).toContain('UU docs/src/dev/extensions.rst');
  }

  it('makes reset stop with what to do, changing nothing', async () => {
    await conflictedRestore();
    const before = snapshot(checkout);
    const stashes = git(checkout, 'stash', 'list');
    const result = await runCli(['reset', '--json'], { cwd: project });
    expect(result.code).toBe(3);
    expect(result.json.error.code).toBe('UNMERGED_INDEX');
    expect(result.json.error.message).toContain('docs/src/dev/extensions.rst');
    expect(result.json.error.hint).toContain(`git -C ${checkout} add <file>`);
    expect(result.json.error.hint).toContain(`git -C ${checkout} reset --merge`);
    expect(snapshot(checkout)).toBe(before);
    expect(git(checkout, 'stash', 'list')).toBe(stashes);
  });

  it('makes apply and apply --force stop with what to do, changing nothing', async () => {
    await conflictedRestore();
    changeTemplate();
    const before = snapshot(checkout);
    for (const extra of [[], ['--force']]) {
      const result = await apply(...extra, '--json');
      expect(result.code, extra.join(' ')).toBe(3);
      expect(result.json.error.code).toBe('UNMERGED_INDEX');
      expect(snapshot(checkout)).toBe(before);
    }
  });

  it('once resolved, reset saves the resolution and returns to the pinned commit', async () => {
    await conflictedRestore();
    writeFileSync(inCheckout('docs/src/dev/extensions.rst'), 'resolved\n');
    git(checkout, 'add', 'docs/src/dev/extensions.rst');
    const result = await runCli(['reset', '--json'], { cwd: project });
    expect(result.code, result.stderr).toBe(0);
    expect(git(checkout, 'show', `${result.json.saved.stash}:docs/src/dev/extensions.rst`)).toBe('resolved\n');
  });
});

describe('git adapter', () => {
  it('treats a non-zero exit as a failure even when git prints only to stdout', async () => {
    const dir = makeUpstream().dir;
    writeFileSync(path.join(dir, 'docs/src/dev/extensions.rst'), 'stashed\n');
    git(dir, 'stash', 'push', '--quiet');
    writeFileSync(path.join(dir, 'docs/src/dev/extensions.rst'), 'committed\n');
    git(dir, 'commit', '--quiet', '-am', 'other');
    expect(() => git(dir, 'stash', 'apply', '--quiet')).toThrow();
    // `git stash push` now prints "needs merge" on stdout and exits 1.
    const adapter = new Git(dir, createLogger({ stream: process.stderr }), process.env);
    await expect(adapter.raw(['stash', 'push', '--quiet', '-m', 'x'])).rejects.toBeInstanceOf(ProcessError);
    await expect(adapter.raw(['stash', 'push', '--quiet', '-m', 'x'])).rejects.toThrow(/needs merge/);
  });
});
