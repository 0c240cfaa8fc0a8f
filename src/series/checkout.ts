import { existsSync, mkdirSync, readdirSync, renameSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';

import { ifAbsentSync, isMarked, makeMarkedFolder } from '../adapters/files.js';
import { Git } from '../adapters/git.js';
import type { Logger } from '../adapters/log.js';
import { lastLines, ProcessError } from '../adapters/process-error.js';
import { UserError } from '../core/errors.js';
import { CONFIG_FILE } from './config.js';
import type { ApplyPlan } from './plan.js';
import type { Source } from './source.js';
import { isPartialCheckout, type TreeLayout } from '../core/workdir.js';
import type { Context } from './context.js';
import { classifyHead, type HeadState } from './head-state.js';

/**
 * The checkout in the workdir: opening it, fetching the pinned commit into
 * it, requiring it to hold the current series, and the worktrees of it that
 * the baseline and verify build.
 */

/**
 * Makes sure the checkout exists and holds the pinned commit. Fetches only
 * that commit (depth 1) and only when it is missing. A new checkout is built
 * in a side folder and moved into place, so a failed fetch leaves nothing.
 * With `files: false` a new checkout gets no files yet (HEAD unborn): a
 * caller that checks out another commit next saves writing the tree twice.
 */
export async function ensureCheckout(
  ctx: Context,
  options: { files?: boolean } = {},
): Promise<{ git: Git; created: boolean; fetched: boolean; head: HeadState }> {
  const { layout, source, log, env } = ctx;
  const commit = ctx.config.upstream.commit;
  const existing = await ctx.checkout();
  if (existing) {
    // HEAD at or on top of the pinned commit proves it is there without asking git again.
    const head = await classifyHead(existing, commit);
    if (head.kind === 'pinned' || (head.kind === 'applied' && head.base === commit)) {
      return { git: existing, created: false, fetched: false, head };
    }
    const type = await existing.objectType(commit);
    if (type === 'commit') return { git: existing, created: false, fetched: false, head };
    // A tag, tree or blob the checkout has already is refused without a fetch.
    if (type !== null) await verifyPinIsCommit(existing, commit);
  }

  const target = layout.checkout;
  await clearDeadSideFolders(layout.root);
  const dir = existing ? target : layout.partialCheckout(process.pid);
  // A new checkout is marked as the tool's when made (the mark goes with it when it moves into place).
  if (existing) mkdirSync(dir, { recursive: true });
  else await makeMarkedFolder(dir);
  const git = new Git(dir, log, env);
  try {
    if (!existing) await git.init();
    log.info(`Fetching MLX ${commit.slice(0, 12)} from ${source.display}`);
    await fetchPinned(git, source, commit, log);
    await verifyPinIsCommit(git, commit);
    await verifyFetchedCommit(git, source, commit);
    if (!existing) {
      if (options.files !== false) await git.checkoutDetached(commit);
      renameSync(dir, target);
    }
  } catch (error) {
    // Cleaning up must not hide why the fetch failed: a folder that cannot be removed is left behind.
    if (!existing) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    throw error;
  }
  const result = new Git(target, log, env);
  // A new checkout's HEAD is known without asking git.
  const head: HeadState = existing
    ? await classifyHead(result, commit)
    : options.files === false
      ? { kind: 'empty' }
      : { kind: 'pinned', commit };
  return { git: result, created: !existing, fetched: true, head };
}

/**
 * Removes the side folders of fetches that died. Callers hold the workdir
 * lock, so a side folder left here is from a run that died. Only folders the
 * tool marked as its own: one of the same name that it did not make is left alone.
 */
async function clearDeadSideFolders(root: string): Promise<void> {
  for (const entry of ifAbsentSync(() => readdirSync(root), [] as string[])) {
    const side = path.join(root, entry);
    if (isPartialCheckout(entry) && (await isMarked(side))) await rm(side, { recursive: true, force: true });
  }
}

/** Why a command needs the checkout, for the message that sends the user to `apply`. */
export interface CheckoutNeed {
  /** The end of the hint after "Run `mlx-storage-pr apply` first", e.g. ": format reads MLX's .clang-format from the checkout." */
  hint: string;
}

/** The checkout, which must hold the pinned commit (format and docs read pinned files from it). */
export async function requirePinnedCheckout(ctx: Context, need: CheckoutNeed): Promise<Git> {
  const git = await ctx.checkout();
  if (git === null || !(await git.hasCommit(ctx.config.upstream.commit))) {
    throw new UserError('NOT_APPLIED', `No MLX checkout with the pinned commit in ${ctx.layout.checkout}.`, {
      hint: `Run \`mlx-storage-pr apply\` first${need.hint}`,
    });
  }
  return git;
}

/**
 * The checkout, which must hold the current series: HEAD is the commit
 * `apply` made from templates/ and patches/ as they are now.
 */
export async function requireAppliedCheckout(
  ctx: Context,
  need: CheckoutNeed & { message?: (head: HeadState | null) => string },
): Promise<AppliedCheckout> {
  const found = await inspectCheckout(ctx);
  if (found.current === null) {
    const message =
      need.message?.(found.head) ?? `The checkout in ${ctx.layout.checkout} does not hold the current series.`;
    throw new UserError('NOT_APPLIED', message, { hint: `Run \`mlx-storage-pr apply\` first${need.hint}` });
  }
  return found.current;
}

export interface AppliedCheckout {
  git: Git;
  plan: ApplyPlan;
  head: HeadState & { kind: 'applied' };
}

/** The checkout's HEAD (null: no checkout), and the checkout itself when it holds the current series. */
export async function inspectCheckout(
  ctx: Context,
): Promise<{ head: HeadState | null; current: AppliedCheckout | null }> {
  const git = await ctx.checkout();
  const { plan } = await ctx.project();
  const head = git ? await classifyHead(git, ctx.config.upstream.commit) : null;
  if (git === null || head === null || head.kind !== 'applied' || head.inputHash !== plan.inputHash)
    return { head, current: null };
  return { head, current: { git, plan, head } };
}

/** Adds a detached worktree of the checkout at `dir` (which must not exist), after pruning ones whose folder is gone. */
export async function addWorktree(git: Git, dir: string, commit: string): Promise<void> {
  await mkdir(path.dirname(dir), { recursive: true });
  await git.raw(['worktree', 'prune']);
  await git.raw(['worktree', 'add', '--detach', '--force', dir, commit], { echo: true });
}

/**
 * Makes `tree.source` a worktree of the checkout with exactly `commit` and no
 * other files (builds keep their own folders beside it). Reuses the worktree
 * when it already has that commit and no changes, unless `fresh` is set.
 */
export async function prepareWorktree(
  ctx: Context,
  git: Git,
  tree: TreeLayout,
  commit: string,
  options: { fresh?: boolean } = {},
): Promise<Git> {
  if (!existsSync(tree.source)) {
    // The tree's folder (`baseline/`, `mutants/`, ...) is marked as the tool's when it makes it.
    await makeMarkedFolder(tree.root);
    await addWorktree(git, tree.source, commit);
    return new Git(tree.source, ctx.log, ctx.env);
  }
  const worktree = new Git(tree.source, ctx.log, ctx.env);
  if (options.fresh || (await worktree.head()) !== commit || (await worktree.status()).length > 0) {
    await worktree.raw(['checkout', '--detach', '--force', commit], { echo: true });
    await worktree.raw(['clean', '-fdx', '--quiet']);
  }
  return worktree;
}

/** The content at `commit` of each of `files` (null: not there). */
export async function contentsAt(
  git: Git,
  commit: string,
  files: readonly string[],
): Promise<Map<string, string | null>> {
  const result = new Map<string, string | null>();
  for (const file of files) result.set(file, await git.fileAt(commit, file));
  return result;
}

/** What git says when the other side is there but is not a repository. */
const NOT_A_REPOSITORY =
  /does not appear to be a git repository|not a git repository|repository '[^']*' not found|Repository not found/i;

/** Refuses a local MLX source folder that does not exist. */
export function verifySourceExists(source: Source): void {
  if (source.kind === 'path' && !existsSync(source.display)) {
    throw new UserError('SOURCE_UNREACHABLE', `The MLX source ${source.display} does not exist.`, {
      hint: 'Pass --mlx-repo <path-or-url> (or set MLX_REPO) to an MLX git repository or mirror.',
    });
  }
}

/** Why git could not read the MLX source, from a failed `git ls-remote` of it: not a repository, or unreachable. */
export function sourceError(source: Source, failure: ProcessError, log: Logger): UserError {
  const said = lastLines(failure.stderr, 5);
  log.debug(`git ls-remote said:\n${said}`);
  const details = { source: source.display, stderr: said };
  if (NOT_A_REPOSITORY.test(said)) {
    return new UserError('SOURCE_NOT_REPOSITORY', `The MLX source ${source.display} is not a git repository.`, {
      hint: "Pass --mlx-repo <path-or-url> (or set MLX_REPO) naming an MLX clone or a bare mirror (git clone --mirror https://github.com/ml-explore/mlx.git); --verbose shows git's message.",
      details,
    });
  }
  return new UserError(
    'SOURCE_UNREACHABLE',
    `Cannot ${source.kind === 'path' ? 'read' : 'reach'} the MLX source ${source.display}.`,
    {
      hint:
        source.kind === 'path'
          ? "Check that you can read that folder, or pass --mlx-repo <path> (or MLX_REPO) naming another MLX repository or mirror; --verbose shows git's message."
          : "Check the network (--verbose shows git's message), or pass --mlx-repo <path> (or MLX_REPO) naming a local MLX repository or mirror.",
      details,
    },
  );
}

/** The source's failure when `git ls-remote` cannot read it, else null (the source is fine). */
export async function sourceFailure(git: Git, source: Source, log: Logger): Promise<UserError | null> {
  return git.lsRemote(source.location).then(
    () => null,
    (lsError: unknown) => {
      if (lsError instanceof ProcessError) return sourceError(source, lsError, log);
      throw lsError;
    },
  );
}

async function fetchPinned(git: Git, source: Source, commit: string, log: Logger): Promise<void> {
  verifySourceExists(source);
  try {
    await git.fetchCommit(source.location, commit, { depth: 1, local: source.kind === 'path' });
  } catch (error) {
    if (!(error instanceof ProcessError)) throw error;
    log.debug(`git fetch said:\n${lastLines(error.stderr, 5)}`);
    const unreadable = await sourceFailure(git, source, log);
    if (unreadable !== null) throw unreadable;
    throw new UserError(
      'COMMIT_NOT_FOUND',
      `The MLX source ${source.display} does not contain the pinned commit ${commit}.`,
      {
        hint: 'Update the mirror (`git fetch` in it), or fix upstream.commit in mlx-storage-pr.config.json.',
        details: { source: source.display, commit, stderr: lastLines(error.stderr, 5) },
      },
    );
  }
}

/**
 * Refuses an `upstream.commit` that names a tag, tree or blob object of `git`
 * (a config error): the pin is the parent of the applied commit, so it must be
 * a commit. A tag is not peeled: the message names the commit it points to.
 * Nothing happens when `git` lacks the object (the fetch says so).
 */
export async function verifyPinIsCommit(git: Git, pinned: string): Promise<void> {
  const type = await git.objectType(pinned);
  if (type === null || type === 'commit') return;
  const where = `upstream.commit ${pinned} in ${CONFIG_FILE}`;
  if (type === 'tag') {
    const [name, commit] = await Promise.all([git.tagName(pinned), git.resolveCommit(pinned)]);
    throw new UserError('CONFIG_INVALID', `${where} is the annotated tag ${name ?? '(no name)'}, not a commit.`, {
      hint:
        commit === null
          ? 'Set upstream.commit to the full id of an MLX commit.'
          : `Set upstream.commit to the commit the tag points to: ${commit}.`,
      details: { commit: pinned, type, tag: name, tagCommit: commit },
    });
  }
  throw new UserError('CONFIG_INVALID', `${where} names a ${type}, not a commit.`, {
    hint: 'Set upstream.commit to the full id of an MLX commit (`git rev-parse <tag>^{commit}` in an MLX clone gives the commit of a tag).',
    details: { commit: pinned, type },
  });
}

/** The fetched object is a commit (not a tag or tree). */
async function verifyFetchedCommit(git: Git, source: Source, commit: string): Promise<void> {
  if (!(await git.hasCommit(commit))) {
    throw new UserError('COMMIT_NOT_FOUND', `Fetching ${commit} from ${source.display} did not produce that commit.`, {
      hint: 'Check that upstream.commit is a commit (not a tag or tree) of MLX.',
    });
  }
}
