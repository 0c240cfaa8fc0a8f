import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { IDENTITY, makeWorld, MESSAGE, refsOf, type World } from '../support/fork.js';
import { startGitHubStandIn } from '../support/github-api.js';
import { CLI_WITH_SEAMS, tempDir } from '../support/repos.js';

/**
 * Ctrl-C as a terminal sends it: SIGINT to the whole process group, so git
 * and its helpers get it at the same moment as the tool. The pause point that
 * tests pass to `main(io)` makes it wait at a named step; each point is
 * interrupted there several times, since a race shows only in some runs:
 * 6 by default; MLX_STORAGE_PR_TEST_REPEAT=50 hunts longer (docs/layout.md).
 */
const REPEAT = Number(process.env['MLX_STORAGE_PR_TEST_REPEAT'] ?? 6);

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The workdir's `.lock` and `mlx.partial-*` after the run. */
  leftovers: string[];
}

/**
 * Runs the built CLI in its own process group, waits until it says it is
 * paused at `point`, sends SIGINT to the group (and, with `forwarded`, once
 * more to the tool itself 50 ms later, as a wrapper such as npx forwards
 * the terminal's signal) and collects how it ended.
 */
function interruptAt(
  point: string,
  args: string[],
  o: { cwd: string; workdir: string; env: Record<string, string>; forwarded?: boolean },
): Promise<Outcome> {
  const seams = JSON.stringify({ pauseAt: point });
  const child = spawn(process.execPath, [CLI_WITH_SEAMS, seams, ...args, '--workdir', o.workdir], {
    cwd: o.cwd,
    env: o.env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let sent = false;
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
    if (!sent && stderr.includes(`[test pause] at ${point}`)) {
      sent = true;
      process.kill(-(child.pid as number), 'SIGINT');
      // A wrapper's forwarded copy comes a moment after the terminal's.
      if (o.forwarded) setTimeout(() => process.kill(child.pid as number, 'SIGINT'), 50);
    }
  });
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      const leftovers = readdirSync(o.workdir).filter((e) => e === '.lock' || e.startsWith('mlx.partial-'));
      resolve({ code, stdout, stderr: sent ? stderr : `never paused at ${point}:\n${stderr}`, leftovers });
    }),
  );
}

/** Runs `once` `times` times and returns the runs whose outcome `check` rejects, with the reason. */
async function repeat(
  once: (i: number) => Promise<Outcome>,
  check: (r: Outcome) => string | null,
  times = REPEAT,
): Promise<string[]> {
  const failed: string[] = [];
  for (let i = 0; i < times; i++) {
    const outcome = await once(i);
    const why = check(outcome);
    if (why !== null) failed.push(`run ${i + 1}: ${why}\nexit ${outcome.code}\n${outcome.stderr.slice(-1500)}`);
  }
  return failed;
}

/** What every interrupted run must show: exit 130, the report docs/safety.md promises, no lock or fetch folder left. */
function interrupted(command: string, workdir: () => string, alsoRunning?: RegExp) {
  return (r: Outcome): string | null => {
    if (r.code !== 130) return 'exit code is not 130';
    if (!r.stderr.includes(`Interrupted: \`mlx-storage-pr ${command}\` did not finish`)) return 'no interrupt report';
    if (alsoRunning && !alsoRunning.test(r.stderr)) return `the report does not name ${String(alsoRunning)}`;
    if (!r.stderr.includes(`checkout ${path.join(workdir(), 'mlx')}`) && !r.stderr.includes('No MLX checkout in'))
      return 'the report does not give the state of the checkout';
    if (r.leftovers.length > 0) return `left ${r.leftovers.join(', ')}`;
    return null;
  };
}

describe(`Ctrl-C to the process group at a named step, ${REPEAT} runs per point`, () => {
  let world: World;
  /** A HOME whose git config makes every fetch from a local source hang in pack-objects until interrupted. */
  let slowFetchHome: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    world = await makeWorld();
    slowFetchHome = tempDir('msp-home-');
    const hook = path.join(slowFetchHome, 'hang');
    writeFileSync(hook, '#!/bin/sh\nexec sleep 30\n');
    chmodSync(hook, 0o755);
    writeFileSync(path.join(slowFetchHome, '.gitconfig'), `[uploadpack]\n\tpackObjectsHook = ${hook}\n`);
    env = { ...world.env, PATH: process.env['PATH'] ?? '' };
  });

  const fresh = () => {
    const dir = path.join(tempDir('msp-work-'), 'work');
    mkdirSync(dir);
    return dir;
  };

  it('apply, while git fetches the pinned commit: reports what stopped, removes the lock and the fetch folder, exits 130', async () => {
    let workdir = '';
    const failed = await repeat(
      () =>
        interruptAt('fetch-started', ['apply'], {
          cwd: world.project,
          workdir: (workdir = fresh()),
          env: { ...env, HOME: slowFetchHome },
        }),
      interrupted('apply', () => workdir, /while running `git fetch /),
    );
    expect(failed).toEqual([]);
  });

  it('apply, while git fetches, with the SIGINT also forwarded to the tool (npx): the same report, not a silent exit', async () => {
    let workdir = '';
    const failed = await repeat(
      () =>
        interruptAt('fetch-started', ['apply'], {
          cwd: world.project,
          workdir: (workdir = fresh()),
          env: { ...env, HOME: slowFetchHome },
          forwarded: true,
        }),
      interrupted('apply', () => workdir),
    );
    expect(failed).toEqual([]);
  });

  it('apply, just after taking the lock: reports, removes the lock, exits 130', async () => {
    let workdir = '';
    const failed = await repeat(
      () => interruptAt('lock-taken', ['apply'], { cwd: world.project, workdir: (workdir = fresh()), env }),
      interrupted('apply', () => workdir),
    );
    expect(failed).toEqual([]);
  });

  it('check, while git fetches the commits to check: reports, removes the lock, exits 130', async () => {
    let workdir = '';
    const failed = await repeat(
      () =>
        interruptAt('fetch-started', ['check', '--against', 'main'], {
          cwd: world.project,
          workdir: (workdir = fresh()),
          env: { ...env, HOME: slowFetchHome },
        }),
      interrupted('check', () => workdir, /while running `git fetch /),
    );
    expect(failed).toEqual([]);
  });

  it('pr --push, after the push completed: prints the result, says the interrupt came after the push, exits 0', async () => {
    const workdir = path.join(world.project, '.work');
    const failed = await repeat(
      (i) => {
        // A new message each time, so that every run pushes a new commit.
        writeFileSync(path.join(world.project, 'pr', 'commit-message.txt'), MESSAGE.replace('\n\n', `\n\nRun ${i}.\n`));
        return interruptAt('push-done', ['pr', '--push', '--fork', world.fork, '--skip-checks'], {
          cwd: world.project,
          workdir,
          env: { ...env, ...IDENTITY },
        });
      },
      (r) => {
        if (r.code !== 0) return 'exit code is not 0';
        const pushed = /^(?:created|updated): \S+ on \S+(?:, \w+ -> (\w+)| at (\w+))$/m.exec(r.stdout);
        if (pushed === null) return `stdout does not give the push's result:\n${r.stdout}`;
        const tip = refsOf(world.fork)['refs/heads/mlx-storage-pr'] ?? '';
        if (!tip.startsWith((pushed[1] ?? pushed[2]) as string))
          return `the fork's branch is at ${tip}, not the result`;
        if (!r.stderr.includes('interrupted after the push completed')) return 'no line saying the push completed';
        if (r.leftovers.length > 0) return `left ${r.leftovers.join(', ')}`;
        return null;
      },
    );
    expect(failed).toEqual([]);
  });

  it('pr --push --open, after the push completed (5 runs): the push stands (exit 0), no pull request is sent, and it says to run again', async () => {
    const api = await startGitHubStandIn({ token: 'ghp_test', repository: 'ml-explore/mlx', defaultBranch: 'main' });
    try {
      const workdir = path.join(world.project, '.work');
      const failed = await repeat(
        (i) => {
          writeFileSync(
            path.join(world.project, 'pr', 'commit-message.txt'),
            MESSAGE.replace('\n\n', `\n\nOpen ${i}.\n`),
          );
          const args = ['pr', '--push', '--fork', world.fork, '--skip-checks', '--open', '--fork-owner', 'alice'];
          return interruptAt('push-done', [...args, '--api-url', api.url], {
            cwd: world.project,
            workdir,
            env: { ...env, ...IDENTITY, GH_TOKEN: 'ghp_test' },
          });
        },
        (r) => {
          if (r.code !== 0) return 'exit code is not 0';
          if (!/^(?:created|updated): /m.test(r.stdout)) return `stdout does not give the push's result:\n${r.stdout}`;
          if (!r.stderr.includes('interrupted after the push completed')) return 'no line saying the push completed';
          if (!r.stderr.includes('the pull request was created or updated, so it was not: run the same command again'))
            return 'no line saying the pull request was not sent';
          if (api.requests.some((q) => q.method !== 'GET')) return 'a pull request was created or updated';
          return null;
        },
        5,
      );
      expect(failed).toEqual([]);
    } finally {
      await api.close();
    }
  });

  it('pr --push, just after taking the lock: pushes nothing, reports, removes the lock, exits 130', async () => {
    const workdir = path.join(world.project, '.work');
    const before = refsOf(world.fork);
    const failed = await repeat(
      () =>
        interruptAt('lock-taken', ['pr', '--push', '--fork', world.fork, '--skip-checks'], {
          cwd: world.project,
          workdir,
          env: { ...env, ...IDENTITY },
        }),
      interrupted('pr', () => workdir),
    );
    expect(failed).toEqual([]);
    expect(refsOf(world.fork)).toEqual(before);
  });
});
