import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { Git } from '../adapters/git.js';
import { pausePoint, uninterruptible } from '../adapters/interrupt.js';
import { withWriterLocks } from '../adapters/lock.js';
import { ProcessError } from '../adapters/process-error.js';
import { CONFIG_FILE, metalCppUrl, parseConfigText } from '../series/config.js';
import { UserError } from '../core/errors.js';
import type { ChainFile } from './export-plan.js';
import { configAt, mlxVersion, repinConfigText, repinMetalCppText } from './repin.js';
import { fromLines, hunkApplies, splitPatch, toLines, type PatchStep } from '../core/patch.js';
import { DEFAULT_WORKDIR } from '../core/paths.js';
import { buildPlan, patchedPaths, planSteps, type ApplyPlan } from '../series/plan.js';
import { applySeries } from '../series/apply-series.js';
import { abortedWorkLines, saveAbortedWork, type AbortedWork } from './bump-save.js';
import {
  readBumpState,
  removeBumpFolder,
  restoreProjectFiles,
  startBump,
  type BumpState,
} from '../series/bump-state.js';
import { addWorktree, contentsAt, ensureCheckout } from '../series/checkout.js';
import type { Context } from '../series/context.js';
import {
  chainOf,
  planSeriesRewrite,
  readEdits,
  treeWithTexts,
  verifyBuildsTree,
  writeProjectFiles,
} from './series-rewrite.js';
import { verifyNoUnmerged } from '../series/saved-work.js';
import { classifyHead, type HeadState } from '../series/head-state.js';

export type BumpResult = 'clean' | 'merged' | 'upstream' | 'conflict';

/** What became of one file of one patch on the new commit. */
export interface BumpPatchResult {
  patch: string;
  file: string;
  /** `clean`: applies as it is; `merged`: only with a three-way merge; `upstream`: the new commit already has the change; `conflict`. */
  result: BumpResult;
  conflicts: number;
}

export interface BumpData {
  command: 'bump';
  status: 'bumped' | 'already-pinned' | 'continued' | 'aborted';
  ref: string;
  from: { commit: string; version: string };
  to: { commit: string; version: string };
  patches: BumpPatchResult[];
  /** Project files written (the config included) or, for --abort, put back. */
  written: string[];
  /** Patches removed because the new commit already has their change. */
  removed: string[];
  /** The checkout's series commit after the command. */
  head: string | null;
  /** `--abort`: the work of the bump it kept before giving it up. */
  saved?: AbortedWork;
  /** `--to`: where the new commit stands against the old pin (only `newer` without --allow-older). */
  relation?: TargetRelation;
}

/** The new commit descends from the pin (`newer`), is one of its ancestors (`older`), or neither (`side`: another branch). */
export type TargetRelation = 'newer' | 'older' | 'side';

const TARGET_REF = 'refs/mlx-storage-pr/bump-target';

/** ` --workdir <dir>` when the workdir is not the default, so printed commands work as typed. */
function workdirFlag(ctx: Context): string {
  return ctx.workdir === path.join(ctx.projectRoot, DEFAULT_WORKDIR) ? '' : ` --workdir ${ctx.workdir}`;
}

/** The checkout must hold nothing a move to the new commit would overwrite or leave behind. */
async function verifyCheckoutReady(git: Git, head: HeadState): Promise<void> {
  await verifyNoUnmerged(git);
  if (head.kind === 'foreign')
    throw new UserError(
      'FOREIGN_HEAD',
      `HEAD of ${git.dir} (${head.commit.slice(0, 12)}) has commits of yours on top of the series; bump would leave them behind.`,
      {
        hint: 'Take them into the series first (`mlx-storage-pr export`), or set them aside with `mlx-storage-pr reset`; then bump again.',
        details: { head: head.commit },
      },
    );
  const dirty = (await git.status()).filter((e) => e.code !== '??').map((e) => e.path);
  if (dirty.length > 0)
    throw new UserError(
      'DIRTY_CHECKOUT',
      `The checkout has uncommitted changes, which bump would leave on the old commit:\n  ${dirty.join('\n  ')}`,
      {
        hint: 'Take them into the series first (`mlx-storage-pr export`), or set them aside with `mlx-storage-pr reset` (it saves them); then bump again.',
        details: { dirty },
      },
    );
}

/** The commit `ref` names: a full commit id the checkout has, else fetched from the MLX source (commit, tag or branch). */
async function resolveTarget(ctx: Context, git: Git, given: string): Promise<string> {
  let ref = given;
  // git fetches no short id: a source on this machine resolves it (as `check --against` does), else the checkout may know it.
  if (/^[0-9a-f]{4,39}$/i.test(ref)) {
    const local = ctx.source.kind === 'path' ? new Git(ctx.source.display, ctx.log, ctx.env) : git;
    ref = (await local.resolveCommit(ref).catch(() => null)) ?? ref;
  }
  // A full id of a tag object the checkout has gives the tag's commit, as fetching it would.
  const known = /^[0-9a-f]{40}$/.test(ref) ? await git.resolveCommit(ref) : null;
  if (known !== null) return known;
  try {
    await git.fetchCommit(ctx.source.location, ref, { depth: 1, local: ctx.source.kind === 'path' });
  } catch (error) {
    if (!(error instanceof ProcessError)) throw error;
    throw new UserError(
      'COMMIT_NOT_FOUND',
      `The MLX source ${ctx.source.display} has no commit, tag or branch "${given}".`,
      {
        hint: `Name a full commit id, a tag (v0.30.0) or a branch of MLX${ctx.source.kind === 'path' ? '' : '; a short id works only with a source on this machine (--mlx-repo <path>)'}; a local mirror may need \`git fetch\` first. --verbose shows what git said.`,
        details: {
          source: ctx.source.display,
          ref: given,
          stderr: error.stderr.trim().split('\n').slice(-3).join('\n'),
        },
      },
    );
  }
  return (await git.raw(['rev-parse', '--verify', 'FETCH_HEAD^{commit}'])).trim();
}

/**
 * Where `to` stands against the pin `from`. The checkout holds both commits
 * without history (fetched with --depth 1), so the question goes to a
 * repository that has it: the MLX source when it is on this machine and
 * whole, else the checkout after fetching both commits' history back to the
 * older commit's time (a commit's descendants are younger than it, so the
 * path between them is in that history; only the range between the two
 * commits is fetched, as a bump applies the series across it anyway).
 */
async function targetRelation(ctx: Context, git: Git, from: string, to: string): Promise<TargetRelation> {
  let history = git;
  const local = ctx.source.kind === 'path' ? new Git(ctx.source.display, ctx.log, ctx.env) : null;
  if (local !== null && !(await local.isShallow())) history = local;
  else {
    const since = Math.min(await git.commitTime(from), await git.commitTime(to)) - 1;
    await git.fetchSince(ctx.source.location, [from, to], since, { local: ctx.source.kind === 'path' });
  }
  if (await history.isAncestor(from, to)) return 'newer';
  return (await history.isAncestor(to, from)) ? 'older' : 'side';
}

/** `bump --to` of a commit that does not descend from the pin, without --allow-older. */
function notForward(
  ctx: Context,
  ref: string,
  from: { commit: string; version: string },
  to: { commit: string; version: string },
  relation: 'older' | 'side',
): UserError {
  const target = `MLX ${to.commit.slice(0, 12)} (${ref}, ${to.version})`;
  const pin = `${from.commit.slice(0, 12)} (${from.version})`;
  const why =
    relation === 'older'
      ? `${target} is older than the pin ${pin}: it is one of the pin's ancestors.`
      : `${target} is not a descendant of the pin ${pin}: it is on another branch.`;
  return new UserError('USAGE', `${why} bump moves the pin forward; nothing was changed.`, {
    hint: `Name a commit that descends from the pin, or move the pin there on purpose with \`mlx-storage-pr bump --to ${ref} --allow-older${workdirFlag(ctx)}\`.`,
    details: { ref, from: from.commit, to: to.commit, relation },
  });
}

/**
 * The series moved onto `to` file by file: each patch's change (its file
 * before and after it on the old commit) is merged into the file on the new
 * commit with `git merge-file`, so upstream's changes and the patch's meet
 * as in a three-way merge; conflicts stay in the text as markers.
 */
async function rebaseSeries(
  git: Git,
  plan: ApplyPlan,
  reference: readonly PatchStep[],
  newContents: ReadonlyMap<string, string | null>,
  labels: { from: string; to: string },
): Promise<{ chain: ChainFile[]; results: BumpPatchResult[] }> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'mlx-storage-pr-bump-'));
  try {
    const files = new Map<string, ChainFile & { steps: Array<{ patch: string; post: string[] }> }>();
    const results: BumpPatchResult[] = [];
    const current = new Map<string, string>();
    const [ours, base, theirs] = ['ours', 'base', 'theirs'].map((n) => path.join(tmp, n)) as [string, string, string];
    for (const step of reference) {
      let file = files.get(step.path);
      if (file === undefined) {
        const start = newContents.get(step.path) ?? '';
        file = { path: step.path, base: toLines(start).lines, steps: [] };
        files.set(step.path, file);
        current.set(step.path, start);
      }
      const before = current.get(step.path) as string;
      await writeFile(ours, before);
      await writeFile(base, fromLines({ lines: step.pre.rendered, eofNewline: step.pre.eofNewline }));
      await writeFile(theirs, fromLines({ lines: step.post.rendered, eofNewline: step.post.eofNewline }));
      const conflicts = await git.mergeFile(ours, base, theirs, [
        `MLX ${labels.to}`,
        `MLX ${labels.from} (the old pin)`,
        `patches/${step.patch}`,
      ]);
      const after = await readFile(ours, 'utf8');
      const rendered = plan.patches.find((p) => p.name === step.patch)?.text ?? '';
      const hunks = splitPatch(rendered, `patches/${step.patch}`).sections[step.sectionIndex]?.hunks ?? [];
      const result: BumpResult =
        conflicts > 0
          ? 'conflict'
          : after === before
            ? 'upstream'
            : hunks.every((h) => hunkApplies(before, h))
              ? 'clean'
              : 'merged';
      results.push({ patch: step.patch, file: step.path, result, conflicts });
      file.steps.push({ patch: step.patch, post: toLines(after).lines });
      current.set(step.path, after);
    }
    return { chain: [...files.values()], results };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** The texts of the series' files on the new commit, as `chain` ends and the templates render. */
function finalTexts(
  plan: ApplyPlan,
  chain: readonly ChainFile[],
  reference: readonly PatchStep[],
): Map<string, string> {
  const texts = new Map<string, string>();
  for (const file of plan.files) texts.set(file.path, file.content);
  for (const file of chain) {
    const last = file.steps[file.steps.length - 1];
    const eof = [...reference].reverse().find((s) => s.path === file.path)?.post.eofNewline ?? true;
    texts.set(file.path, fromLines({ lines: [...(last?.post ?? file.base)], eofNewline: eof }));
  }
  return texts;
}

interface Finish {
  ref: string;
  from: { commit: string; version: string };
  to: { commit: string; version: string };
  chain: ChainFile[];
  reference: readonly PatchStep[];
  baseContents: ReadonlyMap<string, string | null>;
  results: BumpPatchResult[];
}

/**
 * The end of every bump: the patches regenerated against the new commit,
 * checked by building the series there with git, the config moved to the
 * new commit and version, and the checkout moved onto the new series. All
 * checks run before the first file is written.
 */
async function finishBump(ctx: Context, git: Git, f: Finish): Promise<BumpData> {
  const { inputs } = await ctx.project();
  const inputsAt = { ...inputs, config: configAt(inputs.config, f.to) };
  const plan = buildPlan(inputsAt);
  const edited = finalTexts(plan, f.chain, f.reference);
  const result = await planSeriesRewrite({
    git,
    base: f.to.commit,
    inputs: inputsAt,
    plan,
    baseContents: f.baseContents,
    chain: f.chain,
    reference: f.reference,
    edited,
    others: [],
    includeNew: false,
    regenerateAll: true,
  });
  const tree = await verifyBuildsTree(git, result.plan, await treeWithTexts(git, f.to.commit, edited));

  const head = await classifyHead(git, f.from.commit);
  await verifyCheckoutReady(git, head);
  if (head.kind !== 'empty') {
    const inTheWay = await git.status(await git.changedPaths(head.commit, tree));
    if (inTheWay.length > 0)
      throw new UserError(
        'DIRTY_CHECKOUT',
        `Files in the checkout are in the way of the new commit:\n  ${inTheWay.map((e) => e.path).join('\n  ')}`,
        { hint: 'Move them away (or `mlx-storage-pr reset`, which saves them), then run the command again.' },
      );
  }
  const configFile = path.join(ctx.projectRoot, CONFIG_FILE);
  const configText = await readFile(configFile, 'utf8');
  const repinned = repinConfigText(configText, f.from, f.to);
  if (repinned === null)
    throw new UserError(
      'CONFIG_INVALID',
      `${CONFIG_FILE} does not hold upstream.commit ${f.from.commit} and upstream.version ${f.from.version} as bump expects.`,
      {
        hint: 'The config changed during the bump: put it back (`mlx-storage-pr bump --abort` does), then bump again.',
      },
    );
  const metalCpp = await movedMetalCpp(ctx, git, f.to.commit, repinned);
  const newConfig = metalCpp?.text ?? repinned;
  parseConfigText(newConfig, configFile);

  // The new series and config, and the checkout moved onto them, finish together once begun: Ctrl-C waits.
  const applied = await uninterruptible(async () => {
    await writeProjectFiles(ctx.projectRoot, [
      ...result.writes,
      { file: CONFIG_FILE, before: configText, after: newConfig },
    ]);
    await ctx.reloadProject();
    // A checkout on the clean old pin (no series applied yet) goes to the new one first: apply takes it from there.
    if (head.kind === 'pinned') await git.checkoutDetached(f.to.commit);
    return applySeries(ctx, { lockHeld: true, duringBump: true });
  });
  if (metalCpp)
    ctx.log.warn(
      `upstream.metalCpp.url: ${metalCpp.from} -> ${metalCpp.to} (MLX's CMake at the new pin names it)` +
        (metalCpp.clearedSha256
          ? '; upstream.metalCpp.sha256 cleared: the next download says the new hash, check the archive and set it.'
          : '.'),
    );
  // Clean-up only: the pin has moved; a ref left behind is harmless, the next bump overwrites it.
  await git.raw(['update-ref', '-d', TARGET_REF]).catch(() => undefined);
  return {
    command: 'bump',
    status: 'bumped',
    ref: f.ref,
    from: f.from,
    to: f.to,
    patches: f.results,
    written: [...result.writes.filter((w) => w.after !== null).map((w) => w.file), CONFIG_FILE],
    removed: result.writes.filter((w) => w.after === null).map((w) => w.file),
    head: applied.head,
  };
}

function bumpConflict(ctx: Context, state: BumpState, results: BumpPatchResult[], lead: string): UserError {
  const flags = workdirFlag(ctx);
  const files = [...new Set(state.conflicts.map((c) => c.file))];
  const next = [
    `Resolve each <<<<<<< ... >>>>>>> block in ${files.map((f) => path.join(state.worktree, f)).join(', ')}`,
    `mlx-storage-pr export${flags}`,
    `mlx-storage-pr bump --continue${flags}`,
  ];
  return new UserError(
    'BUMP_CONFLICT',
    [
      lead,
      ...state.conflicts.map((c) => `  patches/${c.patch}: ${c.file}: ${c.count} conflict${c.count === 1 ? '' : 's'}`),
      `The series is written in ${state.worktree} (MLX ${state.to.commit.slice(0, 12)}), conflict markers included. Next:`,
      `  1. ${next[0]}`,
      `  2. \`${next[1]}\` writes the result into patches/, against ${state.to.commit.slice(0, 12)}`,
      `  3. \`${next[2]}\``,
    ].join('\n'),
    {
      hint: `To give up, \`mlx-storage-pr bump --abort${flags}\` puts ${CONFIG_FILE}, templates/, patches/ and the checkout back as they were.`,
      details: {
        resumable: true,
        ref: state.ref,
        from: state.from,
        to: state.to,
        worktree: state.worktree,
        conflicts: state.conflicts,
        patches: results,
        next,
      },
    },
  );
}

/** A file the series writes that the new commit makes impossible: a template's file it has, a patched file it lacks. */
/** `upstream.metalCpp` moved to the archive MLX's CMake names at `commit`, when the config pins one and it changed. */
async function movedMetalCpp(
  ctx: Context,
  git: Git,
  commit: string,
  configText: string,
): Promise<{ text: string; from: string; to: string; clearedSha256: boolean } | null> {
  const pin = ctx.config.upstream.metalCpp;
  const cmake = await git.fileAt(commit, 'CMakeLists.txt');
  const url = cmake === null ? null : metalCppUrl(cmake);
  if (!pin || url === null) return null;
  const text = repinMetalCppText(configText, pin, url);
  return text === null ? null : { text, from: pin.url, to: url, clearedSha256: pin.sha256 !== undefined };
}

interface Blocked {
  patch: string;
  file: string;
  reason: 'file_exists' | 'file_missing';
}

/**
 * The series cannot even be merged onto the new commit: no worktree would
 * help, so nothing is started. Says, per file, what to change in the project
 * before running the same bump again.
 */
function bumpBlocked(
  ctx: Context,
  ref: string,
  from: { commit: string; version: string },
  to: { commit: string; version: string },
  blocked: readonly Blocked[],
): UserError {
  const at = `MLX ${to.commit.slice(0, 12)}`;
  const fixes = blocked.map((b) => {
    if (b.reason === 'file_missing')
      return `${b.patch} changes ${b.file}, which ${at} no longer has: edit that patch to change the file that replaced it, or take it out of patches/series.`;
    const variables = [...new Set([...b.patch.matchAll(/\{\{(\w+)\}\}/g)].map((m) => `"${m[1]}"`))];
    return variables.length > 0
      ? `${b.patch} makes ${b.file}, which ${at} already has: set ${variables.join(', ')} in the variables of ${CONFIG_FILE} to a path it does not have.`
      : `${b.patch} makes ${b.file}, which ${at} already has: move the template to a path it does not have.`;
  });
  return new UserError(
    'BUMP_CONFLICT',
    `The series cannot move to ${at} (${ref}):\n  ${blocked
      .map(
        (b) =>
          `${b.patch}: ${b.file}: ${b.reason === 'file_exists' ? 'the new commit already has this file' : 'the new commit no longer has this file'}`,
      )
      .join('\n  ')}`,
    {
      hint: `Nothing was changed and no bump was started (there is nothing to --continue or --abort). ${fixes.join(' ')} Then run \`mlx-storage-pr bump --to ${ref}${workdirFlag(ctx)}\` again.`,
      details: { resumable: false, ref, from, to, conflicts: blocked },
    },
  );
}

/** `bump --to <ref>`: moves the pin to `ref` and the series with it, or stops at the first conflict with a worktree to resolve it in. */
export async function bumpTo(ctx: Context, ref: string, options: { allowOlder: boolean }): Promise<BumpData> {
  return withWriterLocks(ctx.workdir, ctx.projectRoot, 'bump', async () => {
    if ((await readBumpState(ctx)) !== null) throw inProgress(ctx);
    const { git, head } = await ensureCheckout(ctx);
    await verifyCheckoutReady(git, head);
    const from = { commit: ctx.config.upstream.commit, version: ctx.config.upstream.version };
    const toCommit = await resolveTarget(ctx, git, ref);
    await git.updateRef(TARGET_REF, toCommit);
    const version = mlxVersion(
      await git.fileAt(toCommit, 'mlx/version.h'),
      await git.fileAt(toCommit, 'CMakeLists.txt'),
    );
    if (version === null)
      throw new UserError(
        'VERSION_NOT_FOUND',
        `MLX ${toCommit.slice(0, 12)} (${ref}) has no version in mlx/version.h or CMakeLists.txt.`,
        {
          hint: 'Name a commit of MLX itself (a release tag such as v0.30.0, or a commit of its main branch).',
          details: { ref, commit: toCommit },
        },
      );
    const to = { commit: toCommit, version };
    if (toCommit === from.commit)
      return {
        command: 'bump',
        status: 'already-pinned',
        ref,
        from,
        to,
        patches: [],
        written: [],
        removed: [],
        head: head.kind === 'empty' ? null : head.commit,
      };
    const relation = await targetRelation(ctx, git, from.commit, toCommit);
    if (relation !== 'newer' && !options.allowOlder) throw notForward(ctx, ref, from, to, relation);

    const { inputs, plan } = await ctx.project();
    const paths = patchedPaths(plan);
    const oldContents = await contentsAt(git, from.commit, paths);
    const newContents = await contentsAt(git, toCommit, paths);
    const reference = planSteps(plan, inputs, oldContents);

    const blocked: Blocked[] = [];
    for (const file of plan.files)
      if ((await git.fileAt(toCommit, file.path)) !== null)
        blocked.push({ patch: `templates/${file.template}`, file: file.path, reason: 'file_exists' });
    for (const file of paths)
      if (oldContents.get(file) != null && newContents.get(file) == null)
        blocked.push({
          patch: `patches/${reference.find((s) => s.path === file)?.patch ?? '?'}`,
          file,
          reason: 'file_missing',
        });
    if (blocked.length > 0) throw bumpBlocked(ctx, ref, from, to, blocked);

    const { chain, results } = await rebaseSeries(git, plan, reference, newContents, {
      from: from.commit.slice(0, 12),
      to: toCommit.slice(0, 12),
    });
    if (results.every((r) => r.result !== 'conflict'))
      return {
        ...(await finishBump(ctx, git, { ref, from, to, chain, reference, baseContents: newContents, results })),
        relation,
      };

    // Stop: write the series with its conflicts into a worktree of the new commit and keep what --abort needs.
    const worktree = ctx.layout.bump.worktree;
    await rm(ctx.layout.bump.root, { recursive: true, force: true });
    await addWorktree(git, worktree, toCommit);
    for (const [file, text] of finalTexts(plan, chain, reference)) {
      await mkdir(path.dirname(path.join(worktree, file)), { recursive: true });
      await writeFile(path.join(worktree, file), text);
    }
    const state = await startBump(ctx, {
      format: 1,
      ref,
      from,
      to,
      worktree,
      head: head.kind === 'empty' ? null : head.commit,
      conflicts: results
        .filter((r) => r.result === 'conflict')
        .map((r) => ({ patch: r.patch, file: r.file, count: r.conflicts })),
      chain: chain.map((c) => ({
        path: c.path,
        base: newContents.get(c.path) ?? '',
        steps: c.steps.map((s) => ({ patch: s.patch, post: `${s.post.join('\n')}${s.post.length ? '\n' : ''}` })),
      })),
    });
    await pausePoint('bump-saved');
    throw bumpConflict(
      ctx,
      state,
      results,
      `The series does not apply to MLX ${toCommit.slice(0, 12)} (${ref}, ${version}) without conflicts:`,
    );
  });
}

function inProgress(ctx: Context): UserError {
  const flags = workdirFlag(ctx);
  return new UserError('BUMP_IN_PROGRESS', 'A bump is in progress in this workdir.', {
    hint: `Finish it (\`mlx-storage-pr export${flags}\`, then \`mlx-storage-pr bump --continue${flags}\`) or give it up (\`mlx-storage-pr bump --abort${flags}\`); \`mlx-storage-pr status\` shows it.`,
  });
}

function noBump(ctx: Context, what: string): UserError {
  return new UserError('NO_BUMP', `No bump is in progress in ${ctx.workdir}: nothing to ${what}.`, {
    hint: 'Start one with `mlx-storage-pr bump --to <commit|tag|branch>`.',
  });
}

/** `bump --continue`: after the conflicts were resolved and exported, finishes the bump. */
export async function continueBump(ctx: Context): Promise<BumpData> {
  return withWriterLocks(ctx.workdir, ctx.projectRoot, 'bump', async () => {
    const state = await readBumpState(ctx);
    if (state === null) throw noBump(ctx, 'continue');
    const git = await ctx.checkout();
    if (git === null)
      throw new UserError('NOT_APPLIED', `The checkout ${ctx.layout.checkout} is gone.`, {
        hint: 'Run `mlx-storage-pr bump --abort`, then `mlx-storage-pr apply` and bump again.',
      });
    const { inputs } = await ctx.project();
    const inputsAt = { ...inputs, config: configAt(inputs.config, state.to) };
    const plan = buildPlan(inputsAt);
    const contents = await contentsAt(git, state.to.commit, patchedPaths(plan));
    let steps: PatchStep[];
    try {
      steps = planSteps(plan, inputsAt, contents);
    } catch (error) {
      if (!(error instanceof UserError) || error.code !== 'PATCH_CONFLICT') throw error;
      throw bumpConflict(
        ctx,
        state,
        [],
        `patches/ does not apply to MLX ${state.to.commit.slice(0, 12)} yet (${error.message}); the conflicts have not been exported:`,
      );
    }
    const worktree = new Git(state.worktree, ctx.log, ctx.env);
    const { edited, others } = await readEdits(worktree, plan, state.to.commit, state.to.commit);
    const finals = finalTexts(plan, chainOf(steps, contents), steps);
    const unexported = [
      ...[...edited]
        .filter(([file, text]) => text !== (finals.get(file) ?? contents.get(file) ?? null))
        .map(([file]) => file),
      ...others.map((o) => o.path),
    ];
    if (unexported.length > 0)
      throw new UserError(
        'DIRTY_CHECKOUT',
        `${state.worktree} holds changes that patches/ and templates/ do not have yet:\n  ${unexported.join('\n  ')}`,
        {
          hint: `Run \`mlx-storage-pr export${workdirFlag(ctx)}\` (add --include-new for new files) or undo them, then \`mlx-storage-pr bump --continue${workdirFlag(ctx)}\` again.`,
          details: { files: unexported },
        },
      );
    const data = await finishBump(ctx, git, {
      ref: state.ref,
      from: state.from,
      to: state.to,
      chain: chainOf(steps, contents),
      reference: steps,
      baseContents: contents,
      results: [],
    });
    await removeWorktree(git, state);
    await removeBumpFolder(ctx);
    return { ...data, status: 'continued' };
  });
}

async function removeWorktree(git: Git | null, state: BumpState): Promise<void> {
  await rm(state.worktree, { recursive: true, force: true });
  if (git !== null) {
    await git.raw(['worktree', 'prune']);
    // Clean-up only: a ref left behind is harmless, the next bump overwrites it.
    await git.raw(['update-ref', '-d', TARGET_REF]).catch(() => undefined);
  }
}

/** The template files as the bump wrote them into its worktree; none when the project no longer reads (all is then kept). */
async function renderedAt(ctx: Context, state: BumpState): Promise<Map<string, string>> {
  try {
    const { inputs } = await ctx.project();
    return new Map(
      buildPlan({ ...inputs, config: configAt(inputs.config, state.to) }).files.map((f) => [f.path, f.content]),
    );
  } catch (error) {
    if (error instanceof UserError) return new Map();
    throw error;
  }
}

/** `bump --abort`: puts the config, templates/, patches/ and the checkout back as they were before the bump. */
export async function abortBump(ctx: Context): Promise<BumpData> {
  return withWriterLocks(ctx.workdir, ctx.projectRoot, 'bump', async () => {
    const state = await readBumpState(ctx);
    if (state === null) throw noBump(ctx, 'abort');
    const saved = await saveAbortedWork(ctx, await ctx.checkout(), state, await renderedAt(ctx, state));
    const kept = abortedWorkLines(saved);
    if (kept.length > 0) ctx.log.info(kept.join('\n'));
    await uninterruptible(() => restoreProjectFiles(ctx, state));
    await ctx.reloadProject();
    const git = await ctx.checkout();
    await removeWorktree(git, state);
    let head: string | null = null;
    if (git !== null) {
      // A `--continue` that stopped after moving the checkout leaves it on the new commit: move it back.
      const now = await classifyHead(git, state.from.commit);
      if (now.kind === 'applied' && now.base === state.to.commit)
        head = (await applySeries(ctx, { lockHeld: true, duringBump: true })).head;
      else head = now.kind === 'empty' ? null : now.commit;
    }
    await removeBumpFolder(ctx);
    return {
      command: 'bump',
      status: 'aborted',
      ref: state.ref,
      from: state.from,
      to: state.to,
      patches: [],
      written: [CONFIG_FILE, 'templates/', 'patches/'],
      removed: [],
      head,
      saved,
    };
  });
}
