import { Octokit } from '@octokit/rest';

/**
 * The GitHub REST API, through Octokit: the few calls that open or update a
 * pull request and read the checks of a commit. Every failure is a
 * GitHubError with the request, the HTTP status (null: no answer), GitHub's
 * message and, for a rate limit, when to try again; callers turn it into a
 * UserError with a hint.
 */

export interface RepoId {
  owner: string;
  repo: string;
}

export interface PullRequest {
  number: number;
  url: string;
  title: string;
  body: string;
  draft: boolean;
  base: string;
  /** The commit the pull request's head holds (null: GitHub did not say). */
  headSha: string | null;
}

/** An open pull request as GitHub lists it. */
export interface OpenPullRequest {
  number: number;
  title: string;
  /** The login that opened it (null: GitHub did not say). */
  author: string | null;
  /** The commit its head holds (null: GitHub did not say). */
  headSha: string | null;
  url: string | null;
}

/** A check run of a commit, as GitHub lists it. */
export interface CheckRun {
  name: string;
  /** `queued`, `in_progress`, `completed` (also `waiting`, `requested`, `pending` for Actions). */
  status: string;
  /** Null while it runs. */
  conclusion: string | null;
  url: string | null;
}

/** One context of a commit's combined status. */
export interface CommitStatus {
  context: string;
  /** `pending`, `success`, `failure` or `error`. */
  state: string;
  url: string | null;
}

/** A GitHub Actions workflow run. */
export interface WorkflowRun {
  name: string;
  status: string;
  conclusion: string | null;
  url: string | null;
}

/** What GitHub said of the rate limit in its last answer. */
export interface RateLimit {
  limit: number;
  remaining: number;
  /** When the limit resets. */
  reset: Date;
}

export class GitHubError extends Error {
  constructor(
    readonly request: string,
    readonly status: number | null,
    readonly githubMessage: string,
    /** A rate limit: `Retry-After` in seconds, or when the exhausted limit resets (`x-ratelimit-reset`). */
    readonly limited: { retryAfter: number | null; reset: Date | null } = { retryAfter: null, reset: null },
  ) {
    super(`${request} failed (${status === null ? 'no answer' : `HTTP ${status}`}): ${githubMessage}`);
    this.name = 'GitHubError';
  }

  /** GitHub refused for a rate limit and said when to try again. */
  get rateLimited(): boolean {
    return this.limited.retryAfter !== null || this.limited.reset !== null;
  }
}

export interface GitHubClient {
  /** The repository's default branch. */
  defaultBranch(repo: RepoId): Promise<string>;
  /** The open pull request of `head` (`owner:branch`) in `repo`, or null. */
  openPullRequest(repo: RepoId, head: string): Promise<PullRequest | null>;
  /** The open pull requests `author` opened in `repo` (GitHub's issue search, all pages). */
  openPullRequestsBy(repo: RepoId, author: string): Promise<Array<{ number: number; url: string; title: string }>>;
  createPullRequest(
    repo: RepoId,
    pull: { title: string; body: string; head: string; base: string; draft: boolean },
  ): Promise<PullRequest>;
  updatePullRequest(repo: RepoId, number: number, changes: { title?: string; body?: string }): Promise<PullRequest>;
  /** Every open pull request of `repo` (all pages), as GitHub orders them: newest first. */
  openPullRequests(repo: RepoId): Promise<OpenPullRequest[]>;
  /** The paths pull request `number` changes (all pages; a rename gives both paths). */
  pullRequestFiles(repo: RepoId, number: number): Promise<string[]>;
  /** Every check run of `ref` (all pages). */
  checkRuns(repo: RepoId, ref: string): Promise<CheckRun[]>;
  /** Every context of `ref`'s combined status (all pages). */
  commitStatuses(repo: RepoId, ref: string): Promise<CommitStatus[]>;
  /** The workflow runs of the commit `headSha` (all pages). */
  workflowRuns(repo: RepoId, headSha: string): Promise<WorkflowRun[]>;
  /** Whether the repository has GitHub Actions enabled; null when GitHub does not say (403/404 without admin rights). */
  actionsEnabled(repo: RepoId): Promise<boolean | null>;
  /** The rate limit as of the last answer, or null before any. */
  rateLimit(): RateLimit | null;
}

/** How long one request may take. */
const TIMEOUT_MS = 60_000;

/** An answer with a success status that lacks fields the tool needs (a proxy, an old Enterprise server). */
class UnexpectedAnswer extends Error {
  constructor(
    readonly status: number,
    readonly missing: string[],
    readonly body: unknown,
  ) {
    super(`the answer lacks ${missing.join(', ')}`);
  }
}

/** The first 200 characters of an answer, as JSON. */
function excerpt(body: unknown): string {
  const text = JSON.stringify(body) ?? String(body);
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

function pullOf(raw: unknown, status: number): PullRequest {
  const r = (raw ?? {}) as Record<string, unknown>;
  const base = (r['base'] ?? {}) as Record<string, unknown>;
  const head = (r['head'] ?? {}) as Record<string, unknown>;
  const missing = [
    typeof r['number'] === 'number' ? null : 'number',
    typeof r['html_url'] === 'string' ? null : 'html_url',
    typeof r['title'] === 'string' ? null : 'title',
    typeof base['ref'] === 'string' ? null : 'base.ref',
  ].filter((m): m is string => m !== null);
  if (missing.length > 0) throw new UnexpectedAnswer(status, missing, raw);
  return {
    number: r['number'] as number,
    url: r['html_url'] as string,
    title: r['title'] as string,
    body: typeof r['body'] === 'string' ? r['body'] : '',
    draft: r['draft'] === true,
    base: base['ref'] as string,
    headSha: typeof head['sha'] === 'string' ? head['sha'] : null,
  };
}

type Headers = Record<string, string | number | undefined>;

/**
 * A rate limit in a refusal's headers: `Retry-After` (seconds; a 429, or
 * GitHub's secondary limit), or `x-ratelimit-remaining: 0` with the reset
 * time (a 403 or 429 once the hourly requests are used up).
 */
function limitOf(status: number, headers: Headers): { retryAfter: number | null; reset: Date | null } {
  const none = { retryAfter: null, reset: null };
  if (status !== 403 && status !== 429) return none;
  const retryAfter = Number(headers['retry-after']);
  if (headers['retry-after'] !== undefined && Number.isFinite(retryAfter) && retryAfter >= 0)
    return { retryAfter, reset: null };
  const reset = Number(headers['x-ratelimit-reset']);
  if (String(headers['x-ratelimit-remaining']) === '0' && Number.isFinite(reset))
    return { retryAfter: null, reset: new Date(reset * 1000) };
  return none;
}

/** GitHub's own words for a failed request: its `message`, and the `errors` of a validation failure. */
function said(error: unknown): {
  status: number | null;
  message: string;
  limited: { retryAfter: number | null; reset: Date | null };
} {
  const e = error as {
    status?: number;
    message?: string;
    response?: { status: number; data?: unknown; headers?: Headers };
  };
  if (e.response === undefined)
    return { status: null, message: e.message ?? String(error), limited: { retryAfter: null, reset: null } };
  const data = e.response.data as { message?: string; errors?: Array<{ message?: string; code?: string }> } | undefined;
  const details = (data?.errors ?? []).map((x) => x.message ?? x.code ?? '').filter(Boolean);
  return {
    status: e.response.status,
    message: [data?.message ?? e.message ?? '', ...details].filter(Boolean).join('; '),
    limited: limitOf(e.response.status, e.response.headers ?? {}),
  };
}

async function call<T>(request: string, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  try {
    return await run(AbortSignal.timeout(TIMEOUT_MS));
  } catch (error) {
    if (error instanceof UnexpectedAnswer)
      throw new GitHubError(
        request,
        error.status,
        `GitHub answered HTTP ${error.status} without ${error.missing.join(', ')}: ${excerpt(error.body)}`,
      );
    const { status, message, limited } = said(error);
    throw new GitHubError(request, status, message, limited);
  }
}

/**
 * Every item of a paginated list, through Octokit's `paginate` (it follows
 * the `Link` header). `key` names the list in an object answer
 * (`check_runs`, `statuses`, `workflow_runs`); Octokit unwraps some of these
 * into a plain list itself, others (the combined status) it leaves whole.
 */
async function allPages(
  octokit: Octokit,
  route: string,
  params: Record<string, unknown>,
  key: string,
  signal: AbortSignal,
): Promise<unknown[]> {
  const items: unknown[] = [];
  for await (const response of octokit.paginate.iterator(route, { ...params, per_page: 100, request: { signal } })) {
    const data = response.data as unknown;
    const list = Array.isArray(data) ? data : (data as Record<string, unknown> | null)?.[key];
    if (!Array.isArray(list)) throw new UnexpectedAnswer(response.status, [key], data);
    items.push(...(list as unknown[]));
  }
  return items;
}

/** A request failed for a reason that may pass: GitHub's side (5xx) or no answer (a dropped connection). */
function isTransient(error: unknown): boolean {
  const e = error as { status?: number; response?: { status: number } };
  if (error instanceof UnexpectedAnswer) return false;
  if (e.response === undefined) return !(error instanceof Error && error.name === 'AbortError');
  return e.response.status >= 500;
}

/** How a failed request is tried again: how often, after how long, and who is told. */
export interface RetryPolicy {
  /** Tries after the first. */
  retries: number;
  /** The wait before try `n` (1-based) in milliseconds. */
  delayMs: (attempt: number) => number;
  /** Told before each wait. */
  onRetry: (retry: { request: string; reason: string; attempt: number; of: number; delayMs: number }) => void;
}

/** Three more tries after 1, 2 and 4 seconds. */
export const DEFAULT_RETRIES = 3;
const backoff = (attempt: number) => 1000 * 2 ** (attempt - 1);

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

const checkRunOf = (raw: unknown): CheckRun => {
  const r = raw as Record<string, unknown>;
  return {
    name: text(r['name']) ?? '(unnamed)',
    status: text(r['status']) ?? 'unknown',
    conclusion: text(r['conclusion']),
    url: text(r['html_url']) ?? text(r['details_url']),
  };
};

const commitStatusOf = (raw: unknown): CommitStatus => {
  const s = raw as Record<string, unknown>;
  return {
    context: text(s['context']) ?? '(no context)',
    state: text(s['state']) ?? 'unknown',
    url: text(s['target_url']),
  };
};

const workflowRunOf = (raw: unknown): WorkflowRun => {
  const r = raw as Record<string, unknown>;
  return {
    name: text(r['name']) ?? '(unnamed)',
    status: text(r['status']) ?? 'unknown',
    conclusion: text(r['conclusion']),
    url: text(r['html_url']),
  };
};

const openPullOf = (raw: unknown): OpenPullRequest[] => {
  const r = (raw ?? {}) as Record<string, unknown>;
  if (typeof r['number'] !== 'number') return [];
  const user = (r['user'] ?? {}) as Record<string, unknown>;
  const head = (r['head'] ?? {}) as Record<string, unknown>;
  return [
    {
      number: r['number'],
      title: text(r['title']) ?? '',
      author: text(user['login']),
      headSha: text(head['sha']),
      url: text(r['html_url']),
    },
  ];
};

const filePathsOf = (raw: unknown): string[] => {
  const f = (raw ?? {}) as Record<string, unknown>;
  return [text(f['previous_filename']), text(f['filename'])].filter((p): p is string => p !== null);
};

/** Whether `repo` has GitHub Actions enabled; null when GitHub does not say (no admin rights). */
async function actionsEnabled(octokit: Octokit, repo: RepoId): Promise<boolean | null> {
  try {
    return await call(`GET /repos/${repo.owner}/${repo.repo}/actions/permissions`, async (signal) => {
      const { data, status } = await octokit.request('GET /repos/{owner}/{repo}/actions/permissions', {
        ...repo,
        request: { signal },
      });
      if (typeof data?.enabled !== 'boolean') throw new UnexpectedAnswer(status, ['enabled'], data);
      return data.enabled;
    });
  } catch (error) {
    // Reading the setting needs admin rights on the repository: without them GitHub does not say.
    if (
      error instanceof GitHubError &&
      !error.rateLimited &&
      (error.status === 401 || error.status === 403 || error.status === 404)
    )
      return null;
    throw error;
  }
}

/** Tries a failed request again under `retry`, when the failure may pass; never a POST. */
function retryRequests(octokit: Octokit, retry: RetryPolicy): void {
  octokit.hook.wrap('request', async (request, opts) => {
    const method = String(opts.method);
    // A POST that failed may still have been done: its caller checks before trying again.
    const tries = method === 'POST' ? 0 : retry.retries;
    for (let attempt = 1; ; attempt++) {
      try {
        return await request(opts);
      } catch (error) {
        const signal = (opts.request as { signal?: AbortSignal } | undefined)?.signal;
        if (attempt > tries || !isTransient(error) || signal?.aborted === true) throw error;
        const delayMs = retry.delayMs(attempt);
        const { status, message } = said(error);
        retry.onRetry({
          request: `${method} ${String(opts.url)}`,
          reason: status === null ? `no answer (${message})` : `HTTP ${status}`,
          attempt,
          of: tries,
          delayMs,
        });
        await new Promise((resolve) => setTimeout(resolve, delayMs));
      }
    }
  });
}

export function gitHubClient(options: {
  baseUrl: string;
  token: string | null;
  userAgent: string;
  /** Tries again on a 5xx or a dropped connection (requests other than POST); default: none. */
  retry?: Partial<RetryPolicy> & Pick<RetryPolicy, 'onRetry'>;
}): GitHubClient {
  const octokit = new Octokit({
    ...(options.token === null ? {} : { auth: options.token }),
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    userAgent: options.userAgent,
    // Octokit's own console output would bypass the tool's logger.
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  });
  if (options.retry !== undefined)
    retryRequests(octokit, { retries: DEFAULT_RETRIES, delayMs: backoff, ...options.retry });
  return {
    rateLimit: trackRateLimit(octokit),
    ...ciReaders(octokit),
    ...openPullRequestReaders(octokit),
    ...pullRequests(octokit),
  };
}

/** Reads GitHub's rate limit headers of every answer; the getter gives the last one seen. */
function trackRateLimit(octokit: Octokit): () => RateLimit | null {
  let limit: RateLimit | null = null;
  octokit.hook.after('request', (response) => {
    const h = response.headers as Headers;
    const [max, remaining, reset] = [h['x-ratelimit-limit'], h['x-ratelimit-remaining'], h['x-ratelimit-reset']].map(
      Number,
    );
    if ([max, remaining, reset].every((n) => Number.isFinite(n)))
      limit = { limit: max as number, remaining: remaining as number, reset: new Date((reset as number) * 1000) };
  });
  return () => limit;
}

/** What `pr --ci` reads of a commit: its check runs, commit statuses and workflow runs, and whether Actions runs. */
function ciReaders(
  octokit: Octokit,
): Pick<GitHubClient, 'checkRuns' | 'commitStatuses' | 'workflowRuns' | 'actionsEnabled'> {
  return {
    checkRuns: (repo, ref) =>
      call(`GET /repos/${repo.owner}/${repo.repo}/commits/${ref}/check-runs`, async (signal) => {
        const runs = await allPages(
          octokit,
          'GET /repos/{owner}/{repo}/commits/{ref}/check-runs',
          { ...repo, ref },
          'check_runs',
          signal,
        );
        return runs.map(checkRunOf);
      }),
    commitStatuses: (repo, ref) =>
      call(`GET /repos/${repo.owner}/${repo.repo}/commits/${ref}/status`, async (signal) => {
        const statuses = await allPages(
          octokit,
          'GET /repos/{owner}/{repo}/commits/{ref}/status',
          { ...repo, ref },
          'statuses',
          signal,
        );
        return statuses.map(commitStatusOf);
      }),
    workflowRuns: (repo, headSha) =>
      call(`GET /repos/${repo.owner}/${repo.repo}/actions/runs?head_sha=${headSha}`, async (signal) => {
        const runs = await allPages(
          octokit,
          'GET /repos/{owner}/{repo}/actions/runs',
          { ...repo, head_sha: headSha },
          'workflow_runs',
          signal,
        );
        return runs.map(workflowRunOf);
      }),
    actionsEnabled: (repo) => actionsEnabled(octokit, repo),
  };
}

/** The open pull requests of a repository and their files, as `check --open-prs` lists them. */
function openPullRequestReaders(octokit: Octokit): Pick<GitHubClient, 'openPullRequests' | 'pullRequestFiles'> {
  return {
    openPullRequests: (repo) =>
      call(`GET /repos/${repo.owner}/${repo.repo}/pulls?state=open`, async (signal) => {
        const pulls = await allPages(
          octokit,
          'GET /repos/{owner}/{repo}/pulls',
          { ...repo, state: 'open', sort: 'created', direction: 'desc' },
          'pulls',
          signal,
        );
        return pulls.flatMap(openPullOf);
      }),
    pullRequestFiles: (repo, number) =>
      call(`GET /repos/${repo.owner}/${repo.repo}/pulls/${number}/files`, async (signal) => {
        const files = await allPages(
          octokit,
          'GET /repos/{owner}/{repo}/pulls/{pull_number}/files',
          { ...repo, pull_number: number },
          'files',
          signal,
        );
        return [...new Set(files.flatMap(filePathsOf))];
      }),
  };
}

/** The pull request calls of `pr --open`. */
function pullRequests(
  octokit: Octokit,
): Pick<
  GitHubClient,
  'defaultBranch' | 'openPullRequest' | 'openPullRequestsBy' | 'createPullRequest' | 'updatePullRequest'
> {
  return {
    defaultBranch: (repo) =>
      call(`GET /repos/${repo.owner}/${repo.repo}`, async (signal) => {
        const { data, status } = await octokit.rest.repos.get({ ...repo, request: { signal } });
        if (typeof data?.default_branch !== 'string') throw new UnexpectedAnswer(status, ['default_branch'], data);
        return data.default_branch;
      }),
    openPullRequest: (repo, head) =>
      call(`GET /repos/${repo.owner}/${repo.repo}/pulls?head=${head}`, async (signal) => {
        const { data, status } = await octokit.rest.pulls.list({ ...repo, head, state: 'open', request: { signal } });
        if (!Array.isArray(data)) throw new UnexpectedAnswer(status, ['a list of pull requests'], data);
        const first = data[0];
        return first === undefined ? null : pullOf(first, status);
      }),
    openPullRequestsBy: (repo, author) =>
      call(`GET /search/issues?q=repo:${repo.owner}/${repo.repo} is:pr is:open author:${author}`, async (signal) => {
        const items = await allPages(
          octokit,
          'GET /search/issues',
          { q: `repo:${repo.owner}/${repo.repo} is:pr is:open author:${author}` },
          'items',
          signal,
        );
        return items.flatMap((raw) => {
          const r = raw as Record<string, unknown>;
          return typeof r['number'] === 'number' && typeof r['html_url'] === 'string'
            ? [{ number: r['number'], url: r['html_url'], title: text(r['title']) ?? '' }]
            : [];
        });
      }),
    createPullRequest: (repo, pull) =>
      call(`POST /repos/${repo.owner}/${repo.repo}/pulls`, async (signal) => {
        const { data, status } = await octokit.rest.pulls.create({ ...repo, ...pull, request: { signal } });
        return pullOf(data, status);
      }),
    updatePullRequest: (repo, number, changes) =>
      call(`PATCH /repos/${repo.owner}/${repo.repo}/pulls/${number}`, async (signal) => {
        const { data, status } = await octokit.rest.pulls.update({
          ...repo,
          pull_number: number,
          ...changes,
          request: { signal },
        });
        return pullOf(data, status);
      }),
  };
}
