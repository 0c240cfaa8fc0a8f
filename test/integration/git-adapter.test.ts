import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { ifAbsent } from '../../src/adapters/files.js';
import { Git } from '../../src/adapters/git.js';
import { createLogger } from '../../src/adapters/log.js';
import { ProcessError } from '../../src/adapters/process-error.js';
import { git, makeProject, makeUpstream, runCli, tempDir } from '../support/repos.js';

const log = createLogger({ stream: process.stderr });
const open = (dir: string) => new Git(dir, log, process.env);

function repoWithCommit(): { dir: string; sha: string } {
  const dir = tempDir('msp-git-');
  git(dir, 'init', '--quiet', '--initial-branch=main');
  git(dir, 'commit', '--quiet', '--allow-empty', '-m', 'one');
  return { dir, sha: git(dir, 'rev-parse', 'HEAD').trim() };
}

describe('git adapter: absent answers and failures', () => {
  it('reports an empty repository as no HEAD, no commit and its unborn branch', async () => {
    const dir = tempDir('msp-git-');
    git(dir, 'init', '--quiet', '--initial-branch=main');
    const repo = open(dir);
    expect(await repo.headInfo()).toBeNull();
    expect(await repo.head()).toBeNull();
    expect(await repo.hasCommit('0123456789abcdef0123456789abcdef01234567')).toBe(false);
    expect(await repo.currentBranch()).toBe('main');
  });

  it("reads the branch's commit from git's files only when they say it plainly", async () => {
    const { dir, sha } = repoWithCommit();
    expect(await open(dir).branchTipFromFiles()).toBe(sha);
    // A packed ref has no file of its own; a detached HEAD names no branch: git is asked then.
    git(dir, 'pack-refs', '--all');
    expect(await open(dir).branchTipFromFiles()).toBeNull();
    git(dir, 'checkout', '--quiet', '--detach', sha);
    expect(await open(dir).branchTipFromFiles()).toBeNull();
    expect(await open(tempDir('msp-git-')).branchTipFromFiles()).toBeNull();
  });

  it('reports a detached HEAD as no current branch', async () => {
    const { dir, sha } = repoWithCommit();
    git(dir, 'checkout', '--quiet', '--detach', sha);
    expect(await open(dir).currentBranch()).toBeNull();
  });

  it('answers hasCommit with false for a tree id, which git rejects with exit 1 and a message', async () => {
    const { dir, sha } = repoWithCommit();
    expect(await open(dir).hasCommit(sha)).toBe(true);
    expect(await open(dir).hasCommit(git(dir, 'rev-parse', 'HEAD^{tree}').trim())).toBe(false);
  });

  it('throws a ProcessError with the command, exit code and stderr when HEAD names a missing commit, instead of calling the repository empty', async () => {
    const { dir, sha } = repoWithCommit();
    rmSync(path.join(dir, '.git', 'objects', sha.slice(0, 2), sha.slice(2)));
    const failure = await open(dir)
      .headInfo()
      .then(
        () => null,
        (error: unknown) => error,
      );
    expect(failure).toBeInstanceOf(ProcessError);
    const error = failure as ProcessError;
    expect(error.command.slice(0, 3)).toEqual(['git', 'log', '-1']);
    expect(error.exitCode).toBe(128);
    expect(error.stderr).toMatch(/bad object HEAD/);
    expect(error.message).toMatch(/^git log .* failed \(exit code 128\): fatal: bad object HEAD/);
  });

  it('throws a ProcessError outside a repository instead of answering "absent"', async () => {
    const dir = path.join(tempDir('msp-git-'), 'plain');
    mkdirSync(dir);
    const repo = new Git(dir, log, { ...process.env, GIT_CEILING_DIRECTORIES: path.dirname(dir) });
    for (const ask of [
      () => repo.head(),
      () => repo.hasCommit('HEAD'),
      () => repo.currentBranch(),
      () => repo.headInfo(),
    ]) {
      await expect(ask()).rejects.toMatchObject({
        name: 'ProcessError',
        exitCode: 128,
        stderr: expect.stringMatching(/not a git repository/),
      });
    }
  });
});

describe('git adapter: fileAt', () => {
  it('reads a file of a commit, answers null for a path the commit lacks, and throws for a commit that does not exist', async () => {
    const dir = tempDir('msp-git-');
    git(dir, 'init', '--quiet', '--initial-branch=main');
    writeFileSync(path.join(dir, 'a.txt'), 'one\n');
    git(dir, 'add', 'a.txt');
    git(dir, 'commit', '--quiet', '-m', 'one');
    writeFileSync(path.join(dir, 'untracked.txt'), 'x\n');
    const repo = open(dir);
    expect(await repo.fileAt('HEAD', 'a.txt')).toBe('one\n');
    expect(await repo.fileAt('HEAD', 'missing.txt')).toBeNull();
    expect(await repo.fileAt('HEAD', 'untracked.txt')).toBeNull();
    await expect(repo.fileAt('0123456789abcdef0123456789abcdef01234567', 'a.txt')).rejects.toBeInstanceOf(ProcessError);
  });
});

describe('ifAbsent', () => {
  it('gives the fallback only for a missing path and throws any other file-system error', async () => {
    const dir = tempDir('msp-files-');
    expect(await ifAbsent(readFile(path.join(dir, 'missing'), 'utf8'), 'none')).toBe('none');
    writeFileSync(path.join(dir, 'file'), 'text');
    expect(await ifAbsent(readFile(path.join(dir, 'file', 'below'), 'utf8'), 'none')).toBe('none');
    await expect(ifAbsent(readFile(dir, 'utf8'), 'none')).rejects.toMatchObject({ code: 'EISDIR' });
  });
});

describe('a git failure nobody turned into a precise error', () => {
  it('reaches the user as PROCESS_FAILED (exit 1) with the git command, its exit code and what git said', async () => {
    const upstream = makeUpstream();
    const project = makeProject(upstream.sha);
    expect((await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project })).code).toBe(0);
    // The commit apply made is a loose object; without it HEAD names a missing commit.
    const checkout = path.join(project, '.work', 'mlx');
    const head = git(checkout, 'rev-parse', 'HEAD').trim();
    rmSync(path.join(checkout, '.git', 'objects', head.slice(0, 2), head.slice(2)));
    for (const command of ['status', 'apply']) {
      const result = await runCli([command, '--mlx-repo', upstream.dir, '--json'], { cwd: project });
      expect(result.code).toBe(1);
      expect(result.json.error.code).toBe('PROCESS_FAILED');
      expect(result.json.error.details.command.slice(0, 2)).toEqual(['git', 'log']);
      expect(result.json.error.details.exitCode).toBe(128);
      expect(result.json.error.details.stderr).toMatch(/bad object HEAD/);
      expect(result.stderr).toMatch(/hint: Run `git log /);
    }
  });
});
