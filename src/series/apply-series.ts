import { existsSync, rmSync } from 'node:fs';
import { rmdir } from 'node:fs/promises';

import { isInterrupted, uninterruptible } from '../adapters/interrupt.js';
import { withLock } from '../adapters/lock.js';
import { formatConflict, type Conflict } from './conflict.js';
import { UserError } from '../core/errors.js';
import { plannedPaths, type ApplyPlan } from './plan.js';
import { ensureCheckout, verifySourceExists } from './checkout.js';
import { readRecordedSource, recordSource } from './source.js';
import type { Context } from './context.js';
import {
  backupRef,
  clearUnfinishedCheckout,
  exportedSeries,
  saveUserWork,
  savedWorkLines,
  undoFailedSwitch,
  verifyNoUnmerged,
  type SavedWork,
} from './saved-work.js';
import { classifyHead, type HeadState } from './head-state.js';
import type { Git, StatusEntry } from '../adapters/git.js';
import { appliedCommitMessage, buildTree } from './applied-tree.js';

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

/** The applied commit and the paths it changes, or (commit null) why the series does not apply. */
type Applied = { commit: string; changed: string[] } | { commit: null; conflicts: Conflict[] };

/**
 * Undoes a checkout that failed half-way. A first checkout (HEAD unborn) goes
 * back to no files: all of them when this run made the checkout, else those
 * it wrote (anything else is saved first). A switch puts back the paths it
 * changes. Best effort: the first failure is the one reported.
 */
async function undoCheckout(
  git: Git,
  head: HeadState,
  created: boolean,
  targets: string[],
  changed: readonly string[],
): Promise<void> {
  try {
    if (head.kind === 'empty')
      await clearUnfinishedCheckout(git, targets, {
        scope: created ? 'all' : 'in-the-way',
        save: !created,
        reason: 'apply',
      });
    else await undoFailedSwitch(git, changed);
  } catch {
    // What is left is what a later apply clears (first checkout) or names as changed files (switch).
  }
}

/** What the steps of one apply share. */
interface ApplyRun {
  ctx: Context;
  plan: ApplyPlan;
  options: ApplySeriesOptions;
  pinned: string;
  base: Omit<ApplyData, 'status' | 'head' | 'changed' | 'localEdits' | 'fetched' | 'saved'>;
}

/** The checkout as `ensureCheckout` left it, and the applied commit to switch it to. */
interface Switch {
  git: Git;
  head: HeadState;
  created: boolean;
  commit: string;
  changed: string[];
  dirtyEntries: StatusEntry[];
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
    // What the run would fetch from must be there: a dry run says so now, not the real run later.
    verifySourceExists(ctx.source);
    return { ...base, status: 'would-clone', head: null, changed: plannedPaths(plan), localEdits: [], fetched: false };
  }
  const apply = () => applyToCheckout({ ctx, plan, options, pinned, base });
  // A first apply that fails leaves no workdir: the folder it made for the lock is removed when
  // nothing else is in it (rmdir refuses a folder that is not empty, so nothing else is lost).
  const fresh = !existsSync(ctx.workdir);
  try {
    return await (options.lockHeld ? apply() : withLock(ctx.workdir, 'apply', apply));
  } catch (error) {
    if (fresh) await rmdir(ctx.workdir).catch(() => undefined);
    throw error;
  }
}

/** The apply itself, under the workdir lock: fetch, build the applied commit, check it out. */
async function applyToCheckout(run: ApplyRun): Promise<ApplyData> {
  const { ctx, plan, options, pinned, base } = run;
  // The commands after this one fetch from the same source when not told otherwise. A workdir's first
  // source is recorded before the fetch, so an apply interrupted while fetching is run again from it; a
  // fetch that fails takes the record back.
  const records = !options.dryRun && !options.duringBump && ctx.source.origin !== 'apply';
  const first = records && (await readRecordedSource(ctx.layout)) === null;
  if (first) recordSource(ctx.layout, ctx.source);
  const { git, fetched, head, created } = await ensureCheckout(ctx, { files: false }).catch((error: unknown) => {
    if (first && !isInterrupted()) rmSync(ctx.layout.source, { force: true });
    throw error;
  });
  if (records && !first) recordSource(ctx.layout, ctx.source);

  if (head.kind === 'applied' && head.inputHash === plan.inputHash) {
    const localEdits = (await git.status(plannedPaths(plan))).map((e) => e.path);
    return { ...base, status: 'already-applied', head: head.commit, changed: [], localEdits, fetched };
  }

  const threeWay = options.threeWay ?? false;
  const current = head.kind === 'empty' ? pinned : head.commit;
  const applied = await buildApplied(run, git, current, head.kind === 'applied' ? head.base : undefined);
  if (applied.commit === null) {
    // A checkout without files yet gets the pinned commit, to refresh the patch against.
    if (head.kind === 'empty' && !options.dryRun) await git.checkoutDetached(pinned);
    throw conflictError(applied.conflicts, { threeWay });
  }
  const { commit, changed } = applied;
  // A checkout made by this run holds nothing of the user's that could be in the way; one whose first
  // checkout never finished (HEAD unborn) is cleared before the checkout, keeping what is not the tool's.
  if (!created) await verifyNoUnmerged(git);
  const dirtyEntries = created || head.kind === 'empty' ? [] : await git.status(changed);
  const dirty = dirtyEntries.map((e) => e.path);
  if (!options.force) verifyNothingInTheWay(git, head, dirty, pinned);

  if (options.dryRun) {
    const status = 'would-apply';
    return { ...base, status, head: head.kind === 'empty' ? null : head.commit, changed, localEdits: dirty, fetched };
  }

  // Saving the user's edits and switching the checkout finish together once begun: Ctrl-C waits.
  const saved = await uninterruptible(async () => {
    const step = { git, head, created, commit, changed, dirtyEntries };
    const kept = await keepUserWork(run, step);
    await switchCheckout(run, step);
    return kept;
  });
  if (saved) ctx.log.info(savedWorkLines(saved, 'in-the-way').join('\n'));
  return { ...base, status: 'applied', head: commit, changed, localEdits: [], fetched, ...(saved ? { saved } : {}) };
}

/**
 * The applied commit on top of the pinned one and the paths it changes from `current`, or why the
 * series does not apply; `since` is the previous pin, when the checkout's series is on one.
 */
async function buildApplied(run: ApplyRun, git: Git, current: string, since?: string): Promise<Applied> {
  const built = await buildTree(git, run.plan, { threeWay: run.options.threeWay ?? false, since });
  if (built.tree === null) return { commit: null, conflicts: built.conflicts };
  const commit = await git.commitTree(built.tree, run.pinned, appliedCommitMessage(run.plan));
  return { commit, changed: await git.changedPaths(current, commit) };
}

/** Refuses (without `--force`) a HEAD that is not the tool's, and uncommitted edits in files apply would change. */
function verifyNothingInTheWay(git: Git, head: HeadState, dirty: string[], pinned: string): void {
  if (head.kind === 'foreign') {
    throw new UserError(
      'FOREIGN_HEAD',
      `HEAD of ${git.dir} is ${head.commit.slice(0, 12)}, which is neither the pinned commit nor an applied series.`,
      {
        hint: 'Run `mlx-storage-pr reset` (it saves your commits and edits first), or `apply --force` to save them and apply.',
        details: { head: head.commit, pinned },
      },
    );
  }
  if (dirty.length > 0) {
    throw new UserError(
      'DIRTY_CHECKOUT',
      `The checkout has uncommitted changes in files apply would change:\n  ${dirty.join('\n  ')}`,
      {
        hint: 'If the edits belong to the PR, `mlx-storage-pr export` takes them into templates/ and patches/; otherwise rerun with --force: it stashes the changes to these files (only these) first and prints how to restore them.',
        details: { dirty },
      },
    );
  }
}

/**
 * Saves what of the user's the switch would lose: files of a first checkout
 * that stopped half-way, edits and commits under `--force`, and a series
 * commit of export's the project no longer renders. Returns what it saved.
 */
async function keepUserWork(run: ApplyRun, step: Switch): Promise<SavedWork | undefined> {
  const { ctx, plan, options, pinned } = run;
  const { git, head, created, commit, dirtyEntries } = step;
  let kept: SavedWork | undefined;
  if (head.kind === 'empty' && !created) {
    const cleared = await clearUnfinishedCheckout(git, [commit, pinned], {
      scope: 'in-the-way',
      save: true,
      reason: 'apply',
    });
    if (cleared !== null)
      ctx.log.info(`Finishing the first checkout of ${git.dir}, which stopped half-way in an earlier run.`);
    kept = cleared?.saved ?? undefined;
  }
  if (options.force && (dirtyEntries.length > 0 || head.kind === 'foreign')) {
    kept = await saveUserWork(git, dirtyEntries, {
      reason: 'apply',
      only: true,
      ...(head.kind === 'foreign' ? { head: head.commit } : {}),
    });
  }
  // A series commit that export made and the project no longer renders (another workdir's export, or an
  // edit of templates/ or patches/, changed the project since) may hold edits nowhere else: it is kept.
  if (head.kind === 'applied' && head.inputHash !== plan.inputHash && (await exportedSeries(git)) === head.commit) {
    const ref = backupRef('export', new Date());
    await git.updateRef(ref, head.commit);
    kept = {
      ...(kept ?? { files: [], untracked: [], refs: [], restore: [] }),
      headBackup: head.commit,
    };
    kept.refs.push(ref);
    kept.restore.push(`git -C ${git.dir} checkout -b my-work ${head.commit}`);
  }
  return kept;
}

/** Moves the branch onto the applied commit and checks that HEAD is it; a checkout that fails half-way is undone. */
async function switchCheckout(run: ApplyRun, step: Switch): Promise<void> {
  const { ctx, pinned } = run;
  const { git, head, created, commit, changed } = step;
  try {
    await git.checkoutBranch(ctx.config.branch, commit);
  } catch (error) {
    // A checkout that failed half-way (a full disk) is undone: no file is left half switched.
    await undoCheckout(git, head, created, [commit, pinned], changed);
    throw error;
  }
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
}
