import { setTimeout as delay } from 'node:timers/promises';

import { GitHubError, type GitHubClient, type RepoId } from '../adapters/github.js';
import { childControl, InterruptedError } from '../adapters/interrupt.js';
import { UserError } from '../core/errors.js';
import { mapJsonStrings } from '../core/json.js';
import type { Context } from '../series/context.js';
import {
  checkRunOutcome,
  ciResult,
  forkReason,
  forkReasonText,
  isSettled,
  pullRequestReason,
  pullRequestReasonText,
  statusOutcome,
  summarize,
  summaryText,
  type CiJob,
  type CiNames,
  type CiReasons,
  type CiResult,
  type CiSummary,
} from './ci-report.js';
import { githubRepoOf, leaseRef, parseRepoLocation } from './fork-refs.js';
import { readForkState, resolveFork } from './fork.js';
import { findToken, ghHostOf, withoutSecret } from './token.js';
import { apiClient, DEFAULT_API_URL, verifyApiUrl } from './open.js';

export interface CiOptions {
  /** `--fork`: a URL, a path or a remote of the checkout. */
  fork: string;
  /** `--branch`; default: the config's `branch`. */
  branch?: string | undefined;
  forkOwner?: string | undefined;
  apiUrl?: string | undefined;
  /** `--token-env`: the variable that holds the token. */
  tokenEnv?: string | undefined;
  /** `--wait`: poll for at most this many minutes; undefined: read once. */
  wait?: number | undefined;
  /** Between two polls. */
  pollMs: number;
}

export interface CiData {
  command: 'pr';
  mode: 'ci';
  branch: string;
  /** `--fork` as given. */
  fork: string;
  /** `owner/repo` of the fork and of the upstream repository on GitHub. */
  forkRepository: string;
  upstream: string;
  /** The commit whose checks these are: the one the tool pushed last (the fork's lease ref). */
  commit: string;
  /** What the branch holds now (null: no branch). */
  branchTip: string | null;
  /** The branch holds another commit than the one the tool pushed last. */
  branchMoved: boolean;
  pullRequest: { number: number; url: string; headSha: string | null } | null;
  /** A token was sent (GH_TOKEN or GITHUB_TOKEN). */
  authenticated: boolean;
  jobs: CiJob[];
  /** Why a place shows no run (null: it shows some). */
  reasons: CiReasons;
  summary: CiSummary;
  result: CiResult;
  /** How often GitHub was read. */
  polls: number;
  /** `--wait`: the bound and whether it was reached with jobs still queued or running; null without --wait. */
  waited: { minutes: number; timedOut: boolean } | null;
}

/** What one reading of GitHub found. */
interface Reading {
  pullRequest: CiData['pullRequest'];
  jobs: CiJob[];
  reasons: CiReasons;
}

const repoName = (r: RepoId) => `${r.owner}/${r.repo}`;
const short = (id: string) => id.slice(0, 12);

/**
 * `pr --ci`: the check runs and commit statuses of the commit the tool
 * pushed last to the branch (the fork's lease ref, not whatever the branch
 * holds now), on the open upstream pull request and on the fork. With
 * `wait`, polls until nothing is queued or running (or no run may still
 * appear), honouring GitHub's rate limits, for at most `wait` minutes.
 * Throws CI_NOT_FOUND when there is nothing to report, with the reasons.
 */
export async function readCiStatus(ctx: Context, options: CiOptions): Promise<CiData> {
  const apiUrl = options.apiUrl ?? (ctx.env['GITHUB_API_URL'] || DEFAULT_API_URL);
  const token =
    (await findToken(ctx.env, ctx.log, { tokenEnv: options.tokenEnv, host: ghHostOf(apiUrl) }))?.value ?? null;
  try {
    const data = await run(ctx, options, token);
    return token === null ? data : (mapJsonStrings(data, (t) => t.split(token).join('***')) as CiData);
  } catch (error) {
    throw token === null ? error : withoutSecret(error, token);
  }
}

async function run(ctx: Context, options: CiOptions, token: string | null): Promise<CiData> {
  const target = await resolveTarget(ctx, options, token);
  if (token === null)
    ctx.log.warn(
      'no token (GH_TOKEN, GITHUB_TOKEN or `gh auth token`): GitHub is read without a token, which it allows 60 requests an hour (a reading takes 3 to 7).',
    );
  const client = apiClient(target.apiUrl, token, ctx.log);
  const { reading, polls, timedOut } = await poll(ctx, client, target, options);
  const { names, commit, branch } = target;
  if (reading.jobs.length === 0) throw notFound(reading, target, polls);
  const summary = summarize(reading.jobs);
  const result = ciResult(summary);
  return {
    command: 'pr',
    mode: 'ci',
    branch,
    fork: names.fork,
    forkRepository: names.forkRepository,
    upstream: names.upstream,
    commit,
    branchTip: target.branchTip,
    branchMoved: target.branchTip !== commit,
    pullRequest: reading.pullRequest,
    authenticated: token !== null,
    jobs: reading.jobs,
    reasons: reading.reasons,
    summary,
    result,
    polls,
    waited: options.wait === undefined ? null : { minutes: options.wait, timedOut },
  };
}

/** Where to read: the repositories on GitHub, the branch and the commit the tool pushed last to it. */
interface Target {
  upstream: RepoId;
  fork: RepoId;
  branch: string;
  names: CiNames;
  apiUrl: string;
  /** The fork's lease ref: the commit the tool pushed last. */
  commit: string;
  /** What the branch holds now (null: no branch). */
  branchTip: string | null;
}

/** Resolves the options against the checkout, the config and the fork; refuses what cannot be read. */
async function resolveTarget(ctx: Context, options: CiOptions, token: string | null): Promise<Target> {
  const git = await ctx.checkout();
  if (git === null)
    throw new UserError('NOT_APPLIED', 'pr --ci reads the fork through the checkout, and there is none.', {
      hint: 'Run `mlx-storage-pr apply` first (as before `pr --push`).',
    });
  const fork = await resolveFork(ctx, git, options.fork);
  const branch = options.branch ?? ctx.config.branch;
  if (!(await git.isValidBranchName(branch)))
    throw new UserError('USAGE', `--branch ${branch} is not a valid branch name.`, {
      hint: 'For example --branch my-change (letters, digits, ".", "_", "-" and "/").',
    });
  const upstream = githubRepoOf(parseRepoLocation(ctx.config.upstream.url, ctx.cwd));
  if (upstream === null)
    throw new UserError('USAGE', `--ci: upstream.url (${ctx.config.upstream.url}) is not a GitHub repository URL.`, {
      hint: 'Set upstream.url in mlx-storage-pr.config.json to https://<host>/<owner>/<repo>.git.',
    });
  const fromUrl = githubRepoOf(fork.location);
  const owner = options.forkOwner ?? fromUrl?.owner;
  if (owner === undefined || owner === '')
    throw new UserError('USAGE', `--ci: the fork ${fork.given} does not say whose fork it is.`, {
      hint: 'Pass --fork-owner <your GitHub login> (the fork is <login>/<repository> on GitHub).',
    });
  const forkRepo: RepoId = { owner, repo: fromUrl?.repo ?? upstream.repo };
  const upstreamRepo: RepoId = { owner: upstream.owner, repo: upstream.repo };
  const apiUrl = options.apiUrl ?? (ctx.env['GITHUB_API_URL'] || DEFAULT_API_URL);
  verifyApiUrl(apiUrl, ctx.cwd);

  const state = await readForkState(ctx, git, fork, branch, token);
  const names: CiNames = {
    head: `${owner}:${branch}`,
    upstream: repoName(upstreamRepo),
    forkRepository: repoName(forkRepo),
    branch,
    fork: fork.given,
  };
  if (state.lease === null)
    throw new UserError(
      'CI_NOT_FOUND',
      `mlx-storage-pr has not pushed to the branch ${branch} on ${fork.given} (the fork has no ${leaseRef(branch)}), so there is no commit to read the checks of.`,
      {
        hint: `Push it first: \`mlx-storage-pr pr --push --fork ${fork.given}${options.branch === undefined ? '' : ` --branch ${branch}`}\`, then run pr --ci again.`,
        details: { reasons: { commit: 'not-pushed' }, branch, fork: fork.given },
      },
    );
  return {
    upstream: upstreamRepo,
    fork: forkRepo,
    branch,
    names,
    apiUrl,
    commit: state.lease,
    branchTip: state.branch,
  };
}

/**
 * Reads GitHub once, or with `wait` until nothing is queued or running (or
 * no run may still appear) or the bound is reached, one progress line per
 * poll. Waits out a rate limit that ends within the bound.
 */
async function poll(
  ctx: Context,
  client: GitHubClient,
  target: Target,
  options: CiOptions,
): Promise<{ reading: Reading; polls: number; timedOut: boolean }> {
  const { commit, branch } = target;
  const started = Date.now();
  const deadline = options.wait === undefined ? null : started + options.wait * 60_000;
  let polls = 0;
  let reading: Reading;
  let timedOut = false;
  for (;;) {
    try {
      reading = await readOnce(client, {
        upstream: target.upstream,
        fork: target.fork,
        head: target.names.head,
        commit,
        branch,
      });
    } catch (error) {
      if (!(error instanceof GitHubError)) throw error;
      const wake = wakeAfterLimit(error);
      if (deadline === null || wake === null || wake > deadline) throw apiFailed(error, deadline !== null);
      ctx.log.info(
        `GitHub's rate limit: waiting until ${new Date(wake).toISOString()} (${Math.ceil((wake - Date.now()) / 1000)} s)`,
      );
      await sleep(wake - Date.now());
      continue;
    }
    polls += 1;
    if (deadline === null) break;
    const summary = summarize(reading.jobs);
    const left = deadline - Date.now();
    const settled = isSettled(summary, reading.reasons);
    const minutes = options.wait as number;
    if (settled) {
      ctx.log.info(`poll ${polls}: ${summaryText(summary)}; done (waiting up to ${minutes} min)`);
      break;
    }
    if (left <= 0) {
      ctx.log.info(`poll ${polls}: ${summaryText(summary)}`);
      ctx.log.info(`stopped waiting after ${minutes} min: ${summary.running} job(s) still queued or running.`);
      timedOut = true;
      break;
    }
    const next = Math.min(options.pollMs, left);
    ctx.log.info(
      `poll ${polls}: ${summaryText(summary)}; next in ${Math.round(next / 1000)} s (waiting up to ${minutes} min, ${Math.ceil(left / 60_000)} min left${rateLimitNote(client)})`,
    );
    await sleep(next);
  }
  return { reading, polls, timedOut };
}

/** CI_NOT_FOUND for a reading with no job, with the reasons each place shows none. */
function notFound(reading: Reading, target: Target, polls: number): UserError {
  const { names, commit, branch } = target;
  const why = [
    reading.reasons.pullRequest === null ? null : pullRequestReasonText(reading.reasons.pullRequest, names),
    reading.reasons.fork === null ? null : forkReasonText(reading.reasons.fork, names),
  ].filter((r) => r !== null);
  return new UserError(
    'CI_NOT_FOUND',
    `No check run or commit status for ${short(commit)} (the commit mlx-storage-pr pushed last to ${branch}): ${why.map((r) => r.text).join('; ')}.`,
    {
      hint: why.map((r) => r.fix).join(' '),
      details: { reasons: reading.reasons, commit, branch, pullRequest: reading.pullRequest, polls },
    },
  );
}

/** One reading of both places. Upstream is read only while a pull request is open: it runs nothing else for the commit. */
async function readOnce(
  client: GitHubClient,
  o: { upstream: RepoId; fork: RepoId; head: string; commit: string; branch: string },
): Promise<Reading> {
  const pull = await client.openPullRequest(o.upstream, o.head);
  const upstreamJobs = pull === null ? [] : await jobsOf(client, o.upstream, o.commit, 'pull-request');
  const forkJobs = await jobsOf(client, o.fork, o.commit, 'fork');
  const reasons: CiReasons = {
    pullRequest: pullRequestReason({
      open: pull !== null,
      jobs: upstreamJobs.length,
      runs: pull !== null && upstreamJobs.length === 0 ? await client.workflowRuns(o.upstream, o.commit) : [],
    }),
    fork: forkReason({
      jobs: forkJobs.length,
      actionsEnabled: forkJobs.length === 0 ? await client.actionsEnabled(o.fork) : true,
      branch: o.branch,
    }),
  };
  return {
    pullRequest: pull === null ? null : { number: pull.number, url: pull.url, headSha: pull.headSha },
    jobs: [...upstreamJobs, ...forkJobs],
    reasons,
  };
}

async function jobsOf(client: GitHubClient, repo: RepoId, commit: string, where: CiJob['where']): Promise<CiJob[]> {
  const repository = repoName(repo);
  const runs = await client.checkRuns(repo, commit);
  const statuses = await client.commitStatuses(repo, commit);
  return [
    ...runs.map((r) => ({
      where,
      repository,
      kind: 'check-run' as const,
      name: r.name,
      status: r.status,
      conclusion: r.conclusion,
      outcome: checkRunOutcome(r.status, r.conclusion),
      url: r.url,
    })),
    ...statuses.map((s) => ({
      where,
      repository,
      kind: 'status' as const,
      name: s.context,
      status: s.state === 'pending' ? 'pending' : 'completed',
      conclusion: s.state === 'pending' ? null : s.state,
      outcome: statusOutcome(s.state),
      url: s.url,
    })),
  ];
}

/** When a rate-limited request may be sent again (ms since the epoch), or null when GitHub did not say. */
function wakeAfterLimit(error: GitHubError): number | null {
  // A little past the moment GitHub names: timers may fire a few milliseconds early.
  if (error.limited.retryAfter !== null) return Date.now() + error.limited.retryAfter * 1000 + 100;
  if (error.limited.reset !== null) return Math.max(error.limited.reset.getTime(), Date.now()) + 100;
  return null;
}

function rateLimitNote(client: GitHubClient): string {
  const limit = client.rateLimit();
  return limit === null ? '' : `; GitHub allows ${limit.remaining} more requests until ${limit.reset.toISOString()}`;
}

async function sleep(ms: number): Promise<void> {
  const { signal } = childControl();
  try {
    await delay(Math.max(0, ms), undefined, signal === undefined ? {} : { signal });
  } catch (error) {
    if (signal?.aborted) throw new InterruptedError();
    throw error;
  }
}

function apiFailed(error: GitHubError, waiting: boolean): UserError {
  const { retryAfter, reset } = error.limited;
  const when =
    retryAfter !== null
      ? `; GitHub asks to retry after ${retryAfter} s`
      : reset !== null
        ? `; the rate limit resets at ${reset.toISOString()}`
        : '';
  const hint = error.rateLimited
    ? waiting
      ? 'The limit resets after the --wait bound: run again then, or with a longer --wait. A token (GH_TOKEN) raises the limit from 60 to 5000 requests an hour.'
      : 'Run again then, or add --wait, which waits for the limit to reset. A token (GH_TOKEN) raises the limit from 60 to 5000 requests an hour.'
    : error.status === null
      ? 'GitHub did not answer: check the network and --api-url (or GITHUB_API_URL).'
      : error.status === 401
        ? 'GitHub refused the token (expired or mistyped): set GH_TOKEN to a valid one, or unset it to read public repositories without one.'
        : error.status === 404
          ? 'GitHub does not know the repository or commit: check --fork-owner and upstream.url, or the token may not read a private fork.'
          : 'Run again later; --verbose shows the commands run.';
  return new UserError('GITHUB_API_FAILED', `${error.message}${when}`, {
    hint,
    details: {
      request: error.request,
      status: error.status,
      retryAfter,
      rateLimitReset: reset === null ? null : reset.toISOString(),
    },
  });
}
