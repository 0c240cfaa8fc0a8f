import { constants, existsSync, linkSync, lstatSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { open, rm } from 'node:fs/promises';
import path from 'node:path';

import { z } from 'zod';

import { noSpaceErrorFrom, permissionDenied, permissionErrorFrom, UserError } from '../core/errors.js';
import { parseSaved } from '../core/json.js';
import { WORKDIR_NAMES } from '../core/workdir.js';
import { ifAbsentSync } from './files.js';
import { pausePoint } from './interrupt.js';
import { probe } from './process.js';

const LockOwnerSchema = z.object({
  pid: z.number().optional(),
  command: z.string().optional(),
  processStart: z.string().nullable().optional(),
});

/**
 * Who holds a lock file, as far as it says: nothing when it is gone, holds no
 * owner or is not a plain file. Opened without following a link and without
 * blocking, so that a FIFO at its path cannot make the run wait for a writer.
 */
export async function lockOwner(
  file: string,
): Promise<{ pid?: number | undefined; command?: string | undefined; processStart?: string | null | undefined }> {
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW).catch(() => null);
  if (handle === null) return {};
  try {
    if (!(await handle.stat()).isFile()) return {};
    return parseSaved(await handle.readFile('utf8'), LockOwnerSchema) ?? {};
  } catch {
    return {};
  } finally {
    await handle.close();
  }
}

/**
 * Whether process `pid` runs. A zombie (it ended, and its parent has not
 * collected it, as under a PID 1 that does not reap) answers signals but runs
 * no more: it counts as gone.
 */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const stat = readProc(`/proc/${pid}/stat`);
  // The state is the first field after the command name's closing parenthesis: Z zombie, X dead.
  const state = stat === null ? null : stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  return state !== 'Z' && state !== 'X';
}

/**
 * Refuses what is at the lock path when it is not a plain file (a folder, a
 * FIFO, a link): the tool never made it, so it neither reads nor removes it.
 */
function verifyLockPath(file: string): void {
  const stats = ifAbsentSync(() => lstatSync(file), null);
  if (stats === null || stats.isFile()) return;
  const kind = stats.isDirectory()
    ? 'a folder'
    : stats.isFIFO()
      ? 'a FIFO'
      : stats.isSymbolicLink()
        ? 'a symbolic link'
        : 'not a plain file';
  throw new UserError('WORKDIR_INVALID', `The lock path ${file} is ${kind}, not a lock file the tool wrote.`, {
    hint: `Move or delete it (\`rm -r ${file}\`: it holds nothing of the tool), then run the command again.`,
    details: { path: file, kind },
  });
}

/** `ps` lives in /bin or /usr/bin on every system the tool runs on. */
const PS_ENV = { PATH: '/bin:/usr/bin', LC_ALL: 'C' };

/** A file of /proc, or null when the process is gone. */
function readProc(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/**
 * What the system says of process `pid`: when it started (an opaque text,
 * compared only with itself) and its command line; null when it cannot tell.
 */
async function processIdentity(pid: number): Promise<{ start: string | null; command: string | null }> {
  if (existsSync('/proc/self/stat')) {
    const stat = readProc(`/proc/${pid}/stat`);
    const cmdline = readProc(`/proc/${pid}/cmdline`);
    // Field 22, the start time in clock ticks since boot, counted after the command name's closing parenthesis.
    const start = stat === null ? null : (stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null);
    return { start, command: cmdline === null ? null : cmdline.replace(/\0/g, ' ') };
  }
  return {
    start: await probe('ps', ['-o', 'lstart=', '-p', String(pid)], PS_ENV).catch(() => null),
    command: await probe('ps', ['-o', 'command=', '-p', String(pid)], PS_ENV).catch(() => null),
  };
}

/**
 * Whether the lock's owner still runs: the pid is alive and is the process
 * that wrote the lock (same start time), not another one that got the pid
 * since. A lock without a start time (older versions) is believed only when
 * the pid runs node or mlx-storage-pr.
 */
async function ownerRuns(owner: { pid: number; processStart?: unknown }): Promise<boolean> {
  if (!isAlive(owner.pid)) return false;
  const now = await processIdentity(owner.pid);
  if (typeof owner.processStart === 'string') return now.start === null || now.start === owner.processStart;
  return now.command === null || /\bnode\b|mlx-storage-pr/.test(now.command);
}

/**
 * Takes `<workdir>/.lock` for the duration of `fn`. A lock left by a process
 * that no longer runs (or whose pid now belongs to another program) is taken over.
 */
export async function withLock<T>(workdir: string, command: string, fn: () => Promise<T>): Promise<T> {
  try {
    mkdirSync(workdir, { recursive: true });
  } catch (error) {
    throw permissionErrorFrom(error) ?? error;
  }
  const file = path.join(workdir, WORKDIR_NAMES.lock);
  await takeLock(file, workdir, command, `is using ${workdir}`);
  try {
    await pausePoint('lock-taken');
    return await fn();
  } finally {
    await rm(file, { force: true });
  }
}

/** The project's lock file: every run that writes the project's files holds it, whatever its workdir. */
export const PROJECT_LOCK = '.mlx-storage-pr.lock';

/**
 * Takes `<project>/.mlx-storage-pr.lock` for the duration of `fn`: runs that
 * write the project's files (export, bump, format --fix) from different
 * workdirs of one project take turns, so none writes over another's files
 * unseen. Taken after the workdir lock, never before it.
 */
export async function withProjectLock<T>(projectRoot: string, command: string, fn: () => Promise<T>): Promise<T> {
  const file = path.join(projectRoot, PROJECT_LOCK);
  await takeLock(file, projectRoot, command, `is writing the project ${projectRoot}`);
  try {
    return await fn();
  } finally {
    await rm(file, { force: true });
  }
}

/** The workdir's lock, then the project's, for the duration of `fn`: for a run that writes the project's files. */
export async function withWriterLocks<T>(
  workdir: string,
  projectRoot: string,
  command: string,
  fn: () => Promise<T>,
): Promise<T> {
  return withLock(workdir, command, () => withProjectLock(projectRoot, command, fn));
}

/** Creates the lock file `file` in `folder`, taking over a stale one; LOCKED (saying the owner `doing`) when a live run holds it. */
async function takeLock(file: string, folder: string, command: string, doing: string): Promise<void> {
  // Taking the lock is a few small file operations, done synchronously: nothing else waits on them.
  const processStart = (await processIdentity(process.pid)).start;
  verifyLockPath(file);
  for (let attempt = 0; ; attempt++) {
    try {
      // Written aside, then linked into place: a lock file is never seen empty,
      // so a run starting at the same moment cannot take it for a stale one.
      const draft = `${file}.${process.pid}`;
      writeFileSync(
        draft,
        JSON.stringify({ pid: process.pid, command, started: new Date().toISOString(), processStart }),
      );
      try {
        linkSync(draft, file);
      } finally {
        rmSync(draft, { force: true });
      }
      return;
    } catch (error) {
      const denied = permissionErrorFrom(error);
      if (denied) throw permissionDenied(folder, (denied.details as { reason: string }).reason, { cause: error });
      const full = noSpaceErrorFrom(error);
      if (full) throw full;
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw lockedError(file, error);
      verifyLockPath(file);
      // An owner that cannot be read (the lock vanished, or holds no JSON) is unknown: the lock counts as stale.
      const owner = await lockOwner(file);
      if (typeof owner.pid === 'number' && (await ownerRuns({ ...owner, pid: owner.pid }))) {
        throw new UserError(
          'LOCKED',
          `Another mlx-storage-pr run (pid ${owner.pid}, ${owner.command ?? 'unknown command'}) ${doing}.`,
          {
            hint: `Wait for it to finish. If no such process runs, delete ${file}.`,
            details: { lock: file, pid: owner.pid },
          },
        );
      }
      await rm(file, { force: true });
    }
  }
}

function lockedError(file: string, cause: unknown): UserError {
  return new UserError('LOCKED', `Could not take the lock ${file}.`, {
    hint: `Another run may have started at the same moment; try again. If none runs, delete ${file}.`,
    cause,
  });
}
