import type { Git } from '../adapters/git.js';
import { inputHashOf } from './tree.js';

export type HeadState =
  | { kind: 'empty' }
  | { kind: 'pinned'; commit: string }
  | { kind: 'applied'; commit: string; tree: string; inputHash: string; base: string }
  | { kind: 'foreign'; commit: string; base: string | null };

/**
 * What HEAD is: the pinned commit, a commit made by `apply` (one parent, the
 * input trailer in its message; its base is an older pin after the pin
 * moves), or anything else.
 */
export async function classifyHead(git: Git, pinned: string): Promise<HeadState> {
  const info = await git.headInfo();
  if (info === null) return { kind: 'empty' };
  if (info.commit === pinned) return { kind: 'pinned', commit: info.commit };
  const inputHash = inputHashOf(info.message);
  const base = info.parents.length === 1 ? info.parents[0] : undefined;
  if (base !== undefined && inputHash !== undefined) {
    return { kind: 'applied', commit: info.commit, tree: info.tree, inputHash, base };
  }
  return { kind: 'foreign', commit: info.commit, base: info.parents[0] ?? null };
}

/** A ref that keeps saved work reachable even if the stash is dropped. */
export function backupRef(kind: 'stash' | 'head', now: Date): string {
  return `refs/mlx-storage-pr/backup/${now.toISOString().replace(/[:.]/g, '-')}-${kind}`;
}

export interface SavedWork {
  stash?: string;
  headBackup?: string;
  refs: string[];
  restore: string[];
}

/** Saves uncommitted changes (stash plus a backup ref) and, if asked, the current HEAD. */
export async function saveUserWork(git: Git, options: { reason: string; head?: string; now?: Date }): Promise<SavedWork> {
  const now = options.now ?? new Date();
  const saved: SavedWork = { refs: [], restore: [] };
  const stash = await git.stash(`mlx-storage-pr: saved before ${options.reason} ${now.toISOString()}`);
  if (stash) {
    const ref = backupRef('stash', now);
    await git.updateRef(ref, stash);
    saved.stash = stash;
    saved.refs.push(ref);
    saved.restore.push(`git -C ${git.dir} stash apply ${stash}`);
  }
  if (options.head) {
    const ref = backupRef('head', now);
    await git.updateRef(ref, options.head);
    saved.headBackup = options.head;
    saved.refs.push(ref);
    saved.restore.push(`git -C ${git.dir} checkout -b my-work ${options.head}`);
  }
  return saved;
}
