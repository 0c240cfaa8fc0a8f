import { spawn } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { makeExportProject, makeExportUpstream } from '../support/export-fixtures.js';
import { IDENTITY, makeWorld, MESSAGE, refsOf } from '../support/fork.js';
import { CLI_WITH_SEAMS, git, runCli } from '../support/repos.js';

/**
 * What the interrupt report tells the user to do next must work: Ctrl-C (to
 * the whole process group, as a terminal sends it) at a point where "run it
 * again" is the wrong advice.
 */

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI in its own process group (made to wait at `pauseAt`, when given); sends SIGINT to the
 * group once `ready(stderr)` holds.
 */
function interruptWhen(
  args: string[],
  o: {
    cwd: string;
    env: Record<string, string | undefined>;
    ready: (stderr: string) => boolean;
    pauseAt?: string;
  },
): Promise<Run> {
  const seams = JSON.stringify(o.pauseAt === undefined ? {} : { pauseAt: o.pauseAt });
  const child = spawn(process.execPath, [CLI_WITH_SEAMS, seams, ...args], {
    cwd: o.cwd,
    env: o.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let sent = false;
  const send = () => {
    if (sent || !o.ready(stderr)) return;
    sent = true;
    process.kill(-(child.pid as number), 'SIGINT');
  };
  const poll = setInterval(send, 25);
  const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => ((stderr += c.toString()), send()));
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearInterval(poll);
      clearTimeout(timer);
      resolve({ code, stdout, stderr: sent ? stderr : `never interrupted:\n${stderr}`, json: undefined } as Run);
    }),
  );
}

describe('Ctrl-C: the report names the step that works next', () => {
  it('bump, after it saved its state on a conflict: names `bump --continue` and `bump --abort`, not "run bump again" (which says BUMP_IN_PROGRESS)', async () => {
    const upstream = makeExportUpstream();
    const project = makeExportProject(upstream.sha);
    const env = { PATH: process.env['PATH'], HOME: process.env['HOME'] };
    expect((await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project, env })).code).toBe(0);
    // Upstream adds a function exactly where a patch adds its stub: the bump stops on a conflict.
    const file = path.join(upstream.dir, 'mlx/backend/metal/no_metal.cpp');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(
        'without metal backend");\n}\n\n',
        'without metal backend");\n}\n\nvoid reset_peak_memory() {}\n\n',
      ),
    );
    const version = path.join(upstream.dir, 'mlx/version.h');
    writeFileSync(version, readFileSync(version, 'utf8').replace(/MLX_VERSION_MINOR \d+/, 'MLX_VERSION_MINOR 33'));
    git(upstream.dir, 'commit', '--quiet', '-am', 'upstream change');

    const run = await interruptWhen(['bump', '--to', 'main', '--mlx-repo', upstream.dir], {
      cwd: project,
      env,
      pauseAt: 'bump-saved',
      ready: (stderr) => stderr.includes('[test pause] at bump-saved'),
    });
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).toContain('bump --continue');
    expect(run.stderr).toContain('bump --abort');
    expect(run.stderr).not.toMatch(/Run `mlx-storage-pr bump` again/);

    // What it names works; what it used to name does not.
    const again = await runCli(['bump', '--to', 'main', '--mlx-repo', upstream.dir, '--json'], { cwd: project, env });
    expect((again.json as { error: { code: string } }).error.code).toBe('BUMP_IN_PROGRESS');
    const abort = await runCli(['bump', '--abort', '--mlx-repo', upstream.dir], { cwd: project, env });
    expect(abort.code, abort.stderr).toBe(0);
  });

  it('pr --push, while git push runs after the fork took the ref: says the push may or may not have landed and how to check', async () => {
    const world = await makeWorld();
    // The fork takes the ref, then its post-receive hook holds `git push` open until Ctrl-C.
    const hook = path.join(world.fork, 'hooks', 'post-receive');
    writeFileSync(hook, '#!/bin/sh\nexec sleep 30\n');
    chmodSync(hook, 0o755);
    writeFileSync(path.join(world.project, 'pr', 'commit-message.txt'), MESSAGE);
    const branch = 'refs/heads/mlx-storage-pr';
    const run = await interruptWhen(['pr', '--push', '--fork', world.fork, '--skip-checks'], {
      cwd: world.project,
      env: { ...world.env, ...IDENTITY, PATH: process.env['PATH'] },
      ready: () => refsOf(world.fork)[branch] !== undefined,
    });
    expect(refsOf(world.fork)[branch], 'the push landed').toBeDefined();
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).toMatch(/may or may not have (landed|reached)/);
    expect(run.stderr).toContain(`git ls-remote ${world.fork} ${branch}`);
    expect(run.stderr).toContain('pr --push');
    expect(run.stderr).not.toMatch(/[Tt]he push did not finish/);
  });
});
