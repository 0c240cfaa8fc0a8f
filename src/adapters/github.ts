import { Octokit } from '@octokit/rest';

/**
 * The GitHub REST API, through Octokit: the few calls that open or update a
 * pull request. Every failure is a GitHubError with the request, the HTTP
 * status (null: no answer) and GitHub's message; callers turn it into a
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
}

export class GitHubError extends Error {
  constructor(
    readonly request: string,
    readonly status: number | null,
    readonly githubMessage: string,
  ) {
    super(`${request} failed (${status === null ? 'no answer' : `HTTP ${status}`}): ${githubMessage}`);
    this.name = 'GitHubError';
  }
}

export interface GitHubClient {
  /** The repository's default branch. */
  defaultBranch(repo: RepoId): Promise<string>;
  /** The open pull request of `head` (`owner:branch`) in `repo`, or null. */
  openPullRequest(repo: RepoId, head: string): Promise<PullRequest | null>;
  createPullRequest(
    repo: RepoId,
    pull: { title: string; body: string; head: string; base: string; draft: boolean },
  ): Promise<PullRequest>;
  updatePullRequest(repo: RepoId, number: number, changes: { title?: string; body?: string }): Promise<PullRequest>;
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
  };
}

/** GitHub's own words for a failed request: its `message`, and the `errors` of a validation failure. */
function said(error: unknown): { status: number | null; message: string } {
  const e = error as {
    status?: number;
    message?: string;
    response?: { status: number; data?: unknown };
  };
  if (e.response === undefined) return { status: null, message: e.message ?? String(error) };
  const data = e.response.data as { message?: string; errors?: Array<{ message?: string; code?: string }> } | undefined;
  const details = (data?.errors ?? []).map((x) => x.message ?? x.code ?? '').filter(Boolean);
  return {
    status: e.response.status,
    message: [data?.message ?? e.message ?? '', ...details].filter(Boolean).join('; '),
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
    const { status, message } = said(error);
    throw new GitHubError(request, status, message);
  }
}

export function gitHubClient(options: { baseUrl: string; token: string; userAgent: string }): GitHubClient {
  const octokit = new Octokit({
    auth: options.token,
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    userAgent: options.userAgent,
    // Octokit's own console output would bypass the tool's logger.
    log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
  });
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
