import { link, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { z } from 'zod';

import { permissionDenied, permissionErrorFrom, UserError } from '../core/errors.js';
import { WORKDIR_NAMES } from '../core/workdir.js';
import { readJsonFile } from './files.js';

const LockOwnerSchema = z.object({ pid: z.number().optional(), command: z.string().optional() });

/** Who holds a lock file, as far as it says: nothing when it is gone or holds no owner. */
export async function lockOwner(file: string): Promise<{ pid?: number | undefined; command?: string | undefined }> {
  return (await readJsonFile(file, LockOwnerSchema)) ?? {};
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Takes `<workdir>/.lock` for the duration of `fn`. A lock left by a process
 * that no longer runs is taken over.
 */
export async function withLock<T>(workdir: string, command: string, fn: () => Promise<T>): Promise<T> {
  await mkdir(workdir, { recursive: true }).catch((error: unknown) => {
    throw permissionErrorFrom(error) ?? error;
  });
  const file = path.join(workdir, WORKDIR_NAMES.lock);
  for (let attempt = 0; ; attempt++) {
    try {
      // Written aside, then linked into place: a lock file is never seen empty,
      // so a run starting at the same moment cannot take it for a stale one.
      const draft = `${file}.${process.pid}`;
      await writeFile(draft, JSON.stringify({ pid: process.pid, command, started: new Date().toISOString() }));
      try {
        await link(draft, file);
      } finally {
        await rm(draft, { force: true });
      }
      break;
    } catch (error) {
      const denied = permissionErrorFrom(error);
      if (denied) throw permissionDenied(workdir, (denied.details as { reason: string }).reason, { cause: error });
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw lockedError(file, error);
      // An owner that cannot be read (the lock vanished, or holds no JSON) is unknown: the lock counts as stale.
      const owner = await lockOwner(file);
      if (typeof owner.pid === 'number' && isAlive(owner.pid)) {
        throw new UserError(
          'LOCKED',
          `Another mlx-storage-pr run (pid ${owner.pid}, ${owner.command ?? 'unknown command'}) is using ${workdir}.`,
          {
            hint: `Wait for it to finish. If no such process runs, delete ${file}.`,
            details: { lock: file, pid: owner.pid },
          },
        );
      }
      await rm(file, { force: true });
    }
  }
  try {
    return await fn();
  } finally {
    await rm(file, { force: true });
  }
}

function lockedError(file: string, cause: unknown): UserError {
  return new UserError('LOCKED', `Could not take the lock ${file}.`, {
    hint: `Another run may have started at the same moment; try again. If none runs, delete ${file}.`,
    cause,
  });
}
