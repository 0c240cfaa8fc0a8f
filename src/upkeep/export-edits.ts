import { Git } from '../adapters/git.js';
import { uninterruptible } from '../adapters/interrupt.js';
import { withWriterLocks } from '../adapters/lock.js';
import { UserError } from '../core/errors.js';
import type { ChainFile } from './export-plan.js';
import { toLines, type PatchStep } from '../core/patch.js';
import { buildPlan, patchedPaths, planSteps, plannedPaths } from '../series/plan.js';
import { readBumpState, type BumpState } from '../series/bump-state.js';
import { contentsAt } from '../series/checkout.js';
import type { Context } from '../series/context.js';
import { backupRef, markExported, verifyNoUnmerged } from '../series/saved-work.js';
import { appliedCommitMessage, inputHashOf } from '../series/applied-tree.js';
import {
  chainOf,
  exportDiff,
  exportedTexts,
  planSeriesRewrite,
  readEdits,
  type RewritePlan,
  treeWithTexts,
  verifyBuildsTree,
  writeProjectFiles,
} from './series-rewrite.js';
import { configAt } from './repin.js';

export interface ExportOptions {
  dryRun?: boolean | undefined;
  includeNew?: boolean | undefined;
}

export interface ExportData {
  command: 'export';
  status: 'exported' | 'would-export' | 'nothing-to-export';
  /** The folder the edits were read from: the checkout, or the bump's worktree during a bump. */
  source: string;
  /** The commit the series is written against. */
  base: string;
  /** True when a bump is in progress (the edits are taken against its new commit). */
  bump: boolean;
  /** Project files written or added (for --dry-run: that would be). */
  written: string[];
  /** Project files removed (stale patches). */
  removed: string[];
  exported: RewritePlan['exported'];
  notExported: RewritePlan['notExported'];
  /** Unified diff of templates/ and patches/. */
  diff: string;
  /** The checkout's new series commit, when it moved. */
  head: string | null;
  /** The commit HEAD was on, kept under a backup ref, when the series commit replaced commits on top of it. */
  savedHead?: { commit: string; ref: string };
}

/** The newest commit on HEAD's first-parent line that `apply` made on `base`, or null. */
async function findSeriesCommit(git: Git, base: string): Promise<{ commit: string; inputHash: string } | null> {
  if ((await git.head()) === null) return null;
  const out = await git.raw(['log', '--first-parent', '-n', '200', '--format=%H%x00%P%x00%B%x1e', 'HEAD', '--']);
  for (const record of out.split('\x1e')) {
    const [commit = '', parents = '', message = ''] = record.replace(/^\n/, '').split('\0');
    const inputHash = inputHashOf(message);
    if (parents.trim() === base && inputHash !== undefined) return { commit, inputHash };
  }
  return null;
}

function summary(plan: RewritePlan): Pick<ExportData, 'written' | 'removed' | 'exported' | 'notExported' | 'diff'> {
  return {
    written: plan.writes.filter((w) => w.after !== null).map((w) => w.file),
    removed: plan.writes.filter((w) => w.after === null).map((w) => w.file),
    exported: plan.exported,
    notExported: plan.notExported,
    diff: exportDiff(plan.writes),
  };
}

/**
 * `export`: takes the user's edits in the checkout (uncommitted, and commits
 * on top of the series commit) back into templates/ and patches/, then moves
 * the checkout onto the new series commit without touching its files. During
 * a bump it reads the bump's worktree and writes the series against the new
 * commit. Everything is worked out and checked before anything is written.
 */
export async function exportEdits(ctx: Context, options: ExportOptions): Promise<ExportData> {
  return withWriterLocks(ctx.workdir, ctx.projectRoot, 'export', async () => {
    // Another workdir's run may have written the project since this one read it.
    await ctx.reloadProject();
    const bump = await readBumpState(ctx);
    if (bump) return exportDuringBump(ctx, bump, options);
    return exportFromCheckout(ctx, options);
  });
}

/** `export` with no bump in progress: the edits in the checkout, against the pinned commit. */
async function exportFromCheckout(ctx: Context, options: ExportOptions): Promise<ExportData> {
  const git = await ctx.checkout();
  const pinned = ctx.config.upstream.commit;
  if (git === null)
    throw new UserError('NOT_APPLIED', `No MLX checkout in ${ctx.layout.checkout}: nothing to export.`, {
      hint: 'Run `mlx-storage-pr apply`, edit the files in the checkout, then export.',
    });
  await verifyNoUnmerged(git);
  const { inputs, plan } = await ctx.project();
  const series = await requireSeriesCommit(git, pinned, plan.inputHash);

  const baseContents = await contentsAt(git, pinned, patchedPaths(plan));
  const steps = planSteps(plan, inputs, baseContents);
  const { edited, others } = await readEdits(git, plan, pinned, series.commit);
  const result = await planSeriesRewrite({
    git,
    base: pinned,
    inputs,
    plan,
    baseContents,
    chain: chainOf(steps, baseContents),
    reference: steps,
    edited,
    others,
    includeNew: options.includeNew ?? false,
    regenerateAll: false,
  });
  const target = await treeWithTexts(
    git,
    series.commit,
    exportedTexts(
      result.exported.map((e) => e.path),
      edited,
      others,
    ),
  );
  const tree = await verifyBuildsTree(git, result.plan, target);
  const base = { command: 'export' as const, source: git.dir, base: pinned, bump: false, ...summary(result) };
  if (options.dryRun) return { ...base, status: 'would-export', head: null };
  if (result.writes.length === 0) return { ...base, status: 'nothing-to-export', head: null };
  const head = await git.head();

  const commit = await git.commitTree(tree, pinned, appliedCommitMessage(result.plan));
  const savedHead = await writeAndMoveCheckout(ctx, git, result.writes, { commit, head, series: series.commit });
  await ctx.reloadProject();
  return {
    ...base,
    status: 'exported',
    head: commit,
    ...(savedHead ? { savedHead } : {}),
  };
}

/**
 * The series commit the checkout's edits sit on: it must be one that apply
 * made on `pinned` from the project as it is now (`inputHash`).
 */
async function requireSeriesCommit(
  git: Git,
  pinned: string,
  inputHash: string,
): Promise<{ commit: string; inputHash: string }> {
  const series = await findSeriesCommit(git, pinned);
  if (series === null)
    throw new UserError(
      'NOT_APPLIED',
      `HEAD of ${git.dir} does not descend from a series commit that apply made on the pinned commit ${pinned.slice(0, 12)}.`,
      {
        hint: 'Export takes edits made on top of an applied series. Run `mlx-storage-pr status`; `mlx-storage-pr apply` (with --force to save your edits first) puts the series in place.',
      },
    );
  if (series.inputHash !== inputHash)
    throw new UserError(
      'NOT_APPLIED',
      `templates/, patches/ or the config changed since the checkout's series commit ${series.commit.slice(0, 12)} was applied; exporting now would undo those changes.`,
      {
        hint: `Run \`mlx-storage-pr apply --force\` (it saves your checkout edits in a stash and prints how to restore them), restore the edits, then export; or undo the changes in the project (\`git diff\` there shows them).`,
        details: { series: series.commit },
      },
    );
  return series;
}

/**
 * Writes the project files and moves the checkout's branch onto the new
 * series commit, keeping a HEAD with commits of its own under a backup ref.
 * Returns that backup, if any. A move that fails puts the project and the
 * branch back as they were.
 */
async function writeAndMoveCheckout(
  ctx: Context,
  git: Git,
  writes: RewritePlan['writes'],
  at: { commit: string; head: string | null; series: string },
): Promise<ExportData['savedHead']> {
  const { commit, head } = at;
  // Writing the project files and moving the checkout finish together once begun: Ctrl-C waits.
  const branchRef = `refs/heads/${ctx.config.branch}`;
  const before = { tip: await git.resolveRef(branchRef), on: await git.currentBranch() };
  return uninterruptible(async () => {
    await writeProjectFiles(ctx.projectRoot, writes);
    try {
      // The files are already what the new commit holds: only the branch, HEAD and the index move.
      let saved: ExportData['savedHead'];
      if (head !== null && head !== at.series) {
        const ref = backupRef('export', new Date());
        await git.updateRef(ref, head);
        saved = { commit: head, ref };
      }
      await git.updateRef(branchRef, commit);
      await git.raw(['symbolic-ref', 'HEAD', branchRef]);
      await git.readTree(commit);
      await markExported(git, commit);
      // Only refreshes the index's cached file stats; where that fails, git recomputes them on the next status.
      await git.raw(['update-index', '-q', '--refresh']).catch(() => undefined);
      return saved;
    } catch (error) {
      await undoMove(ctx, git, writes, { branchRef, before, head });
      throw error;
    }
  });
}

/**
 * Puts the project files, the branch and HEAD back as they were before an
 * export whose checkout could not move. Each step is done as well as it can be.
 */
async function undoMove(
  ctx: Context,
  git: Git,
  writes: RewritePlan['writes'],
  was: { branchRef: string; before: { tip: string | null; on: string | null }; head: string | null },
): Promise<void> {
  const { branchRef, before, head } = was;
  // The checkout could not move (its disk is full, say): the project and the branch go back as they were,
  // so that they still agree and the same export can run again.
  const back = writes.map((w) => ({ file: w.file, before: w.after, after: w.before }));
  await writeProjectFiles(ctx.projectRoot, back).catch(() => undefined);
  if (before.tip === null) await git.raw(['update-ref', '-d', branchRef]).catch(() => undefined);
  else await git.updateRef(branchRef, before.tip).catch(() => undefined);
  if (before.on === null && head !== null)
    await git.raw(['update-ref', '--no-deref', 'HEAD', head]).catch(() => undefined);
  else if (before.on !== null)
    await git.raw(['symbolic-ref', 'HEAD', `refs/heads/${before.on}`]).catch(() => undefined);
}

/**
 * `export` during a bump: the edits are read from the bump's worktree and the
 * series is written against the new commit. Until the first such export the
 * patches still fit the old commit, so the edits are measured against what
 * the bump left in the worktree and placeholders come back from the old
 * series; after it, the series is read on the new commit as usual.
 */
async function exportDuringBump(ctx: Context, bump: BumpState, options: ExportOptions): Promise<ExportData> {
  const to = bump.to.commit;
  const git = await ctx.checkout();
  if (git === null)
    throw new UserError('NOT_APPLIED', `The checkout ${ctx.layout.checkout} of the bump is gone.`, {
      hint: 'Run `mlx-storage-pr bump --abort` to put the project back as it was before the bump.',
    });
  const worktree = new Git(bump.worktree, ctx.log, ctx.env);
  await verifyNoUnmerged(worktree);
  const { inputs } = await ctx.project();
  const inputsAt = { ...inputs, config: configAt(inputs.config, bump.to) };
  const plan = buildPlan(inputsAt);
  const baseContents = await contentsAt(git, to, patchedPaths(plan));
  let chain: ChainFile[];
  let reference: PatchStep[];
  try {
    reference = planSteps(plan, inputsAt, baseContents);
    chain = chainOf(reference, baseContents);
  } catch (error) {
    if (!(error instanceof UserError) || error.code !== 'PATCH_CONFLICT') throw error;
    const oldContents = await contentsAt(git, bump.from.commit, patchedPaths(plan));
    reference = planSteps(buildPlan(inputs), inputs, oldContents);
    chain = bump.chain.map((f) => ({
      path: f.path,
      base: toLines(f.base).lines,
      steps: f.steps.map((s) => ({ patch: s.patch, post: toLines(s.post).lines })),
    }));
    const want = (file: string) => reference.filter((s) => s.path === file).map((s) => s.patch);
    if (chain.some((f) => want(f.path).join() !== f.steps.map((s) => s.patch).join()))
      throw new UserError(
        'EXPORT_REFUSED',
        'patches/ changed during the bump in a way export cannot follow (a patch of a conflicting file was added, removed or reordered).',
        {
          hint: 'Run `mlx-storage-pr bump --abort` and start the bump again. Nothing was written.',
        },
      );
  }
  const { edited, others } = await readEdits(worktree, plan, to, to);
  const result = await planSeriesRewrite({
    git: worktree,
    base: to,
    inputs: inputsAt,
    plan,
    baseContents,
    chain,
    reference,
    edited,
    others,
    includeNew: options.includeNew ?? false,
    regenerateAll: true,
  });
  const planned = plannedPaths(result.plan);
  const target = await treeWithTexts(
    worktree,
    to,
    exportedTexts([...new Set([...planned, ...result.exported.map((e) => e.path)])], edited, others),
  );
  await verifyBuildsTree(worktree, result.plan, target);
  const base = { command: 'export' as const, source: worktree.dir, base: to, bump: true, ...summary(result) };
  if (options.dryRun) return { ...base, status: 'would-export', head: null };
  if (result.writes.length === 0) return { ...base, status: 'nothing-to-export', head: null };
  // The config keeps the old commit until `bump --continue`.
  await uninterruptible(() => writeProjectFiles(ctx.projectRoot, result.writes));
  await ctx.reloadProject();
  return { ...base, status: 'exported', head: null };
}
