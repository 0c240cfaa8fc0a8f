import {
  DEFAULT_RETRIES,
  GitHubError,
  gitHubClient,
  type GitHubClient,
  type PullRequest,
  type RepoId,
} from '../adapters/github.js';
import { packageVersion } from '../adapters/package-root.js';
import { itemsPass, formatItems } from '../core/report-items.js';
import { UserError } from '../core/errors.js';
import { githubRepoOf, isLoopback, parseRepoLocation, redactSecrets } from './fork-refs.js';
import { DESCRIPTION_FILE, policyItems } from '../readiness/policy.js';
import type { Context } from '../series/context.js';
import type { ForkTarget } from './fork.js';
import { readPolicyFiles } from '../readiness/policy-files.js';
import type { Logger } from '../adapters/log.js';

export const DEFAULT_API_URL = 'https://api.github.com';

export interface PullRequestOutcome {
  status: 'created' | 'updated' | 'unchanged' | 'would-create' | 'would-update';
  /** Null only in a dry run that would create it. */
  number: number | null;
  url: string | null;
  draft: boolean;
  /** `<fork owner>:<branch>`. */
  head: string;
  /** `<owner>/<repo>` of the upstream repository. */
  repository: string;
  base: string;
  /** The fields a PATCH changed (or would change). */
  changed: Array<'title' | 'body'>;
}

export interface OpenOptions {
  fork: ForkTarget;
  branch: string;
  /** `--fork-owner`: the fork's owner when its URL does not say it. */
  forkOwner?: string | undefined;
  /** `--api-url`, else GITHUB_API_URL, else api.github.com. */
  apiUrl?: string | undefined;
  /** The token found (`findToken`), or null. */
  token: string | null;
  /** `--allow-second-pr`: open one even when the user has another open pull request upstream. */
  allowSecond?: boolean | undefined;
}

/** Everything a request needs, checked before anything is pushed. */
export interface PreparedOpen {
  token: string;
  upstream: RepoId;
  head: string;
  /** pr/description.md, verbatim. */
  body: string;
  apiUrl: string;
  /** The fork owner's login: whose other open pull requests upstream count. */
  owner: string;
  allowSecond: boolean;
}

/**
 * What `--open` needs before any request: the PR text passes the policy
 * checks (no placeholder, an AI use disclosure), a token, the upstream
 * repository and the fork's owner. Run before anything is pushed.
 */
export async function prepareOpen(ctx: Context, o: OpenOptions): Promise<PreparedOpen> {
  const files = await readPolicyFiles(ctx.projectRoot);
  const checks = policyItems(files);
  if (!itemsPass(checks))
    throw new UserError(
      'PR_TEXT_INCOMPLETE',
      `The pull request text is not ready to open the pull request:\n${formatItems(checks.filter((c) => c.status !== 'pass')).join('\n')}`,
      {
        hint: `Write ${DESCRIPTION_FILE} and pr/commit-message.txt in your own words, with an AI use disclosure (pr/README.md). Nothing was sent to GitHub.`,
        details: { checks },
      },
    );
  const body = files.find((f) => f.path === DESCRIPTION_FILE)?.text ?? '';

  const token = o.token;
  if (token === null)
    throw new UserError(
      'TOKEN_MISSING',
      '--open needs a GitHub token: none in GH_TOKEN or GITHUB_TOKEN, and `gh auth token` gave none (gh not on PATH or not logged in).',
      {
        hint: 'Run `gh auth login`, or create a token that may create pull requests in the upstream repository (classic: public_repo) and set GH_TOKEN (or name its variable with --token-env); docs/pull-request.md, "Opening the pull request", lists which tokens work. Or leave out --open and open the pull request once by hand: each refresh of the branch updates it.',
      },
    );

  const upstreamRepo = githubRepoOf(parseRepoLocation(ctx.config.upstream.url, ctx.cwd));
  if (upstreamRepo === null)
    throw new UserError('USAGE', `--open: upstream.url (${ctx.config.upstream.url}) is not a GitHub repository URL.`, {
      hint: 'Set upstream.url in mlx-storage-pr.config.json to https://<host>/<owner>/<repo>.git.',
    });
  const owner = o.forkOwner ?? githubRepoOf(o.fork.location)?.owner;
  if (owner === undefined || owner === '')
    throw new UserError('USAGE', `--open: the fork ${o.fork.given} does not say whose fork it is.`, {
      hint: 'Pass --fork-owner <your GitHub login> (the pull request comes from <login>:<branch>).',
    });
  const apiUrl = apiUrlOf(ctx, o.apiUrl);
  verifyApiUrl(apiUrl, ctx.cwd);
  return {
    token,
    upstream: { owner: upstreamRepo.owner, repo: upstreamRepo.repo },
    head: `${owner}:${o.branch}`,
    body,
    apiUrl,
    owner,
    allowSecond: o.allowSecond === true,
  };
}

/** `--api-url`, else GITHUB_API_URL, else api.github.com. */
export function apiUrlOf(ctx: Context, apiUrl: string | undefined): string {
  return apiUrl ?? (ctx.env['GITHUB_API_URL'] || DEFAULT_API_URL);
}

/**
 * The GitHub client of `--open` and `--ci`: a 5xx or a dropped connection is
 * tried again, at most 3 times after 1, 2 and 4 s, each retry logged.
 */
export function apiClient(apiUrl: string, token: string | null, log: Logger): GitHubClient {
  return gitHubClient({
    baseUrl: apiUrl,
    token,
    userAgent: `mlx-storage-pr/${packageVersion()}`,
    retry: {
      onRetry: (r) =>
        log.warn(`${r.request}: ${r.reason}; trying again in ${r.delayMs / 1000} s (retry ${r.attempt} of ${r.of})`),
    },
  });
}

/** The API URL the token goes to: https, or http to this machine only; never with a user part. */
export function verifyApiUrl(apiUrl: string, cwd: string): void {
  const location = parseRepoLocation(apiUrl, cwd);
  const shown = redactSecrets(apiUrl);
  if (location.kind !== 'network' || !/^https?$/.test(location.scheme))
    throw new UserError('USAGE', `--api-url ${shown} is not an https:// URL.`, {
      hint: 'Pass the GitHub API base URL, e.g. --api-url https://api.github.com (or https://<host>/api/v3 for GitHub Enterprise).',
    });
  if (location.user !== null)
    throw new UserError('USAGE', `--api-url ${shown} holds a user name or token.`, {
      hint: 'Give the URL without the part before @ and set GH_TOKEN (or GITHUB_TOKEN) instead.',
    });
  if (location.scheme === 'http' && !isLoopback(location.host))
    throw new UserError(
      'USAGE',
      `--api-url ${shown}: mlx-storage-pr does not send the token over plain http, where it would cross the network unencrypted.`,
      { hint: 'Give the API as an https:// URL (a server on this machine may use http).' },
    );
}

/**
 * Creates the pull request from `<fork owner>:<branch>` into the upstream
 * default branch (a draft unless asked otherwise), or updates the open one
 * when its title or body differ from the commit subject and
 * pr/description.md. Nothing else is touched (an open pull request keeps its
 * draft state and base).
 */
export async function openPullRequest(
  ready: PreparedOpen,
  o: { title: string; draft: boolean; dryRun: boolean; log: Logger },
): Promise<PullRequestOutcome> {
  const client = apiClient(ready.apiUrl, ready.token, o.log);
  const repository = `${ready.upstream.owner}/${ready.upstream.repo}`;
  try {
    const base = await client.defaultBranch(ready.upstream);
    const open = await client.openPullRequest(ready.upstream, ready.head);
    const common = { head: ready.head, repository, base };
    if (open === null) {
      await verifyNoOtherPullRequest(client, ready);
      if (o.dryRun) return { ...common, status: 'would-create', number: null, url: null, draft: o.draft, changed: [] };
      const created = await createOnce(client, ready, { title: o.title, base, draft: o.draft }, o.log);
      return {
        ...common,
        status: 'created',
        number: created.number,
        url: created.url,
        draft: created.draft,
        changed: [],
      };
    }
    const changes: { title?: string; body?: string } = {};
    if (open.title !== o.title) changes.title = o.title;
    if (open.body !== ready.body) changes.body = ready.body;
    const changed = Object.keys(changes) as Array<'title' | 'body'>;
    const known = { ...common, number: open.number, url: open.url, draft: open.draft, base: open.base, changed };
    if (changed.length === 0) return { ...known, status: 'unchanged' };
    if (o.dryRun) return { ...known, status: 'would-update' };
    const updated = await client.updatePullRequest(ready.upstream, open.number, changes);
    return { ...known, status: 'updated', url: updated.url, draft: updated.draft };
  } catch (error) {
    if (error instanceof GitHubError) throw apiFailed(error, ready.head, repository);
    throw error;
  }
}

/**
 * MLX lets an outside contributor have one open pull request at a time (a
 * bot closes the second): refuse to open another unless asked to.
 */
async function verifyNoOtherPullRequest(client: GitHubClient, ready: PreparedOpen): Promise<void> {
  if (ready.allowSecond) return;
  const others = await client.openPullRequestsBy(ready.upstream, ready.owner);
  if (others.length === 0) return;
  const repository = `${ready.upstream.owner}/${ready.upstream.repo}`;
  throw new UserError(
    'OTHER_PULL_REQUEST_OPEN',
    `${ready.owner} already has an open pull request in ${repository}:\n${others.map((p) => `  #${p.number} ${p.title}: ${p.url}`).join('\n')}\n${repository} closes a second open pull request of an outside contributor, so none was opened.`,
    {
      hint: `Wait until it is merged or closed, then run again; the branch is pushed and each refresh keeps it current. Add --allow-second-pr to open one anyway (you are a maintainer, or ${repository} allows it).`,
      details: { open: others },
    },
  );
}

/**
 * Creates the pull request. A POST that failed on GitHub's side (5xx) or
 * lost its answer may have created it: look first, and create again only
 * when it is not there, at most 3 times after 1, 2 and 4 s.
 */
async function createOnce(
  client: GitHubClient,
  ready: PreparedOpen,
  pull: { title: string; base: string; draft: boolean },
  log: Logger,
): Promise<PullRequest> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await client.createPullRequest(ready.upstream, { ...pull, body: ready.body, head: ready.head });
    } catch (error) {
      const transient = error instanceof GitHubError && (error.status === null || error.status >= 500);
      if (!transient || attempt > DEFAULT_RETRIES) throw error;
      const delayMs = 1000 * 2 ** (attempt - 1);
      log.warn(
        `${error.request}: ${error.status === null ? 'no answer' : `HTTP ${error.status}`}; looking for the pull request, then trying again in ${delayMs / 1000} s if it is not there (retry ${attempt} of ${DEFAULT_RETRIES})`,
      );
      const made = await client.openPullRequest(ready.upstream, ready.head);
      if (made !== null) return made;
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

function apiFailed(error: GitHubError, head: string, repository: string): UserError {
  const hint =
    error.status === null
      ? 'GitHub did not answer: check the network and --api-url (or GITHUB_API_URL).'
      : error.status >= 200 && error.status < 300
        ? `The request went through, but the answer is not what GitHub sends (a proxy or an old server at --api-url?): the pull request may have been created. Look at ${repository}'s pull requests from ${head}; running again finds an open one and updates it.`
        : error.status === 401
          ? 'GitHub refused the token (expired or mistyped): set GH_TOKEN to a valid one.'
          : error.status === 403 || error.status === 404
            ? `The token may not create pull requests in ${repository}. A fine-grained token scoped to your fork cannot; use a classic token with public_repo, or open the pull request once by hand from ${head} (each refresh of the branch updates it).`
            : error.status === 422
              ? `GitHub did not accept the pull request: check that the branch ${head} exists on your fork (push it first) and that it differs from ${repository}'s default branch.`
              : 'Run again later; --verbose shows the commands run.';
  return new UserError('GITHUB_API_FAILED', error.message, {
    hint,
    details: { request: error.request, status: error.status },
  });
}
