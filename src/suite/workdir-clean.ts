import { existsSync, realpathSync } from 'node:fs';
import path from 'node:path';

import { diskUsage, ifAbsentSync, isMarked, listFolder, removeTree } from '../adapters/files.js';
import type { Git } from '../adapters/git.js';
import { withLock } from '../adapters/lock.js';
import { ProcessError } from '../adapters/process-error.js';
import {
  describeCheckoutWork,
  formatBytes,
  planClean,
  type CheckoutWork,
  type LinkedWorktree,
  type WorkdirItem,
} from './workdir-items.js';
import { UserError } from '../core/errors.js';
import { WORKDIR_NAMES, type WorkdirLayout } from '../core/workdir.js';
import type { Context } from '../series/context.js';
import { classifyHead } from '../series/head-state.js';
import { isRecordedSourceMarked } from '../series/source.js';

export interface MeasuredItem extends WorkdirItem {
  path: string;
  bytes: number;
}

export interface InspectedWorkdir {
  remove: MeasuredItem[];
  keep: WorkdirItem[];
  notMade: WorkdirItem[];
}

/**
 * What `clean` would remove and keep in `workdir`, with sizes, and the
 * look-alikes without the tool's mark that it leaves alone; null when there
 * is no workdir.
 */
export async function inspectWorkdir(layout: WorkdirLayout, all: boolean): Promise<InspectedWorkdir | null> {
  const workdir = layout.root;
  const entries = await listFolder(workdir);
  if (entries === null) return null;
  const marked = await Promise.all(
    entries.map(async (e) => ({
      ...e,
      marked: e.isDirectory
        ? await isMarked(path.join(workdir, e.name))
        : e.name === WORKDIR_NAMES.source && (await isRecordedSourceMarked(layout)),
    })),
  );
  const plan = planClean(marked, all);
  const remove = await Promise.all(
    plan.remove.map(async (item) => {
      const file = path.join(workdir, item.name);
      return { ...item, path: file, bytes: await diskUsage(file) };
    }),
  );
  return { remove, keep: plan.keep, notMade: plan.notMade };
}

/** The path with links resolved (git prints worktrees so), or as it is when it does not exist. */
const resolved = (file: string) => ifAbsentSync(() => realpathSync(file), file);

/** True when `file` is `folder` or inside it. */
const isWithin = (file: string, folder: string) => {
  const relative = path.relative(resolved(folder), resolved(file));
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
};

/**
 * The user's work in the checkout: uncommitted changes, stashes, backup refs,
 * own branches, an own HEAD, any other ref the tool did not make that leads
 * past upstream's pinned history (tags, notes, ...), the linked worktrees
 * outside the folders `clean --all` removes with it (where the
 * tool keeps its own trees; `toolTrees`) and files git ignores in the checkout.
 */
export async function checkoutWork(
  git: Git,
  o: { pinned: string; toolBranch: string; toolTrees: readonly string[] },
): Promise<CheckoutWork> {
  const head = await classifyHead(git, o.pinned);
  const toolRef = (ref: string) =>
    ref.startsWith('refs/heads/') || ref === 'refs/stash' || ref.startsWith('refs/mlx-storage-pr/');
  const all = (await git.refTargets()).filter((r) => !toolRef(r.ref));
  // Without the pinned commit nothing is known to be upstream's: every ref counts.
  const past = await git.refTargets(o.pinned).catch((error: unknown) => {
    if (error instanceof ProcessError) return null;
    throw error;
  });
  const pastRefs = past === null ? null : new Set(past.map((r) => r.ref));
  const refs = all.filter((r) => r.commit === null || pastRefs === null || pastRefs.has(r.ref));
  const worktrees: LinkedWorktree[] = [];
  for (const wt of await git.linkedWorktrees()) {
    // A worktree whose folder is gone holds nothing on disk; git forgets it (`git worktree prune`), as apply does.
    if (wt.gone || o.toolTrees.some((folder) => isWithin(wt.path, folder))) continue;
    const uncommitted = existsSync(wt.path) ? (await git.at(wt.path).status()).map((e) => e.path) : [];
    worktrees.push({ path: wt.path, head: wt.head, branch: wt.branch, uncommitted });
  }
  return {
    uncommitted: (await git.status()).map((e) => e.path),
    stashes: await git.stashCount(),
    backupRefs: await git.refs('refs/mlx-storage-pr/backup/'),
    branches: (await git.refs('refs/heads/'))
      .map((r) => r.slice('refs/heads/'.length))
      .filter((b) => b !== o.toolBranch),
    foreignHead: head.kind === 'foreign' ? head.commit : null,
    refs,
    worktrees,
    ignored: await git.ignoredFiles(),
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
  notMade: WorkdirItem[];
  bytes: number;
}

/**
 * Removes what the tool made in the workdir (only items with its mark) and
 * can make again: build folders, baselines, verify's and check-metal's trees,
 * unfinished fetches. `all` also removes the checkout and downloads, but only
 * when the checkout holds none of the user's work. A dry run only measures;
 * it reaches the same decisions.
 */
export async function cleanWorkdir(ctx: Context, options: { all: boolean; dryRun: boolean }): Promise<CleanOutcome> {
  const { all } = options;
  const work = async (dryRun: boolean): Promise<CleanOutcome> => {
    const found = await inspectWorkdir(ctx.layout, all);
    if (found === null || found.remove.length === 0)
      return { removed: false, remove: [], keep: found?.keep ?? [], notMade: found?.notMade ?? [], bytes: 0 };
    const git = await ctx.checkout();
    // Only a checkout the tool marked as made by it is removed (and so checked for work).
    if (all && git !== null && found.remove.some((i) => i.name === WORKDIR_NAMES.checkout)) {
      // The bump's worktree belongs to the checkout: without the checkout it can be neither continued nor aborted.
      const bumping = existsSync(ctx.layout.bump.state);
      const held = await checkoutWork(git, {
        pinned: ctx.config.upstream.commit,
        toolBranch: ctx.config.branch,
        // The tool's own trees go with the checkout; the bump's worktree is named below.
        toolTrees: [...found.remove.map((i) => i.path), ...(bumping ? [ctx.layout.bump.worktree] : [])],
      });
      const reasons = [
        ...describeCheckoutWork(held, git.dir),
        ...(bumping ? [`a bump in progress: its worktree ${ctx.layout.bump.worktree} and the state to finish it`] : []),
      ];
      if (reasons.length) {
        const finishBump = bumping
          ? 'Finish the bump (`mlx-storage-pr export`, then `mlx-storage-pr bump --continue`) or give it up (`mlx-storage-pr bump --abort`). '
          : '';
        // A dry run still lists what --all would remove, next to the work that makes it refuse.
        const shown = (i: WorkdirItem) => `${i.name}${i.folder ? '/' : ''}`;
        const notMade = found.notMade.length
          ? `\nNot made by mlx-storage-pr, left alone: ${found.notMade.map(shown).join(', ')}`
          : '';
        const listed = dryRun
          ? `\nWithout that work, clean --all would remove:\n${found.remove.map((i) => `  ${formatBytes(i.bytes).padStart(10)}  ${shown(i)}  ${i.what}`).join('\n')}${notMade}`
          : '';
        throw new UserError(
          'CHECKOUT_HAS_WORK',
          `clean --all would delete ${git.dir}, which holds your work:\n  ${reasons.join('\n  ')}${listed}\nNothing was removed.`,
          {
            hint: `${finishBump}Keep what you need elsewhere (commit and push it, or copy the files) and drop the rest (\`git -C ${git.dir} stash drop\`, \`git -C ${git.dir} update-ref -d <ref>\` for a branch, tag or other ref, \`git -C ${git.dir} worktree remove <path>\`, \`git -C ${git.dir} clean -fdX\` for ignored files); or run \`clean\` without --all, which never touches the checkout.`,
            details: {
              reasons,
              remove: found.remove.map((i) => ({ name: i.name, path: i.path, what: i.what, bytes: i.bytes })),
              notMade: found.notMade.map((i) => ({ name: i.name, what: i.what })),
            },
          },
        );
      }
    }
    const bytes = found.remove.reduce((sum, item) => sum + item.bytes, 0);
    if (!dryRun) await removeItems(found.remove, git);
    return { removed: !dryRun, remove: found.remove, keep: found.keep, notMade: found.notMade, bytes };
  };
  if (options.dryRun) return work(true);
  // A workdir that does not exist has nothing to clean; the lock would create it.
  if ((await inspectWorkdir(ctx.layout, all)) === null) return work(true);
  return withLock(ctx.workdir, 'clean', () => work(false));
}
