import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { makeMarkedFolder } from '../adapters/files.js';
import { Git } from '../adapters/git.js';
import { withLock } from '../adapters/lock.js';
import { ProcessError } from '../adapters/process-error.js';
import { worstStatus, type CheckData, type RefBuild, type RefReport } from './drift-report.js';
import { isUserError, UserError } from '../core/errors.js';
import { plannedPaths, type ApplyPlan } from '../series/plan.js';
import { prepareWorktree, sourceFailure, verifyPinIsCommit, verifySourceExists } from '../series/checkout.js';
import type { Context } from '../series/context.js';
import { runSuiteOn, verifyBuildTools, type SuiteOptions } from '../suite/suite.js';
import { appliedCommitMessage, buildTree } from '../series/applied-tree.js';

export interface CheckOptions {
  /** Branches, tags or commit ids of the MLX source. */
  against: readonly string[];
  /** How many commits to check at once (default: the number of CPUs). */
  jobs?: number | undefined;
  /** Build and run the suite, as `test` does, on every commit the series applies to. */
  build?: SuiteOptions | undefined;
}

/** Where `check` keeps the commits it fetched, so that git keeps them. */
export const KEEP_PREFIX = 'refs/mlx-storage-pr/check/';
const FULL_ID = /^[0-9a-f]{40}$/;

/**
 * Applies the series to each of `against` in check's own repository in the
 * workdir (a temporary index per commit; the checkout is never read or
 * written) and reports each template and patch. With `build`, builds and runs
 * the suite on every commit the series applies to, one build at a time.
 */
export async function checkAgainst(ctx: Context, options: CheckOptions): Promise<CheckData> {
  const { plan } = await ctx.project();
  const against = [...new Set(options.against)];
  if (against.length === 0 || against.some((r) => r.trim() === '')) {
    throw new UserError('USAGE', '--against needs at least one branch, tag or commit of MLX, and no empty one.', {
      hint: 'For example: check --against main v0.31.0',
    });
  }
  const pinned = ctx.config.upstream.commit;
  return withLock(ctx.workdir, 'check', async () => {
    const repo = await openCheckRepository(ctx);
    const wanted = await resolveRefs(ctx, repo, against);
    await fetchMissing(ctx, repo, [{ ref: 'the pinned commit', want: pinned, pinned: true }, ...wanted]);
    await preparePin(repo, plan, pinned);
    const targets = await Promise.all(
      wanted.map(async ({ ref, want }) => {
        const commit = await repo.resolveCommit(want);
        if (commit === null) throw refNotFound(ctx, ref, 'it names no commit');
        return { ref, commit };
      }),
    );

    const serial = serialiser();
    const refs = await mapLimit(targets, options.jobs ?? os.availableParallelism(), async ({ ref, commit }) => {
      const { report, tree } = await survey(repo, plan, pinned, ref, commit);
      ctx.log.info(`${ref} (${commit.slice(0, 12)}): ${report.status}`);
      if (options.build) {
        const suite = options.build;
        report.build =
          tree === null ? { status: 'not-run' } : await serial(() => buildOn(ctx, repo, plan, commit, tree, suite));
      }
      return report;
    });
    return {
      command: 'check' as const,
      source: ctx.source.display,
      pinned,
      pinnedVersion: ctx.config.upstream.version,
      refs,
    };
  });
}

/**
 * Checks that the pin (already fetched) is a commit, and applies the series
 * to it: a three-way merge of a patch needs its pre-image blob. For the second
 * patch of a file that is the file as the earlier patch leaves it at the pin,
 * which no fetch brings: applying the series on the pin writes it.
 */
export async function preparePin(repo: Git, plan: ApplyPlan, pinned: string): Promise<void> {
  await verifyPinIsCommit(repo, pinned);
  await buildTree(repo, plan, { base: pinned });
}

/** check's bare repository in the workdir, made on first use. */
export async function openCheckRepository(ctx: Context): Promise<Git> {
  const dir = ctx.layout.check.repo;
  const git = new Git(dir, ctx.log, ctx.env);
  // `git init` is safe to repeat: a folder left by an init that failed half-way is completed.
  if (!existsSync(path.join(dir, 'HEAD'))) {
    await makeMarkedFolder(ctx.layout.check.root);
    await mkdir(dir, { recursive: true });
    await git.raw(['init', '--quiet', '--bare']);
  }
  return git;
}

/**
 * What to fetch for each ref: a full commit id as it is; a branch or tag by
 * what the source advertises for it (git's own order: `refs/<ref>`, tags,
 * branches, remote-tracking branches); anything else, such as a short id or
 * `main~10`, only from a source on this machine, by `git rev-parse` there.
 */
async function resolveRefs(
  ctx: Context,
  repo: Git,
  against: readonly string[],
): Promise<Array<{ ref: string; want: string }>> {
  const { source } = ctx;
  const names = against.filter((r) => !FULL_ID.test(r));
  let advertised: Array<{ ref: string; commit: string }> = [];
  if (names.length > 0) {
    verifySourceExists(source);
    try {
      advertised = await repo.remoteRefs(source.location, names);
    } catch (error) {
      if (!(error instanceof ProcessError)) throw error;
      throw (await sourceFailure(repo, source, ctx.log)) ?? error;
    }
  }
  const local = source.kind === 'path' ? new Git(source.display, ctx.log, ctx.env) : null;
  const resolved: Array<{ ref: string; want: string }> = [];
  for (const ref of against) {
    if (FULL_ID.test(ref)) {
      resolved.push({ ref, want: ref });
      continue;
    }
    const candidates = ref.startsWith('refs/') || ref === 'HEAD' ? [ref] : RULES.map((rule) => rule(ref));
    const found = candidates
      .map((name) => advertised.find((a) => a.ref === `${name}^{}`) ?? advertised.find((a) => a.ref === name))
      .find((a) => a !== undefined);
    // A local source also answers for a short id or an expression such as main~10.
    const commit = found?.commit ?? (local ? await local.resolveCommit(ref) : null);
    if (commit === null) throw refNotFound(ctx, ref, 'no branch, tag or commit has that name');
    resolved.push({ ref, want: commit });
  }
  return resolved;
}

/** How git turns a short name into a full ref (`git help revisions`), after the name itself. */
const RULES: ReadonlyArray<(ref: string) => string> = [
  (r) => `refs/${r}`,
  (r) => `refs/tags/${r}`,
  (r) => `refs/heads/${r}`,
  (r) => `refs/remotes/${r}`,
  (r) => `refs/remotes/${r}/HEAD`,
];

function refNotFound(ctx: Context, ref: string, why: string): UserError {
  const listing = `git ls-remote ${ctx.source.kind === 'path' ? ctx.source.display : ctx.source.location}`;
  return new UserError('REF_NOT_FOUND', `The MLX source ${ctx.source.display} has no commit "${ref}": ${why}.`, {
    hint: `Name a branch or tag the source has (\`${listing}\` lists them) or a full 40-character commit id${ctx.source.kind === 'path' ? '' : '; a short id or an expression like main~10 works only with a source on this machine (--mlx-repo <path>)'}. If the commit is newer than the source, update it (\`git fetch\` in a mirror).`,
    details: { ref, source: ctx.source.display },
  });
}

/** Fetches the commits the repository lacks, depth 1, in one fetch; keeps each under a ref of its own. */
export async function fetchMissing(
  ctx: Context,
  repo: Git,
  wanted: ReadonlyArray<{ ref: string; want: string; pinned?: boolean }>,
): Promise<void> {
  const missing: Array<{ ref: string; want: string; pinned?: boolean }> = [];
  for (const w of wanted)
    if (!(await repo.hasCommit(w.want)) && !missing.some((m) => m.want === w.want)) missing.push(w);
  if (missing.length === 0) return;
  const { source } = ctx;
  verifySourceExists(source);
  const options = { depth: 1, local: source.kind === 'path' };
  ctx.log.info(`Fetching ${missing.map((m) => `${m.ref} (${m.want.slice(0, 12)})`).join(', ')} from ${source.display}`);
  try {
    await repo.fetchCommits(
      source.location,
      missing.map((m) => m.want),
      options,
    );
  } catch (error) {
    if (!(error instanceof ProcessError)) throw error;
    const unreadable = await sourceFailure(repo, source, ctx.log);
    if (unreadable !== null) throw unreadable;
    // One at a time, to name the one the source lacks.
    for (const m of missing) {
      try {
        await repo.fetchCommits(source.location, [m.want], options);
      } catch (single) {
        if (!(single instanceof ProcessError)) throw single;
        if (m.pinned) {
          throw new UserError(
            'COMMIT_NOT_FOUND',
            `The MLX source ${source.display} does not contain the pinned commit ${m.want}.`,
            {
              hint: 'Update the mirror (`git fetch` in it), or fix upstream.commit in mlx-storage-pr.config.json.',
              details: { source: source.display, commit: m.want },
            },
          );
        }
        throw refNotFound(ctx, m.ref, 'the source does not have that commit');
      }
    }
  }
  for (const m of missing) await repo.updateRef(`${KEEP_PREFIX}${m.want}`, m.want);
}

/** The series applied to `commit` in a temporary index: each template and patch, and the tree when all apply. */
export async function survey(
  repo: Git,
  plan: ApplyPlan,
  pinned: string,
  ref: string,
  commit: string,
): Promise<{ report: RefReport; tree: string | null }> {
  const planned = new Set(plannedPaths(plan));
  const upstreamChanged = (await repo.changedPaths(pinned, commit)).filter((p) => planned.has(p));
  const built = await buildTree(repo, plan, { base: commit, survey: { upstreamChanged: new Set(upstreamChanged) } });
  const date = (await repo.raw(['log', '-1', '--format=%cI', commit, '--'])).trim();
  const report: RefReport = {
    ref,
    commit,
    date,
    status: worstStatus(built.steps),
    upstreamChanged,
    templates: built.steps.filter((s) => s.kind === 'template'),
    patches: built.steps.filter((s) => s.kind === 'patch'),
  };
  return { report, tree: built.tree };
}

/**
 * Commits the applied tree onto `commit`, checks it out in its own worktree
 * and runs the suite there against the unpatched `commit`. A failure that the
 * user can act on (a compile error, a missing tool) is this commit's result.
 */
async function buildOn(
  ctx: Context,
  repo: Git,
  plan: ApplyPlan,
  commit: string,
  tree: string,
  options: SuiteOptions,
): Promise<RefBuild> {
  const layout = ctx.layout.check.commit(commit);
  try {
    const applied = await repo.commitTree(tree, commit, appliedCommitMessage(plan));
    const patched = await prepareWorktree(ctx, repo, layout, applied);
    await verifyBuildTools(ctx, patched.dir);
    const target = {
      repo,
      patched,
      patchedLayout: layout,
      base: commit,
      baselineLayout: layout.baseline,
      plan,
      localEdits: [],
    };
    const result = await runSuiteOn(ctx, target, options);
    return { status: result.blocking > 0 ? 'failed' : 'passed', blocking: result.blocking, test: result.data };
  } catch (error) {
    if (!isUserError(error) || error.code === 'INTERRUPTED') throw error;
    ctx.log.warn(`${commit.slice(0, 12)}: ${error.message}`);
    return { status: 'error', error: { code: error.code, message: error.message, hint: error.hint ?? null } };
  }
}

/**
 * Runs `fn` over `items`, at most `limit` at a time; results in item order.
 * After a failure no new item starts, and the first failure is thrown once
 * the running ones have ended (so nothing runs on after the lock is let go).
 */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    for (let i = next++; i < items.length && !failed; i = next++) {
      try {
        results[i] = await fn(items[i] as T);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  const settled = await Promise.allSettled(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) throw failure.reason;
  return results;
}

/** Runs the functions it is given one after another: each build uses every core already. */
function serialiser(): <T>(fn: () => Promise<T>) => Promise<T> {
  let tail: Promise<unknown> = Promise.resolve();
  return (fn) => {
    const run = tail.then(fn);
    // The next function runs after this one whether it failed or not; the caller gets the failure from `run`.
    tail = run.catch(() => undefined);
    return run;
  };
}
