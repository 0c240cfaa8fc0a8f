import { existsSync } from 'node:fs';
import path from 'node:path';

import { diskUsage, listFolder, removeTree } from '../adapters/files.js';
import type { Git } from '../adapters/git.js';
import { withLock } from '../adapters/lock.js';
import { describeCheckoutWork, formatBytes, planClean, type CheckoutWork, type WorkdirItem } from './workdir-items.js';
import { UserError } from '../core/errors.js';
import { WORKDIR_NAMES } from '../core/workdir.js';
import type { Context } from '../series/context.js';
import { classifyHead } from '../series/checkout-state.js';

export interface MeasuredItem extends WorkdirItem {
  path: string;
  bytes: number;
}

/** What `clean` would remove and keep in `workdir`, with sizes; null when there is no workdir. */
export async function inspectWorkdir(
  workdir: string,
  all: boolean,
): Promise<{ remove: MeasuredItem[]; keep: WorkdirItem[] } | null> {
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
  if (
    checkout !== null &&
    !items.some((i) => i.name === WORKDIR_NAMES.checkout) &&
    items.some((i) => i.holdsWorktree)
  ) {
    await checkout.raw(['worktree', 'prune']);
  }
}

export interface CleanOutcome {
  /** False for a dry run, and when nothing was there to remove. */
  removed: boolean;
  remove: MeasuredItem[];
  keep: WorkdirItem[];
  bytes: number;
}

/**
 * Removes what the tool made in the workdir and can make again: build
 * folders, baselines, verify's and check-metal's trees, unfinished fetches.
 * `all` also removes the checkout and downloads, but only when the checkout
 * holds none of the user's work. A dry run only measures.
 */
export async function cleanWorkdir(ctx: Context, options: { all: boolean; dryRun: boolean }): Promise<CleanOutcome> {
  const { all } = options;
  const work = async (dryRun: boolean): Promise<CleanOutcome> => {
    const found = await inspectWorkdir(ctx.workdir, all);
    if (found === null || found.remove.length === 0)
      return { removed: false, remove: [], keep: found?.keep ?? [], bytes: 0 };
    const git = await ctx.checkout();
    if (all && git !== null) {
      // The bump's worktree belongs to the checkout: without the checkout it can be neither continued nor aborted.
      const bumping = existsSync(ctx.layout.bump.state);
      const reasons = [
        ...describeCheckoutWork(await checkoutWork(git, ctx.config.upstream.commit, ctx.config.branch), git.dir),
        ...(bumping ? [`a bump in progress: its worktree ${ctx.layout.bump.worktree} and the state to finish it`] : []),
      ];
      if (reasons.length) {
        const finishBump = bumping
          ? 'Finish the bump (`mlx-storage-pr export`, then `mlx-storage-pr bump --continue`) or give it up (`mlx-storage-pr bump --abort`). '
          : '';
        // A dry run still lists what --all would remove, next to the work that makes it refuse.
        const listed = dryRun
          ? `\nWithout that work, clean --all would remove:\n${found.remove.map((i) => `  ${formatBytes(i.bytes).padStart(10)}  ${i.name}/  ${i.what}`).join('\n')}`
          : '';
        throw new UserError(
          'CHECKOUT_HAS_WORK',
          `clean --all would delete ${git.dir}, which holds your work:\n  ${reasons.join('\n  ')}${listed}\nNothing was removed.`,
          {
            hint: `${finishBump}Keep what you need elsewhere (commit and push it, or copy the files) and drop the rest (\`git -C ${git.dir} stash drop\`, \`git -C ${git.dir} update-ref -d <ref>\`, \`git -C ${git.dir} branch -D <branch>\`); or run \`clean\` without --all, which never touches the checkout.`,
            details: {
              reasons,
              remove: found.remove.map((i) => ({ name: i.name, path: i.path, what: i.what, bytes: i.bytes })),
            },
          },
        );
      }
    }
    const bytes = found.remove.reduce((sum, item) => sum + item.bytes, 0);
    if (!dryRun) await removeItems(found.remove, git);
    return { removed: !dryRun, remove: found.remove, keep: found.keep, bytes };
  };
  if (options.dryRun) return work(true);
  // A workdir that does not exist has nothing to clean; the lock would create it.
  if ((await inspectWorkdir(ctx.workdir, all)) === null) return work(true);
  return withLock(ctx.workdir, 'clean', () => work(false));
}
