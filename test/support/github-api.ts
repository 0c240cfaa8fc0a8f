import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the stand-in received it. */
export interface ApiRequest {
  method: string;
  /** Path and query, e.g. `/repos/ml-explore/mlx/pulls?head=alice%3Ab&state=open`. */
  url: string;
  authorization: string | null;
  body: Record<string, unknown> | null;
}

interface Pull {
  number: number;
  title: string;
  body: string;
  draft: boolean;
  head: string;
  base: string;
  state: 'open' | 'closed';
  /** The login that opened it (default: the head's owner). */
  author?: string;
  /** The commit its head holds. */
  sha?: string;
  /** The paths it changes (`GET .../pulls/<n>/files`). */
  files?: string[];
}

/**
 * A stand-in for the few GitHub REST endpoints `pr --open` calls, on a local
 * port: the repository (its default branch), the list of pull requests by
 * head, create and update, and the issue search by author. It answers as
 * GitHub does (status codes, field names) and records every request. Only a
 * request with `token <token>` is let in.
 */
export interface GitHubStandIn {
  url: string;
  requests: ApiRequest[];
  pulls: Pull[];
  /** Answer pull request creation with this status (e.g. 403 for a token that may not). */
  refuseCreate: number | null;
  /** Create the pull request, but answer with this body instead of the pull request's fields. */
  createAnswer: unknown;
  /**
   * Answered in order, one per request, before the real answers: a status
   * (with GitHub's message for it), or `drop` to close the connection
   * without an answer. `create-then-502` creates the pull request, then answers 502.
   */
  failures: Array<number | 'drop' | 'create-then-502'>;
  /** The most items a page of a list holds (GitHub: per_page, at most 100); a smaller one makes more pages. */
  pageSize: number;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Record<string, unknown> | null> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as Record<string, unknown>) : null;
}

export async function startGitHubStandIn(options: {
  token: string;
  repository: string;
  defaultBranch: string;
}): Promise<GitHubStandIn> {
  const state = {
    requests: [] as ApiRequest[],
    pulls: [] as Pull[],
    refuseCreate: null as number | null,
    createAnswer: undefined as unknown,
    failures: [] as Array<number | 'drop' | 'create-then-502'>,
    pageSize: 100,
  };
  let base = '';
  const pullJson = (p: Pull) => ({
    number: p.number,
    html_url: `https://github.example/${options.repository}/pull/${p.number}`,
    title: p.title,
    body: p.body,
    draft: p.draft,
    state: p.state,
    head: { label: p.head, ...(p.sha === undefined ? {} : { sha: p.sha }) },
    base: { ref: p.base },
    user: { login: p.author ?? p.head.split(':')[0] },
  });
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const url = req.url ?? '/';
      state.requests.push({ method: req.method ?? '', url, authorization: req.headers.authorization ?? null, body });
      const send = (status: number, data: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...headers });
        res.end(JSON.stringify(data));
      };
      /** One page of `items`, as GitHub pages a list: `page` and `per_page`, a `Link` header to the next. */
      const sendPage = (items: unknown[]) => {
        const size = Math.min(state.pageSize, Number(parsed.searchParams.get('per_page') ?? 30));
        const page = Number(parsed.searchParams.get('page') ?? 1);
        const next = new URL(parsed);
        next.searchParams.set('page', String(page + 1));
        const more = items.length > page * size;
        send(200, items.slice((page - 1) * size, page * size), more ? { link: `<${next.href}>; rel="next"` } : {});
      };
      if (req.headers.authorization !== `token ${options.token}`) return send(401, { message: 'Bad credentials' });
      const parsed = new URL(url, base);
      const failure =
        state.failures[0] === 'create-then-502' && req.method !== 'POST' ? undefined : state.failures.shift();
      if (failure === 'drop') return req.socket.destroy();
      if (typeof failure === 'number') return send(failure, { message: failure >= 500 ? 'Server Error' : 'Failed' });
      if (req.method === 'GET' && parsed.pathname === '/search/issues') {
        const q = parsed.searchParams.get('q') ?? '';
        const author = /author:(\S+)/.exec(q)?.[1];
        const found = state.pulls.filter(
          (p) =>
            q.includes(`repo:${options.repository}`) &&
            q.includes('is:pr') &&
            (!q.includes('is:open') || p.state === 'open') &&
            (p.author ?? p.head.split(':')[0]) === author,
        );
        return send(200, {
          total_count: found.length,
          incomplete_results: false,
          items: found.map((p) => ({
            number: p.number,
            title: p.title,
            state: p.state,
            html_url: `https://github.example/${options.repository}/pull/${p.number}`,
            user: { login: p.author ?? p.head.split(':')[0] },
            pull_request: { html_url: `https://github.example/${options.repository}/pull/${p.number}` },
          })),
        });
      }
      const repo = `/repos/${options.repository}`;
      if (req.method === 'GET' && parsed.pathname === repo)
        return send(200, { full_name: options.repository, default_branch: options.defaultBranch });
      if (req.method === 'GET' && parsed.pathname === `${repo}/pulls`) {
        const head = parsed.searchParams.get('head');
        const wanted = parsed.searchParams.get('state') ?? 'open';
        return sendPage(
          state.pulls
            .filter((p) => (head === null || p.head === head) && (wanted === 'all' || p.state === wanted))
            .sort((a, b) => b.number - a.number)
            .map(pullJson),
        );
      }
      const files = new RegExp(`^${repo}/pulls/(\\d+)/files$`).exec(parsed.pathname);
      if (req.method === 'GET' && files) {
        const pull = state.pulls.find((p) => p.number === Number(files[1]));
        if (!pull) return send(404, { message: 'Not Found' });
        return sendPage((pull.files ?? []).map((filename) => ({ filename, status: 'modified' })));
      }
      if (req.method === 'POST' && parsed.pathname === `${repo}/pulls`) {
        if (state.refuseCreate !== null)
          return send(state.refuseCreate, { message: 'Resource not accessible by personal access token' });
        const pull: Pull = {
          number: state.pulls.length + 1,
          title: String(body?.['title']),
          body: typeof body?.['body'] === 'string' ? body['body'] : '',
          draft: body?.['draft'] === true,
          head: String(body?.['head']),
          base: String(body?.['base']),
          state: 'open',
        };
        state.pulls.push(pull);
        if (failure === 'create-then-502') return send(502, { message: 'Server Error' });
        return send(201, state.createAnswer === undefined ? pullJson(pull) : state.createAnswer);
      }
      const patch = new RegExp(`^${repo}/pulls/(\\d+)$`).exec(parsed.pathname);
      if (req.method === 'PATCH' && patch) {
        const pull = state.pulls.find((p) => p.number === Number(patch[1]));
        if (!pull) return send(404, { message: 'Not Found' });
        if (typeof body?.['title'] === 'string') pull.title = body['title'];
        if (typeof body?.['body'] === 'string') pull.body = body['body'];
        return send(200, pullJson(pull));
      }
      return send(404, { message: 'Not Found' });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    get requests() {
      return state.requests;
    },
    get pulls() {
      return state.pulls;
    },
    get refuseCreate() {
      return state.refuseCreate;
    },
    set refuseCreate(status: number | null) {
      state.refuseCreate = status;
    },
    get createAnswer() {
      return state.createAnswer;
    },
    set createAnswer(answer: unknown) {
      state.createAnswer = answer;
    },
    get failures() {
      return state.failures;
    },
    get pageSize() {
      return state.pageSize;
    },
    set pageSize(size: number) {
      state.pageSize = size;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
