import path from 'node:path';

import { diskUsage, listFolder, removeTree } from '../adapters/files.js';
import type { Git } from '../adapters/git.js';
import { planClean, type CheckoutWork, type WorkdirItem } from '../core/clean.js';
import { WORKDIR_NAMES } from '../core/workdir.js';
import { classifyHead } from './state.js';

export interface MeasuredItem extends WorkdirItem {
  path: string;
  bytes: number;
}

/** What `clean` would remove and keep in `workdir`, with sizes; null when there is no workdir. */
export async function inspectWorkdir(workdir: string, all: boolean): Promise<{ remove: MeasuredItem[]; keep: WorkdirItem[] } | null> {
  const entries = await listFolder(workdir);
  if (entries === null) return null;
  const plan = planClean(entries, all);
  const remove = await Promise.all(
    plan.remove.map(async (item) => {
      const file = path.join(workdir, item.name);
      return { ...item, path: file, bytes: await diskUsage(file) };
    }),
  );
  return { remove, keep: plan.keep };
}

/** Uncommitted changes, stashes, backup refs, own branches and an own HEAD in the checkout. */
export async function checkoutWork(git: Git, pinned: string, toolBranch: string): Promise<CheckoutWork> {
  const head = await classifyHead(git, pinned);
  return {
    uncommitted: (await git.status()).map((e) => e.path),
    stashes: await git.stashCount(),
    backupRefs: await git.refs('refs/mlx-storage-pr/backup/'),
    branches: (await git.refs('refs/heads/')).map((r) => r.slice('refs/heads/'.length)).filter((b) => b !== toolBranch),
    foreignHead: head.kind === 'foreign' ? head.commit : null,
  };
}

/**
 * Removes the items; when the checkout stays and a removed folder held one of
 * its worktrees, git forgets that worktree too.
 */
export async function removeItems(items: readonly MeasuredItem[], checkout: Git | null): Promise<void> {
  for (const item of items) await removeTree(item.path);
  if (checkout !== null && !items.some((i) => i.name === WORKDIR_NAMES.checkout) && items.some((i) => i.holdsWorktree)) {
    await checkout.raw(['worktree', 'prune']);
  }
}
