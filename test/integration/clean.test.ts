import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { git, makeProject, makeUpstream, runCli, snapshot, tempDir } from '../support/repos.js';

let upstream: { dir: string; sha: string };
let project: string;
let workdir: string;
let checkout: string;

const cli = (...args: string[]) =>
  runCli([...args, '--mlx-repo', upstream.dir, '--workdir', workdir], { cwd: project });
const MB = 1024 * 1024;

function file(relative: string, bytes: number) {
  const full = path.join(workdir, relative);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, Buffer.alloc(bytes, 7));
}

/** What `test`, `verify` and `check-metal` leave in a workdir, with a real baseline worktree. */
async function grownWorkdir() {
  expect((await cli('apply')).code).toBe(0);
  git(checkout, 'worktree', 'add', '--quiet', '--detach', path.join(workdir, 'baseline', 'mlx'), upstream.sha);
  file('build-release-0123456789/lib/libmlx.a', 2 * MB);
  file('build-debug-abcdef0123/lib/libmlx.a', MB);
  file('baseline/build-release-0123456789/tests/tests', MB);
  file(`baseline/results-${upstream.sha.slice(0, 12)}-release-0123456789.json`, 100);
  file('without-implementation/build-release-0123456789/tests/tests', MB);
  file('check-metal/logs/storage_view.cpp.log', 1000);
  file('mutants/build-release-0123456789/tests/tests', MB);
  file('check/mlx.git/HEAD', 20);
  file('mlx.partial-999999/.git/HEAD', 20);
  file('metal-cpp/metal-cpp_26.zip', MB);
  file('my-notes/keep.txt', 10);
  // Each written with the mark the tool writes into what it makes.
  for (const made of [
    'build-release-0123456789',
    'build-debug-abcdef0123',
    'baseline',
    'without-implementation',
    'check-metal',
    'mutants',
    'check',
    'mlx.partial-999999/.git',
    'metal-cpp',
  ])
    writeFileSync(path.join(workdir, made, '.mlx-storage-pr'), 'Made by mlx-storage-pr\n');
}

beforeEach(() => {
  upstream = makeUpstream();
  project = makeProject(upstream.sha);
  workdir = tempDir('msp-work-');
  checkout = path.join(workdir, 'mlx');
});

describe('clean', () => {
  it('--dry-run lists build folders, baselines and leftovers with their sizes and removes nothing', async () => {
    await grownWorkdir();
    const before = readdirSync(workdir, { recursive: true }).length;
    const result = await cli('clean', '--dry-run', '--json');
    expect(result.code, result.stderr).toBe(0);
    const listed = Object.fromEntries(
      (result.json.remove as Array<{ name: string; bytes: number }>).map((e) => [e.name, e.bytes]),
    );
    expect(Object.keys(listed).sort()).toEqual([
      'baseline',
      'build-debug-abcdef0123',
      'build-release-0123456789',
      'check',
      'check-metal',
      'mlx.partial-999999',
      'mutants',
      'without-implementation',
    ]);
    expect(listed['build-release-0123456789']).toBeGreaterThanOrEqual(2 * MB);
    expect(listed['baseline']).toBeGreaterThanOrEqual(MB);
    expect(result.json.bytes).toBe(Object.values(listed).reduce((a, b) => a + b, 0));
    expect(result.json.removed).toBe(false);
    expect(result.json.keep.map((e: { name: string }) => e.name).sort()).toEqual(['metal-cpp', 'mlx', 'source.json']);
    expect(readdirSync(workdir, { recursive: true }).length).toBe(before);

    const human = await cli('clean', '--dry-run');
    expect(human.stdout).toMatch(/Would remove from .*:\n/);
    expect(human.stdout).toMatch(/ 2\.0 MB {2}build-release-0123456789\/ {2}build folder/);
    expect(human.stdout).toMatch(/^kept: .*mlx\/ \(the MLX checkout; --all removes it\)/m);
  });

  it('removes them, keeps the checkout untouched, and prunes the baseline worktree', async () => {
    await grownWorkdir();
    writeFileSync(path.join(checkout, 'mlx/backend/metal/storage_view.h'), '// my uncommitted edit\n');
    const before = snapshot(checkout);
    const result = await cli('clean', '--json');
    expect(result.code, result.stderr).toBe(0);
    expect(result.json.removed).toBe(true);
    expect(readdirSync(workdir).sort()).toEqual(['metal-cpp', 'mlx', 'my-notes', 'source.json']);
    expect(snapshot(checkout)).toBe(before);
    expect(git(checkout, 'worktree', 'list', '--porcelain')).not.toContain('baseline');
    expect((await cli('status', '--json')).json.state).toBe('applied');
  });

  it('--all also removes the checkout and downloads when they hold none of your work', async () => {
    await grownWorkdir();
    const result = await cli('clean', '--all', '--json');
    expect(result.code, result.stderr).toBe(0);
    expect(readdirSync(workdir)).toEqual(['my-notes']);
    expect((await cli('apply', '--json')).json.status).toBe('applied');
  });

  it('--all refuses, removing nothing, while the checkout holds uncommitted edits, saved stashes or your commits', async () => {
    await grownWorkdir();
    const entries = () => readdirSync(workdir).sort();
    const all = entries();

    writeFileSync(path.join(checkout, 'mlx/backend/metal/storage_view.h'), '// mine\n');
    const dirty = await cli('clean', '--all', '--json');
    expect(dirty.code).toBe(3);
    expect(dirty.json.error.code).toBe('CHECKOUT_HAS_WORK');
    expect(dirty.json.error.message).toContain('uncommitted changes: mlx/backend/metal/storage_view.h');
    expect(entries()).toEqual(all);

    expect((await cli('reset')).code).toBe(0);
    const stashed = await cli('clean', '--all', '--json');
    expect(stashed.code).toBe(3);
    expect(stashed.json.error.message).toMatch(/1 stash entry/);
    expect(stashed.json.error.message).toContain('refs/mlx-storage-pr/backup/');
    expect(entries()).toEqual(all);

    git(checkout, 'stash', 'drop', '--quiet');
    for (const ref of git(checkout, 'for-each-ref', '--format=%(refname)', 'refs/mlx-storage-pr/')
      .split('\n')
      .filter(Boolean))
      git(checkout, 'update-ref', '-d', ref);
    git(checkout, 'checkout', '--quiet', '-b', 'my-work');
    git(checkout, 'commit', '--quiet', '--allow-empty', '-m', 'mine');
    const branch = await cli('clean', '--all', '--json');
    expect(branch.code).toBe(3);
    expect(branch.json.error.message).toContain('my-work');
    expect(entries()).toEqual(all);

    // Without --all the same checkout is no obstacle.
    expect((await cli('clean')).code).toBe(0);
    expect(entries()).toEqual(['metal-cpp', 'mlx', 'my-notes', 'source.json']);
  });

  it('says there is nothing to clean and creates no workdir', async () => {
    workdir = path.join(tempDir(), 'never-made');
    const result = await cli('clean');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Nothing to clean');
    expect(existsSync(workdir)).toBe(false);
  });
});
