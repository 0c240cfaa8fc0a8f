import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { BIN, git, makeProject, makeUpstream, runCli, tempDir } from '../support/repos.js';

let upstream: { dir: string; sha: string };
let project: string;
let workdir: string;
let server: Server;
let url: string;
const sockets: Socket[] = [];

beforeEach(async () => {
  upstream = makeUpstream();
  project = makeProject(upstream.sha);
  workdir = tempDir('msp-work-');
  // An MLX source that accepts the connection and never answers: the fetch hangs until interrupted.
  server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mlx.git`;
});

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 25) {
    if (waited > 20_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function start(
  args: string[],
  detached: boolean,
): {
  child: ChildProcess;
  done: Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>;
} {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: project, detached, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const done = new Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
  return { child, done };
}

const leftovers = () => readdirSync(workdir).filter((e) => e === '.lock' || e.startsWith('mlx.partial-'));

describe('Ctrl-C', () => {
  it.each([
    ['to the tool only (kill -INT <pid>)', false],
    ['to the whole process group, as a terminal sends it', true],
  ])('during the fetch, sent %s: says what stopped, cleans up and exits 130', async (_name, group) => {
    const run = start(['apply', '--mlx-repo', url, '--workdir', workdir], group);
    await until(
      () =>
        existsSync(path.join(workdir, '.lock')) &&
        readdirSync(workdir).some((e) => e.startsWith('mlx.partial-')) &&
        sockets.length > 0,
      'the fetch to start',
    );
    if (group) process.kill(-(run.child.pid as number), 'SIGINT');
    else run.child.kill('SIGINT');
    const result = await run.done;

    expect(result.code, result.stderr).toBe(130);
    expect(result.stderr).toContain('Interrupted: `mlx-storage-pr apply` did not finish');
    expect(result.stderr).toMatch(/while running `git fetch [^`]*127\.0\.0\.1/);
    expect(result.stderr).toContain(`No MLX checkout in ${path.join(workdir, 'mlx')}`);
    expect(result.stdout).not.toContain('Applied');
    expect(leftovers()).toEqual([]);
  });

  it('with --json prints one JSON error with code INTERRUPTED', async () => {
    const run = start(['apply', '--mlx-repo', url, '--workdir', workdir, '--json'], false);
    await until(() => sockets.length > 0, 'the fetch to start');
    run.child.kill('SIGINT');
    const result = await run.done;
    expect(result.code).toBe(130);
    expect(JSON.parse(result.stdout)).toMatchObject({
      ok: false,
      error: { code: 'INTERRUPTED', details: { command: 'apply', checkout: { state: 'no-checkout' } } },
    });
    expect(leftovers()).toEqual([]);
  });

  it('during the final checkout lets it finish, reports the applied state, and never prints "Applied"', async () => {
    expect((await runCli(['apply', '--mlx-repo', upstream.dir, '--workdir', workdir], { cwd: project })).code).toBe(0);
    const template = path.join(project, 'templates/mlx/backend/metal/storage_view.cpp');
    writeFileSync(template, `${readFileSync(template, 'utf8')}// changed\n`);
    const controller = new AbortController();
    const result = await runCli(['apply', '--mlx-repo', upstream.dir, '--workdir', workdir], {
      cwd: project,
      signal: controller.signal,
      onStderr: (text) => {
        if (text.includes('Running `git checkout --quiet -B')) controller.abort();
      },
    });
    expect(controller.signal.aborted).toBe(true);
    expect(result.code).toBe(130);
    expect(result.stdout).not.toContain('Applied');
    expect(result.stderr).toContain('Interrupted: Ctrl-C came as `mlx-storage-pr apply` was finishing');
    expect(result.stderr).toContain('holds the applied series (current)');
    const checkout = path.join(workdir, 'mlx');
    expect(readFileSync(path.join(checkout, 'mlx/backend/metal/storage_view.cpp'), 'utf8')).toContain('// changed');
    expect(git(checkout, 'status', '--porcelain')).toBe('');
    expect(leftovers()).toEqual([]);
  });
});
