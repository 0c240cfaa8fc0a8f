import { existsSync } from 'node:fs';

import { uninterruptible } from '../adapters/interrupt.js';
import { withLock } from '../adapters/lock.js';
import { formatConflict, type Conflict } from './conflict.js';
import { UserError } from '../core/errors.js';
import { plannedPaths } from './plan.js';
import { ensureCheckout } from './checkout.js';
import { recordSource } from './source.js';
import type { Context } from './context.js';
import {
  classifyHead,
  saveUserWork,
  savedWorkLines,
  verifyNoUnmerged,
  type HeadState,
  type SavedWork,
} from './checkout-state.js';
import type { Git } from '../adapters/git.js';
import { appliedCommitMessage, buildTree } from './tree.js';

export interface ApplySeriesOptions {
  dryRun?: boolean | undefined;
  force?: boolean | undefined;
  threeWay?: boolean | undefined;
  /** The caller already holds the workdir lock (for example `format --fix` around its rewrite and this apply). */
  lockHeld?: boolean | undefined;
  /** The caller is `bump` itself, which may apply while its state is kept. */
  duringBump?: boolean | undefined;
}

export type ApplyStatus = 'applied' | 'already-applied' | 'would-apply' | 'would-clone';

export interface ApplyData {
  command: 'apply';
  status: ApplyStatus;
  checkout: string;
  pinned: string;
  head: string | null;
  branch: string;
  inputHash: string;
  files: string[];
  patches: string[];
  changed: string[];
  localEdits: string[];
  fetched: boolean;
  saved?: SavedWork;
}

export function conflictError(conflicts: Conflict[], options: { threeWay?: boolean } = {}): UserError {
  return new UserError(
    'PATCH_CONFLICT',
    `The series does not apply to the pinned commit${options.threeWay ? ', not even with a three-way merge' : ''}:\n  ${conflicts.map(formatConflict).join('\n  ')}`,
    {
      hint: options.threeWay
        ? "The three-way merge could not resolve it either (the patch needs an `index` line naming a blob the checkout has, and changes that do not overlap upstream's). Refresh the named patch by hand: edit the file in the checkout, then `git diff`."
        : 'Refresh the named patch against the pinned commit (edit it in the checkout, then `git diff`), or try --3way.',
      details: { conflicts },
    },
  );
}

/**
 * Makes the checkout hold the rendered series: fetches the pinned commit when
 * needed, builds the applied tree in a temporary index, refuses a foreign HEAD
 * or edits in the way (unless `force`, which saves them first), then moves the
 * branch onto the applied commit. A dry run reports what it would do.
 */
export async function applySeries(ctx: Context, options: ApplySeriesOptions): Promise<ApplyData> {
  // During a bump patches/ may already fit the new commit while the config names the old one.
  if (!options.duringBump && existsSync(ctx.layout.bump.state)) {
    throw new UserError('BUMP_IN_PROGRESS', 'A bump is in progress in this workdir; apply waits until it ends.', {
      hint: 'Finish it (`mlx-storage-pr export`, then `mlx-storage-pr bump --continue`) or give it up (`mlx-storage-pr bump --abort`); `mlx-storage-pr status` shows it.',
    });
  }
  const { plan } = await ctx.project();
  const pinned = ctx.config.upstream.commit;
  const base = {
    command: 'apply' as const,
    checkout: ctx.layout.checkout,
    pinned,
    branch: ctx.config.branch,
    inputHash: plan.inputHash,
    files: plan.files.map((f) => f.path),
    patches: plan.patches.map((p) => p.name),
  };

  // Without a checkout a dry run only reads the project, so it takes no lock and creates no workdir.
  if (options.dryRun && (await ctx.checkout()) === null) {
    return { ...base, status: 'would-clone', head: null, changed: plannedPaths(plan), localEdits: [], fetched: false };
  }

  const apply = async (): Promise<ApplyData> => {
    const { git, fetched, head, created } = await ensureCheckout(ctx, { files: false });
    // The commands after this one fetch from the same source when not told otherwise.
    if (!options.dryRun && !options.duringBump && ctx.source.origin !== 'apply')
      await recordSource(ctx.layout, ctx.source);
    const paths = plannedPaths(plan);

    if (head.kind === 'applied' && head.inputHash === plan.inputHash) {
      const localEdits = (await git.status(paths)).map((e) => e.path);
      return { ...base, status: 'already-applied', head: head.commit, changed: [], localEdits, fetched };
    }

    // A checkout made by this run gets the pinned commit's files while the applied tree is built
    // beside them (in an index of its own); the switch to the applied commit then writes only the
    // files the series changes. Once begun, writing them is not interrupted.
    const pinnedFiles = created && !options.dryRun ? uninterruptible(() => git.checkoutDetached(pinned)) : null;
    if (pinnedFiles === null) return applyTree(git, head, created, fetched, null);
    try {
      return await applyTree(git, head, created, fetched, pinnedFiles);
    } finally {
      // No git is left writing the checkout when the lock is given back.
      await pinnedFiles.catch(() => undefined);
    }
  };

  /** Builds the applied commit and moves the branch onto it; `pinnedFiles`: the pinned commit's files being written. */
  const applyTree = async (
    git: Git,
    head: HeadState,
    created: boolean,
    fetched: boolean,
    pinnedFiles: Promise<void> | null,
  ): Promise<ApplyData> => {
    const built = await buildTree(git, plan, { threeWay: options.threeWay ?? false });
    if (built.tree === null) {
      // A checkout without files yet gets the pinned commit, to refresh the patch against.
      if (pinnedFiles !== null) await pinnedFiles;
      else if (head.kind === 'empty' && !options.dryRun) await git.checkoutDetached(pinned);
      throw conflictError(built.conflicts, { threeWay: options.threeWay ?? false });
    }

    const commit = await git.commitTree(built.tree, pinned, appliedCommitMessage(plan));
    const current = head.kind === 'empty' ? pinned : head.commit;
    const changed = await git.changedPaths(current, commit);
    // A checkout made by this run holds nothing of the user's that could be in the way.
    if (!created) await verifyNoUnmerged(git);
    const dirtyEntries = created ? [] : await git.status(changed);
    const dirty = dirtyEntries.map((e) => e.path);

    if (head.kind === 'foreign' && !options.force) {
      throw new UserError(
        'FOREIGN_HEAD',
        `HEAD of ${git.dir} is ${head.commit.slice(0, 12)}, which is neither the pinned commit nor an applied series.`,
        {
          hint: 'Run `mlx-storage-pr reset` (it saves your commits and edits first), or `apply --force` to save them and apply.',
          details: { head: head.commit, pinned },
        },
      );
    }
    if (dirty.length > 0 && !options.force) {
      throw new UserError(
        'DIRTY_CHECKOUT',
        `The checkout has uncommitted changes in files apply would change:\n  ${dirty.join('\n  ')}`,
        {
          hint: 'If the edits belong to the PR, `mlx-storage-pr export` takes them into templates/ and patches/; otherwise rerun with --force: it stashes the changes to these files (only these) first and prints how to restore them.',
          details: { dirty },
        },
      );
    }

    if (options.dryRun) {
      return {
        ...base,
        status: 'would-apply',
        head: head.kind === 'empty' ? null : head.commit,
        changed,
        localEdits: dirty,
        fetched,
      };
    }

    // Saving the user's edits and switching the checkout finish together once begun: Ctrl-C waits.
    const saved = await uninterruptible(async () => {
      let kept: SavedWork | undefined;
      if (options.force && (dirty.length > 0 || head.kind === 'foreign')) {
        kept = await saveUserWork(git, dirtyEntries, {
          reason: 'apply',
          only: true,
          ...(head.kind === 'foreign' ? { head: head.commit } : {}),
        });
      }
      await pinnedFiles;
      await git.checkoutBranch(ctx.config.branch, commit);
      // git's files show the branch on the new commit; anything else (a hook moved it, a packed ref) is asked of git.
      const after = (await git.branchTipFromFiles()) === commit ? null : await classifyHead(git, pinned);
      if (after !== null && (after.kind !== 'applied' || after.commit !== commit || after.base !== pinned)) {
        throw new UserError(
          'HEAD_MISMATCH',
          `After apply, HEAD of ${git.dir} is not the applied commit on top of ${pinned}.`,
          {
            hint: 'Run `mlx-storage-pr status` to see the checkout, then `mlx-storage-pr reset`.',
          },
        );
      }
      return kept;
    });
    if (saved) ctx.log.info(savedWorkLines(saved, 'in-the-way').join('\n'));
    return { ...base, status: 'applied', head: commit, changed, localEdits: [], fetched, ...(saved ? { saved } : {}) };
  };
  return options.lockHeld ? apply() : withLock(ctx.workdir, 'apply', apply);
}
