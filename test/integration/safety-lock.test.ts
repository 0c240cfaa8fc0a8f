/** A stale lock whose pid now belongs to another process (issue 23, item 16); what is not a lock file at its path, and a zombie owner. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { BIN, makeProject, makeUpstream, runCli } from '../support/repos.js';

describe('the workdir lock', () => {
  let other: ChildProcess;
  let upstream: { dir: string; sha: string };
  let project: string;
  const apply = (...args: string[]) =>
    runCli(['apply', '--mlx-repo', upstream.dir, ...args], { cwd: project, env: {} });
  const lock = () => path.join(project, '.work', '.lock');

  beforeAll(async () => {
    // A live process that is not mlx-storage-pr, holding the pid a dead run wrote into its lock.
    other = spawn('sleep', ['60'], { stdio: 'ignore' });
    upstream = makeUpstream();
    project = makeProject(upstream.sha);
    expect((await apply()).code).toBe(0);
  });
  afterAll(() => {
    other.kill();
  });

  it('records the start time of the process that holds it', async () => {
    const seen: string[] = [];
    const result = await runCli(['apply', '--mlx-repo', upstream.dir, '--force'], {
      cwd: project,
      env: {},
      onStderr: () => {
        if (existsSync(lock())) seen.push(readFileSync(lock(), 'utf8'));
      },
    });
    expect(result.code, result.stderr).toBe(0);
    for (const text of seen) expect(JSON.parse(text)).toHaveProperty('processStart');
  });

  it('a lock whose pid now belongs to another program (another start time) is taken over', async () => {
    writeFileSync(
      lock(),
      JSON.stringify({ pid: other.pid, command: 'apply', started: '2020-01-01T00:00:00.000Z', processStart: '1' }),
    );
    const result = await apply('--json');
    expect(result.code, result.stdout).toBe(0);
    expect(existsSync(lock())).toBe(false);
  });

  it('a lock without a start time whose pid runs another program (not node, not mlx-storage-pr) is taken over', async () => {
    writeFileSync(lock(), JSON.stringify({ pid: other.pid, command: 'apply' }));
    const result = await apply('--json');
    expect(result.code, result.stdout).toBe(0);
  });

  it('a lock of a live run is still respected (6)', async () => {
    writeFileSync(lock(), JSON.stringify({ pid: process.pid, command: 'apply' }));
    const result = await apply('--json');
    expect(result.code).toBe(6);
    expect(result.json.error.code).toBe('LOCKED');
    writeFileSync(lock(), '');
  });
});

/** Runs the built CLI; a run still going after `patience` ms is killed and reported as hung. */
function spawnWithin(
  args: string[],
  cwd: string,
  patience = 45_000,
): Promise<{ code: number | null; stdout: string; stderr: string; hung: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let hung = false;
    const timer = setTimeout(() => ((hung = true), child.kill('SIGKILL')), patience);
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (code) => (clearTimeout(timer), resolve({ code, stdout, stderr, hung })));
  });
}

describe('what is at the lock path when it is not a lock file', () => {
  let upstream: { dir: string; sha: string };
  let project: string;
  const lock = () => path.join(project, '.work', '.lock');

  beforeAll(async () => {
    upstream = makeUpstream();
    project = makeProject(upstream.sha);
    expect((await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project, env: {} })).code).toBe(0);
  });
  afterEach(() => rmSync(lock(), { recursive: true, force: true }));

  it.each<[string, () => Promise<unknown>]>([
    ['a folder', () => Promise.resolve(mkdirSync(path.join(lock(), 'inside'), { recursive: true }))],
    ['a FIFO', () => execa('mkfifo', [lock()])],
    ['a symbolic link', () => Promise.resolve(symlinkSync('/dev/null', lock()))],
  ])('%s: a user error naming the path (exit 2), no hang, and it is left in place', async (_what, make) => {
    await make();
    const result = await spawnWithin(['apply', '--mlx-repo', upstream.dir, '--json'], project);
    expect(result.hung, 'the run hung and was killed').toBe(false);
    expect(result.code, result.stderr).toBe(2);
    const error = (JSON.parse(result.stdout) as { error: { code: string; message: string; hint: string } }).error;
    expect(error.code).toBe('WORKDIR_INVALID');
    expect(error.message).toContain(lock());
    expect(error.hint).toContain(lock());
    expect(lstatSync(lock()).isFile()).toBe(false);
  });

  it('status still reports with a FIFO at the lock path (no hang)', async () => {
    await execa('mkfifo', [lock()]);
    const result = await spawnWithin(['status', '--json'], project);
    expect(result.hung, 'the run hung and was killed').toBe(false);
    expect(result.code, result.stderr).not.toBe(70);
  });
});

describe('a lock held by a zombie', () => {
  let upstream: { dir: string; sha: string };
  let project: string;
  let parent: ChildProcess;

  beforeAll(async () => {
    upstream = makeUpstream();
    project = makeProject(upstream.sha);
    expect((await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project, env: {} })).code).toBe(0);
  });
  afterEach(() => parent?.kill());

  it('a process that exited but was never reaped (state Z) is dead: its lock is taken over', async (ctx) => {
    if (!existsSync('/proc/self/stat')) return ctx.skip();
    // `sleep 60` becomes the parent of the exited `sleep 0.2` and never waits for it: a zombie, as under a PID 1 that does not reap.
    parent = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 60'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const zombie = await new Promise<number>((resolve) =>
      parent.stdout?.once('data', (c: Buffer) => resolve(Number(c.toString().trim()))),
    );
    const stateOf = () =>
      readFileSync(`/proc/${zombie}/stat`, 'utf8')
        .replace(/^.*\) /s, '')
        .split(' ')[0];
    for (let waited = 0; stateOf() !== 'Z'; waited += 20) {
      if (waited > 20_000) throw new Error(`process ${zombie} never became a zombie`);
      await new Promise((r) => setTimeout(r, 20));
    }
    const start = readFileSync(`/proc/${zombie}/stat`, 'utf8')
      .replace(/^.*\) /s, '')
      .split(' ')[19];
    writeFileSync(
      path.join(project, '.work', '.lock'),
      JSON.stringify({ pid: zombie, command: 'apply', started: new Date().toISOString(), processStart: start }),
    );
    const result = await runCli(['apply', '--mlx-repo', upstream.dir, '--json'], { cwd: project, env: {} });
    expect(result.code, result.stdout).toBe(0);
  });
});
