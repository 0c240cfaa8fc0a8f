import os from 'node:os';

import { Git } from '../adapters/git.js';
import { GitHubError, type GitHubClient, type RepoId } from '../adapters/github.js';
import { withLock } from '../adapters/lock.js';
import { ProcessError } from '../adapters/process-error.js';
import { UserError } from '../core/errors.js';
import type { Context } from '../series/context.js';
import { plannedPaths, type ApplyPlan } from '../series/plan.js';
import { sourceFailure, verifySourceExists } from '../series/checkout.js';
import { fetchMissing, KEEP_PREFIX, mapLimit, openCheckRepository, preparePin, survey } from './drift.js';
import {
  mostRecent,
  pullNumbers,
  sharingFiles,
  type OpenPrsData,
  type PullRequestCandidate,
  type PullRequestCheck,
  type PullRequestListing,
} from './open-prs-report.js';

/** GitHub's API as the command found it: a client for it, or why it is not used. */
export type GitHubAccess =
  { client: GitHubClient; repo: RepoId; apiUrl: string; required: boolean } | { unavailable: string };

export interface OpenPrsOptions {
  /** How many pull requests to look at, highest numbers first. */
  limit: number;
  /** Past this time, in milliseconds from the start, no further pull request is fetched or checked (0: none is). */
  budgetMs: number;
  /** How many pull requests to check at once (default: the number of CPUs). */
  jobs?: number | undefined;
  github: GitHubAccess;
}

/** The refs of one pull request in the MLX source. */
interface PullRefs {
  merge: string | null;
  head: string | null;
}

/** A pull request's history is fetched back this far before the pin to find where it left the default branch. */
const HISTORY_BEFORE_PIN_S = 365 * 24 * 3600;

/**
 * Finds the open pull requests upstream that change a file the series
 * changes (GitHub's API, else the source's `refs/pull/<n>/merge`) and checks
 * the series on each merged, as `check --against` checks a ref: its merge
 * ref, else its head merged with the pinned commit. A pull request that
 * cannot be fetched or merged is "could not check".
 */
export async function checkOpenPullRequests(ctx: Context, options: OpenPrsOptions): Promise<OpenPrsData> {
  const started = Date.now();
  const { plan } = await ctx.project();
  const seriesFiles = seriesFilesOf(plan);
  const pinned = ctx.config.upstream.commit;
  return withLock(ctx.workdir, 'check', async () => {
    const repo = await openCheckRepository(ctx);
    await fetchMissing(ctx, repo, [{ ref: 'the pinned commit', want: pinned, pinned: true }]);
    await preparePin(repo, plan, pinned);
    const listed = await listPullRequests(ctx, repo, options, seriesFiles);
    const outOfTime = () => Date.now() - started >= options.budgetMs;
    const budgetNote = `the time budget (--budget, ${Math.round(options.budgetMs / 60_000)} min) ran out before it`;

    // Fetches and merges one at a time (git locks a shallow repository's list of cut commits); the surveys run at once.
    const targets: Array<{ candidate: PullRequestCandidate; target: Target }> = [];
    for (const candidate of listed.sharing) {
      const known = listed.unreachable.get(candidate.number);
      const target: Target = known
        ? { reason: known }
        : outOfTime()
          ? { reason: budgetNote }
          : await targetOf(ctx, repo, pinned, candidate.number, listed.refs.get(candidate.number), seriesFiles);
      targets.push({ candidate, target });
    }
    const pullRequests = await mapLimit(
      targets,
      options.jobs ?? os.availableParallelism(),
      async ({ candidate, target }): Promise<PullRequestCheck> => {
        const base = { ...candidate, checked: null, report: null };
        if ('reason' in target) return { ...base, status: 'could-not-check', reason: target.reason };
        if (outOfTime()) return { ...base, status: 'could-not-check', reason: budgetNote };
        const { report } = await survey(repo, plan, pinned, target.ref, target.commit);
        ctx.log.info(`#${candidate.number} (${target.ref}, ${target.commit.slice(0, 12)}): ${report.status}`);
        return { ...base, checked: target, report, status: report.status, reason: null };
      },
    );
    return {
      command: 'check' as const,
      source: ctx.source.display,
      pinned,
      pinnedVersion: ctx.config.upstream.version,
      openPrs: {
        listing: listed.listing,
        listed: listed.listed,
        considered: listed.considered,
        limit: options.limit,
        seriesFiles,
        pullRequests,
      },
    };
  });
}

interface Listed {
  listing: PullRequestListing;
  listed: number;
  considered: number;
  /** The pull requests looked at that change a file of the series (with those files only). */
  sharing: PullRequestCandidate[];
  /** Their refs in the source. */
  refs: Map<number, PullRefs>;
  /** Pull requests whose ref could not be fetched while listing, with the reason. */
  unreachable: Map<number, string>;
}

/** GitHub's list when its API answers; else, or when the command found it out of reach, the source's merge refs. */
async function listPullRequests(
  ctx: Context,
  repo: Git,
  options: OpenPrsOptions,
  seriesFiles: readonly string[],
): Promise<Listed> {
  const { github } = options;
  let why: string;
  if ('client' in github) {
    try {
      return await listFromGitHub(ctx, repo, github, options.limit, seriesFiles);
    } catch (error) {
      if (!(error instanceof GitHubError)) throw error;
      if (github.required)
        throw new UserError('GITHUB_API_FAILED', error.message, {
          hint: 'Run again later, or use --open-prs-from source with a mirror that holds refs/pull/*.',
          details: { request: error.request, status: error.status },
        });
      why = `GitHub's API could not be read: ${error.message}`;
      ctx.log.warn(`${why}; using the source's refs/pull/*/merge instead`);
    }
  } else {
    why = github.unavailable;
  }
  return listFromSource(ctx, repo, options.limit, seriesFiles, why);
}

async function listFromGitHub(
  ctx: Context,
  repo: Git,
  github: Extract<GitHubAccess, { client: GitHubClient }>,
  limit: number,
  seriesFiles: readonly string[],
): Promise<Listed> {
  const open = await github.client.openPullRequests(github.repo);
  const considered = mostRecent(open, limit);
  ctx.log.info(
    `${open.length} open pull request(s) in ${github.repo.owner}/${github.repo.repo}; reading the files of ${considered.length}`,
  );
  const withFiles = await mapLimit(considered, 4, async (p) => ({
    number: p.number,
    title: p.title,
    author: p.author,
    url: p.url,
    files: await github.client.pullRequestFiles(github.repo, p.number),
  }));
  const sharing = sharingFiles(withFiles, seriesFiles);
  const refs = new Map<number, PullRefs>();
  if (sharing.length > 0) {
    const names = sharing.flatMap((c) => [`refs/pull/${c.number}/merge`, `refs/pull/${c.number}/head`]);
    const advertised = await sourceRefs(ctx, repo, names);
    for (const c of sharing) {
      const find = (kind: string) => advertised.find((a) => a.ref === `refs/pull/${c.number}/${kind}`)?.commit ?? null;
      refs.set(c.number, { merge: find('merge'), head: find('head') });
    }
  }
  return {
    listing: { kind: 'github', apiUrl: github.apiUrl, repository: `${github.repo.owner}/${github.repo.repo}` },
    listed: open.length,
    considered: considered.length,
    sharing,
    refs,
    unreachable: new Map(),
  };
}

/**
 * The source's `refs/pull/<n>/merge`, highest numbers first up to `limit`:
 * each is fetched with its parents, and its files are what it changes
 * against its first parent (the default branch it was merged into), which
 * is what the pull request changes.
 */
async function listFromSource(
  ctx: Context,
  repo: Git,
  limit: number,
  seriesFiles: readonly string[],
  why: string,
): Promise<Listed> {
  const merges = await sourceRefs(ctx, repo, ['refs/pull/*/merge']);
  const byNumber = new Map(
    merges.flatMap((m) => pullNumbers([m.ref], 'merge').map((n) => [n, m.commit] as [number, string])),
  );
  const considered = mostRecent(
    [...byNumber.keys()].map((number) => ({ number })),
    limit,
  );
  ctx.log.info(
    `${byNumber.size} refs/pull/*/merge in ${ctx.source.display} (open state unknown); looking at the ${considered.length} highest`,
  );
  const commits = considered.map((c) => byNumber.get(c.number) as string);
  const failed = await fetchEach(ctx, repo, commits, 2);
  const candidates: PullRequestCandidate[] = [];
  const unreachable = new Map<number, string>();
  const refs = new Map<number, PullRefs>();
  for (const { number } of considered) {
    const commit = byNumber.get(number) as string;
    refs.set(number, { merge: commit, head: null });
    const reason = failed.get(commit);
    // One that cannot be fetched may share a file (no one can say which): it is listed as not checked.
    if (reason !== undefined) unreachable.set(number, reason);
    else
      candidates.push({
        number,
        title: null,
        author: null,
        url: null,
        files: await repo.changedPaths(`${commit}^1`, commit),
      });
  }
  const sharing = [
    ...sharingFiles(candidates, seriesFiles),
    ...[...unreachable.keys()].map((number) => ({ number, title: null, author: null, url: null, files: [] })),
  ].sort((a, b) => b.number - a.number);
  return {
    listing: { kind: 'source-refs', source: ctx.source.display, why },
    listed: byNumber.size,
    considered: considered.length,
    sharing,
    refs,
    unreachable,
  };
}

/** The refs of the MLX source that match `patterns` (exact names only); the source must answer. */
async function sourceRefs(
  ctx: Context,
  repo: Git,
  patterns: readonly string[],
): Promise<Array<{ ref: string; commit: string }>> {
  const { source } = ctx;
  verifySourceExists(source);
  try {
    const found = await repo.remoteRefs(source.location, patterns);
    return found.filter((f) => f.ref.startsWith('refs/pull/'));
  } catch (error) {
    if (!(error instanceof ProcessError)) throw error;
    throw (await sourceFailure(repo, source, ctx.log)) ?? error;
  }
}

/**
 * Fetches the commits the repository lacks (`depth` commits of each), all in
 * one fetch, else one at a time; keeps each under check's own ref. Returns
 * those that could not be fetched, with git's reason.
 */
async function fetchEach(
  ctx: Context,
  repo: Git,
  commits: readonly string[],
  depth: number,
): Promise<Map<string, string>> {
  const failed = new Map<string, string>();
  const missing: string[] = [];
  for (const c of new Set(commits)) if (!(await hasAll(repo, c, depth))) missing.push(c);
  if (missing.length === 0) return failed;
  const options = { depth, local: ctx.source.kind === 'path' };
  ctx.log.info(`Fetching ${missing.length} pull request commit(s) from ${ctx.source.display}`);
  try {
    await repo.fetchCommits(ctx.source.location, missing, options);
  } catch (error) {
    if (!(error instanceof ProcessError)) throw error;
    for (const c of missing) {
      try {
        await repo.fetchCommits(ctx.source.location, [c], options);
      } catch (single) {
        if (!(single instanceof ProcessError)) throw single;
        failed.set(c, `could not fetch ${c.slice(0, 12)} from ${ctx.source.display}: ${firstLine(single)}`);
      }
    }
  }
  for (const c of missing) if (!failed.has(c)) await repo.updateRef(`${KEEP_PREFIX}${c}`, c);
  return failed;
}

/** Whether the repository has `commit` and, for a depth of 2, its first parent. */
async function hasAll(repo: Git, commit: string, depth: number): Promise<boolean> {
  if (!(await repo.hasCommit(commit))) return false;
  return depth < 2 || (await repo.hasCommit(`${commit}^1`));
}

const firstLine = (error: ProcessError): string =>
  (error.stderr.split('\n').find((l) => l.trim() !== '') ?? error.message).trim();

type Target = NonNullable<PullRequestCheck['checked']> | { reason: string };

/**
 * What to check for one pull request: its merge ref, when GitHub made it
 * after the pinned commit; else its head merged with the pinned commit (`git
 * merge-tree`, after fetching the history of both back a year before the
 * pin); else why neither can be.
 */
async function targetOf(
  ctx: Context,
  repo: Git,
  pinned: string,
  number: number,
  refs: PullRefs | undefined,
  seriesFiles: readonly string[],
): Promise<Target> {
  if (refs?.merge) {
    const ref = `refs/pull/${number}/merge`;
    const reason = (await fetchEach(ctx, repo, [refs.merge], 2)).get(refs.merge);
    if (reason !== undefined) return { reason };
    // GitHub stops refreshing the merge ref of a pull request nobody touches. One made before the pin merges
    // it into an older default branch, whose differences from the pin would pass for the pull request's.
    if ((await repo.commitTime(`${refs.merge}^1`)) >= (await repo.commitTime(pinned)))
      return { ref, commit: refs.merge, how: 'merge-ref', unmerged: [] };
    const head = refs.head ?? (await repo.resolveCommit(`${refs.merge}^2`));
    if (head === null) return { reason: `${ref} predates the pinned commit and is no merge of a head` };
    ctx.log.info(`${ref} predates the pinned commit: checking refs/pull/${number}/head merged with it instead`);
    return mergeHead(ctx, repo, pinned, { number, head, seriesFiles }, 'its merge ref predates the pinned commit');
  }
  if (refs?.head)
    return mergeHead(
      ctx,
      repo,
      pinned,
      { number, head: refs.head, seriesFiles },
      `the source has no refs/pull/${number}/merge`,
    );
  return {
    reason: `the source ${ctx.source.display} has neither refs/pull/${number}/merge nor refs/pull/${number}/head`,
  };
}

/** The files the series changes: what templates make and patches change. */
function seriesFilesOf(plan: ApplyPlan): string[] {
  return [...new Set(plannedPaths(plan))].sort();
}

/**
 * The pull request's head merged with the pinned commit, kept as a commit on
 * the pin; `why` says why not its merge ref. Files outside the series that do
 * not merge are left with conflict markers and named: the series' check does
 * not read them. A file of the series that does not merge cannot be checked.
 */
async function mergeHead(
  ctx: Context,
  repo: Git,
  pinned: string,
  pull: { number: number; head: string; seriesFiles: readonly string[] },
  why: string,
): Promise<Target> {
  const { number, head } = pull;
  const ref = `refs/pull/${number}/head`;
  try {
    const since = (await repo.commitTime(pinned)) - HISTORY_BEFORE_PIN_S;
    await repo.fetchSince(ctx.source.location, [pinned, head], since, { local: ctx.source.kind === 'path' });
    await repo.updateRef(`${KEEP_PREFIX}${head}`, head);
    const merged = await repo.mergeTrees(pinned, head);
    const inSeries = merged.conflicts.filter((f) => pull.seriesFiles.includes(f));
    if (inSeries.length > 0)
      return {
        reason: `${ref} does not merge with the pinned commit in ${inSeries.join(', ')}, a file of the series, and ${why}`,
      };
    const commit = await repo.commitTree(merged.tree, pinned, `${ref} (${head}) merged with ${pinned}`);
    await repo.updateRef(`${KEEP_PREFIX}${commit}`, commit);
    return { ref, commit, how: 'head-merged-with-pin', unmerged: merged.conflicts };
  } catch (error) {
    if (!(error instanceof ProcessError)) throw error;
    return { reason: `could not merge ${ref} (${head.slice(0, 12)}) with the pinned commit: ${firstLine(error)}` };
  }
}
