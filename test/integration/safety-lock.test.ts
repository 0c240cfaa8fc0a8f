/** A stale lock whose pid now belongs to another process (issue 23, item 16). */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeProject, makeUpstream, runCli } from '../support/repos.js';

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
