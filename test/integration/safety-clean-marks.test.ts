/**
 * `clean` removes only what the tool marked as made by it, and `clean --all`
 * refuses while the checkout holds work through any ref, linked worktree or
 * ignored file (issue 37, "Deleting what is not the tool's").
 */
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { git, makeProject, makeUpstream, runCli, tempDir } from '../support/repos.js';

let upstream: { dir: string; sha: string };
let project: string;
let workdir: string;
let checkout: string;

const cli = (...args: string[]) =>
  runCli([...args, '--mlx-repo', upstream.dir, '--workdir', workdir], { cwd: project });

function file(relative: string, text = 'mine\n') {
  const full = path.join(workdir, relative);
  mkdirSync(path.dirname(full), { recursive: true });
  writeFileSync(full, text);
}

/** Folders and files with the names of the tool's items, made by the user. */
const LOOK_ALIKES = [
  'build-mine/CMakeCache.txt',
  'check/notes.txt',
  'baseline/data.csv',
  'mutants/list.txt',
  'without-implementation/a.txt',
  'check-metal/a.txt',
  'mlx.partial-123/a.txt',
  'metal-cpp/Metal/Metal.hpp',
];

function lookAlikes() {
  for (const f of LOOK_ALIKES) file(f);
}

const allThere = () => LOOK_ALIKES.every((f) => existsSync(path.join(workdir, f)));

beforeEach(() => {
  upstream = makeUpstream();
  project = makeProject(upstream.sha);
  workdir = tempDir('msp-work-');
  checkout = path.join(workdir, 'mlx');
});

describe('clean removes only what the tool made', () => {
  it('in a folder of yours, removes none of the look-alikes (with --all neither source.json nor mlx/) and lists them', async () => {
    lookAlikes();
    file('source.json', '{"source": "/home/me/mlx"}\n');
    mkdirSync(checkout);
    git(checkout, 'init', '--quiet');
    writeFileSync(path.join(checkout, 'mine.txt'), 'my clone\n');
    for (const args of [['clean'], ['clean', '--all'], ['clean', '--dry-run'], ['clean', '--all', '--dry-run']]) {
      const result = await cli(...args, '--json');
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      expect(result.json.remove).toEqual([]);
      const notMade = (result.json.notMade as Array<{ name: string }>).map((e) => e.name);
      expect(notMade).toEqual(
        expect.arrayContaining(['build-mine', 'check', 'baseline', 'mutants', 'mlx.partial-123']),
      );
      // What only --all would remove is named only with --all.
      expect(notMade.includes('metal-cpp')).toBe(args.includes('--all'));
      if (args.includes('--all')) expect(notMade).toEqual(expect.arrayContaining(['mlx', 'source.json']));
      expect(allThere()).toBe(true);
      expect(existsSync(path.join(workdir, 'source.json'))).toBe(true);
      expect(existsSync(path.join(checkout, 'mine.txt'))).toBe(true);
    }
    const human = await cli('clean', '--all');
    expect(human.stdout).toMatch(/not made by mlx-storage-pr, left alone/);
    expect(human.stdout).toContain('build-mine/');
  });

  it('in an applied workdir, removes what the tool made and leaves your look-alikes beside it', async () => {
    expect((await cli('apply')).code).toBe(0);
    // A real item of the tool: check's repository.
    const checked = await cli('check', '--against', upstream.sha);
    expect(checked.code, checked.stderr).toBe(0);
    expect(existsSync(path.join(workdir, 'check'))).toBe(true);
    file('build-mine/CMakeCache.txt');
    file('baseline/data.csv');
    file('metal-cpp/Metal/Metal.hpp');
    const result = await cli('clean', '--json');
    expect(result.code, result.stderr).toBe(0);
    expect(result.json.remove.map((e: { name: string }) => e.name)).toEqual(['check']);
    expect(readdirSync(workdir).sort()).toEqual(['baseline', 'build-mine', 'metal-cpp', 'mlx', 'source.json']);

    const all = await cli('clean', '--all', '--json');
    expect(all.code, all.stderr).toBe(0);
    expect(all.json.remove.map((e: { name: string }) => e.name).sort()).toEqual(['mlx', 'source.json']);
    expect(readdirSync(workdir).sort()).toEqual(['baseline', 'build-mine', 'metal-cpp']);
  });
});

describe('clean --all refuses while the checkout holds work through any ref, linked worktree or ignored file', () => {
  beforeEach(async () => {
    expect((await cli('apply')).code).toBe(0);
  });

  it('a commit of yours reachable only from a tag, or a note: refused, listed, nothing removed', async () => {
    git(checkout, 'checkout', '--quiet', '--detach');
    git(checkout, 'commit', '--quiet', '--allow-empty', '-m', 'mine');
    git(checkout, 'tag', 'my-tag');
    const mine = git(checkout, 'rev-parse', 'HEAD').trim();
    git(checkout, 'checkout', '--quiet', 'mlx-storage-pr');
    for (const args of [
      ['clean', '--all'],
      ['clean', '--all', '--dry-run'],
    ]) {
      const result = await cli(...args, '--json');
      expect(result.code, result.stdout).toBe(3);
      expect(result.json.error.code).toBe('CHECKOUT_HAS_WORK');
      expect(result.json.error.message).toContain(`refs/tags/my-tag (${mine.slice(0, 12)})`);
      expect(git(checkout, 'rev-parse', 'my-tag').trim()).toBe(mine);
    }
    git(checkout, 'tag', '-d', 'my-tag');
    git(checkout, 'notes', 'add', '-m', 'my note', 'HEAD');
    const noted = await cli('clean', '--all', '--json');
    expect(noted.code).toBe(3);
    expect(noted.json.error.message).toContain('refs/notes/commits');
    expect(existsSync(checkout)).toBe(true);
  });

  it('a linked worktree outside the workdir, with a commit and edits of yours: refused, listed, the worktree intact', async () => {
    const outside = path.join(tempDir('msp-outside-'), 'wt');
    git(checkout, 'worktree', 'add', '--quiet', '--detach', outside, 'HEAD');
    git(outside, 'commit', '--quiet', '--allow-empty', '-m', 'mine');
    const mine = git(outside, 'rev-parse', 'HEAD').trim();
    writeFileSync(path.join(outside, 'new-file.txt'), 'untracked\n');
    for (const args of [
      ['clean', '--all'],
      ['clean', '--all', '--dry-run'],
    ]) {
      const result = await cli(...args, '--json');
      expect(result.code, result.stdout).toBe(3);
      const message = result.json.error.message as string;
      expect(message).toContain(`a worktree of the checkout at ${outside}`);
      expect(message).toContain(mine.slice(0, 12));
      expect(message).toContain('new-file.txt');
    }
    expect(git(outside, 'rev-parse', 'HEAD').trim()).toBe(mine);
    expect(git(outside, 'status', '--porcelain')).toContain('new-file.txt');
  });

  it('a linked worktree with only an uncommitted edit on the pinned commit: refused', async () => {
    const outside = path.join(tempDir('msp-outside-'), 'wt');
    git(checkout, 'worktree', 'add', '--quiet', '--detach', outside, upstream.sha);
    const tracked = git(outside, 'ls-files').split('\n')[0] as string;
    writeFileSync(path.join(outside, tracked), 'my edit\n');
    const result = await cli('clean', '--all', '--json');
    expect(result.code).toBe(3);
    expect(result.json.error.message).toContain(tracked);
    expect(existsSync(checkout)).toBe(true);
  });

  it('--dry-run shows the same decisions: the work that makes it refuse, what it would remove, what it leaves alone', async () => {
    git(checkout, 'tag', 'my-tag', 'HEAD');
    git(checkout, 'commit', '--quiet', '--allow-empty', '-m', 'mine');
    git(checkout, 'reset', '--quiet', '--hard', 'HEAD~1');
    git(checkout, 'tag', '-f', 'my-tag', 'HEAD@{1}');
    file('build-mine/CMakeCache.txt');
    const result = await cli('clean', '--all', '--dry-run');
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('refs/tags/my-tag');
    expect(result.stderr).toMatch(/would remove:[\s\S]*mlx\/[\s\S]*source\.json /);
    expect(result.stderr).toContain('Not made by mlx-storage-pr, left alone: build-mine/');
    const json = await cli('clean', '--all', '--dry-run', '--json');
    expect(json.json.error.details.notMade).toEqual([{ name: 'build-mine', what: 'build folder' }]);
    expect(existsSync(path.join(workdir, 'build-mine'))).toBe(true);
  });

  it('ignored files under the checkout: listed, and refused', async () => {
    writeFileSync(path.join(checkout, '.git', 'info', 'exclude'), '*.local\n');
    writeFileSync(path.join(checkout, 'my-settings.local'), 'mine\n');
    for (const args of [
      ['clean', '--all'],
      ['clean', '--all', '--dry-run'],
    ]) {
      const result = await cli(...args, '--json');
      expect(result.code, result.stdout).toBe(3);
      expect(result.json.error.message).toContain('ignored files: my-settings.local');
    }
    expect(existsSync(path.join(checkout, 'my-settings.local'))).toBe(true);
  });

  it("the tool's own worktree in a workdir named through a link (as macOS's /tmp is) is no worktree of yours", async () => {
    const link = path.join(tempDir('msp-link-'), 'work');
    symlinkSync(workdir, link);
    workdir = link;
    // As test makes the baseline: a marked folder, then a worktree of the checkout in it.
    file('baseline/.mlx-storage-pr');
    git(checkout, 'worktree', 'add', '--quiet', '--detach', path.join(link, 'baseline', 'mlx'), upstream.sha);
    const result = await cli('clean', '--all', '--json');
    expect(result.code, result.stdout).toBe(0);
    expect(existsSync(checkout)).toBe(false);
  });

  it('a tag on a commit of upstream (the pinned one) is no work of yours: removed', async () => {
    git(checkout, 'tag', 'v-upstream', upstream.sha);
    const result = await cli('clean', '--all', '--json');
    expect(result.code, result.stdout).toBe(0);
    expect(existsSync(checkout)).toBe(false);
  });
});
