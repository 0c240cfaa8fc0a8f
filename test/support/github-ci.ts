import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the stand-in received it. */
export interface CiRequest {
  method: string;
  /** Path and query, e.g. `/repos/alice/mlx/commits/<sha>/check-runs?per_page=100`. */
  url: string;
  authorization: string | null;
  /** When it arrived (Date.now()). */
  at: number;
}

/** A check run as GitHub's REST API lists it (the fields the tool reads, and a few more). */
export interface CheckRun {
  name: string;
  status: 'queued' | 'in_progress' | 'completed' | 'waiting' | 'requested' | 'pending';
  conclusion:
    'success' | 'failure' | 'neutral' | 'cancelled' | 'skipped' | 'timed_out' | 'action_required' | 'stale' | null;
}

/** A commit status (one context of the combined status). */
export interface CommitStatus {
  context: string;
  state: 'error' | 'failure' | 'pending' | 'success';
}

/** A workflow run, as `GET /repos/{owner}/{repo}/actions/runs` lists it. */
export interface WorkflowRun {
  name: string;
  head_sha: string;
  event: string;
  status: 'queued' | 'in_progress' | 'completed' | 'waiting' | 'requested' | 'pending' | 'action_required';
  conclusion: string | null;
}

/** What one repository holds, by commit id. */
export interface CiRepository {
  checkRuns: Record<string, CheckRun[]>;
  statuses: Record<string, CommitStatus[]>;
  workflowRuns: WorkflowRun[];
  /** `GET .../actions/permissions`: `enabled`, or the status GitHub answers with (403 without admin rights). */
  actions: boolean | number;
}

/** An open or closed pull request, by head (`owner:branch`). */
export interface CiPull {
  number: number;
  head: string;
  sha: string;
  state: 'open' | 'closed';
}

/** An answer given instead of the real one (rate limits, failures). */
export interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
  body: unknown;
}

/**
 * A stand-in for the GitHub REST endpoints `pr --ci` reads, on a local port:
 * pull requests by head, check runs and the combined status of a commit,
 * workflow runs by head commit, and whether a repository has Actions
 * enabled. Bodies are shaped as GitHub documents them; lists are paginated
 * with a `Link` header, at most `pageSize` items a page whatever `per_page`
 * asks. A request that carries a token must carry `token <token>`; one
 * without any is answered, as GitHub answers public reads.
 */
export interface GitHubCiStandIn {
  url: string;
  requests: CiRequest[];
  repos: Record<string, CiRepository>;
  pulls: CiPull[];
  pageSize: number;
  /** Answered in order, one per request, before the real answers. */
  scripted: ScriptedAnswer[];
  /** Called before each answer: tests change the state between polls here. */
  onRequest: ((request: CiRequest) => void) | null;
  close(): Promise<void>;
}

const emptyRepository = (): CiRepository => ({ checkRuns: {}, statuses: {}, workflowRuns: [], actions: true });

export async function startGitHubCiStandIn(options: {
  token: string;
  repositories: string[];
}): Promise<GitHubCiStandIn> {
  const state: Omit<GitHubCiStandIn, 'url' | 'close'> = {
    requests: [],
    repos: Object.fromEntries(options.repositories.map((r) => [r, emptyRepository()])),
    pulls: [],
    pageSize: 100,
    scripted: [],
    onRequest: null,
  };
  let base = '';
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    const request: CiRequest = {
      method: req.method ?? '',
      url,
      authorization: req.headers.authorization ?? null,
      at: Date.now(),
    };
    state.requests.push(request);
    state.onRequest?.(request);
    const send = (status: number, data: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, {
        'content-type': 'application/json; charset=utf-8',
        'x-ratelimit-limit': request.authorization ? '5000' : '60',
        'x-ratelimit-remaining': '42',
        'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
        ...headers,
      });
      res.end(JSON.stringify(data));
    };
    if (request.authorization !== null && request.authorization !== `token ${options.token}`)
      return send(401, { message: 'Bad credentials' });
    const next = state.scripted.shift();
    // Status 0: the connection drops without an answer.
    if (next?.status === 0) return req.socket.destroy();
    if (next) return send(next.status, next.body, next.headers);

    const parsed = new URL(url, base);
    /** One page of `items`, with GitHub's Link header when there are more. */
    const page = <T>(items: T[], wrap: (slice: T[]) => unknown) => {
      const perPage = Math.min(Number(parsed.searchParams.get('per_page') ?? '30'), state.pageSize);
      const number = Number(parsed.searchParams.get('page') ?? '1');
      const last = Math.max(1, Math.ceil(items.length / perPage));
      const link = (n: number, rel: string) => {
        const target = new URL(parsed.toString());
        target.searchParams.set('page', String(n));
        return `<${target.toString()}>; rel="${rel}"`;
      };
      const links = number < last ? [link(number + 1, 'next'), link(last, 'last')] : [];
      return send(
        200,
        wrap(items.slice((number - 1) * perPage, number * perPage)),
        links.length ? { link: links.join(', ') } : {},
      );
    };
    const match = /^\/repos\/([^/]+\/[^/]+)(\/.*)?$/.exec(parsed.pathname);
    const name = match?.[1] ?? '';
    const repo = state.repos[name];
    const rest = match?.[2] ?? '';
    if (req.method !== 'GET' || repo === undefined) return send(404, { message: 'Not Found' });

    if (rest === '/pulls') {
      const head = parsed.searchParams.get('head');
      const wanted = parsed.searchParams.get('state') ?? 'open';
      const pulls = state.pulls.filter((p) => (head === null || p.head === head) && p.state === wanted);
      return page(pulls, (slice) =>
        slice.map((p) => ({
          number: p.number,
          html_url: `https://github.example/${name}/pull/${p.number}`,
          state: p.state,
          title: 'Add a read-only Metal storage view',
          body: '',
          draft: true,
          head: { label: p.head, ref: p.head.split(':')[1], sha: p.sha },
          base: { ref: 'main' },
        })),
      );
    }
    const checks = /^\/commits\/([0-9a-f]{40})\/check-runs$/.exec(rest);
    if (checks) {
      const sha = checks[1] as string;
      const runs = (repo.checkRuns[sha] ?? []).map((r, i) => ({
        id: 1000 + i,
        head_sha: sha,
        name: r.name,
        status: r.status,
        conclusion: r.conclusion,
        html_url: `https://github.example/${name}/runs/${1000 + i}`,
        details_url: `https://github.example/${name}/actions/runs/7/job/${1000 + i}`,
        started_at: '2026-08-22T10:00:00Z',
        completed_at: r.status === 'completed' ? '2026-08-22T10:20:00Z' : null,
        app: { slug: 'github-actions' },
      }));
      return page(runs, (slice) => ({ total_count: runs.length, check_runs: slice }));
    }
    const status = /^\/commits\/([0-9a-f]{40})\/status$/.exec(rest);
    if (status) {
      const sha = status[1] as string;
      const list = (repo.statuses[sha] ?? []).map((s, i) => ({
        id: 2000 + i,
        context: s.context,
        state: s.state,
        description: `${s.context}: ${s.state}`,
        target_url: `https://ci.example/${name}/${s.context}`,
      }));
      const combined = list.some((s) => s.state === 'failure' || s.state === 'error')
        ? 'failure'
        : list.length > 0 && list.every((s) => s.state === 'success')
          ? 'success'
          : 'pending';
      return page(list, (slice) => ({
        state: combined,
        sha,
        total_count: list.length,
        statuses: slice,
        repository: { full_name: name },
        commit_url: `${base}/repos/${name}/commits/${sha}`,
        url: `${base}/repos/${name}/commits/${sha}/status`,
      }));
    }
    if (rest === '/actions/runs') {
      const sha = parsed.searchParams.get('head_sha');
      const runs = repo.workflowRuns
        .filter((r) => sha === null || r.head_sha === sha)
        .map((r, i) => ({ id: 3000 + i, html_url: `https://github.example/${name}/actions/runs/${3000 + i}`, ...r }));
      return page(runs, (slice) => ({ total_count: runs.length, workflow_runs: slice }));
    }
    if (rest === '/actions/permissions') {
      if (typeof repo.actions === 'number')
        return send(repo.actions, { message: 'Must have admin rights to Repository.' });
      return send(200, { enabled: repo.actions, allowed_actions: 'all' });
    }
    return send(404, { message: 'Not Found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(state, {
    url: base,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
