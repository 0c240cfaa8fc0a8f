import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { startGitHubStandIn, type GitHubStandIn } from '../support/github-api.js';
import { git, makeProject, makeUpstream, runCli, tempDir } from '../support/repos.js';

/**
 * `check --open-prs` on a synthetic upstream whose pull requests live as
 * GitHub keeps them: `refs/pull/<n>/head` and, when it merges with the
 * default branch, `refs/pull/<n>/merge` (the default branch has moved on
 * since the pin, in a file the series does not change).
 */

const CMAKE = 'mlx/backend/metal/CMakeLists.txt';
const DOCS = 'docs/src/dev/extensions.rst';
const TOKEN = 'ghp_openPRs0000000000abcdefSECRET';

let upstream: { dir: string; sha: string };
let project: string;
const heads: Record<number, string> = {};

function edit(dir: string, file: string, from: string, to: string): void {
  const full = path.join(dir, file);
  const text = readFileSync(full, 'utf8');
  if (!text.includes(from)) throw new Error(`${file} has no "${from}"`);
  writeFileSync(full, text.replace(from, to));
}

/** A pull request: its head commit on top of the pin, and with `merge`, the merge ref into main. */
function pullRequest(number: number, change: (dir: string) => void, options: { merge: boolean }): void {
  git(upstream.dir, 'checkout', '--quiet', '-B', `pr-${number}`, upstream.sha);
  change(upstream.dir);
  git(upstream.dir, 'add', '-A');
  git(upstream.dir, 'commit', '--quiet', '-m', `pull request ${number}`);
  const head = git(upstream.dir, 'rev-parse', 'HEAD').trim();
  git(upstream.dir, 'checkout', '--quiet', 'main');
  git(upstream.dir, 'update-ref', `refs/pull/${number}/head`, head);
  heads[number] = head;
  if (!options.merge) return;
  const tree = git(upstream.dir, 'merge-tree', '--write-tree', 'main', head).trim();
  const merge = git(
    upstream.dir,
    'commit-tree',
    tree,
    '-p',
    'main',
    '-p',
    head,
    '-m',
    `Merge ${head} into main`,
  ).trim();
  git(upstream.dir, 'update-ref', `refs/pull/${number}/merge`, merge);
}

/** A ref to a commit the repository does not have: the source lists it and cannot give it. */
function brokenRef(ref: string): void {
  const file = path.join(upstream.dir, '.git', ref);
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${'1234567890'.repeat(4)}\n`);
}

/** A root commit with the pin's tree, dated 2020 (the fixture's commits are of 2025). */
function olderRoot(): string {
  const tree = git(upstream.dir, 'rev-parse', `${upstream.sha}^{tree}`).trim();
  const file = path.join(tempDir('msp-old-commit-'), 'commit');
  const who = 'Fixture <fixture@example.invalid> 1577836800 +0000';
  writeFileSync(file, `tree ${tree}\nauthor ${who}\ncommitter ${who}\n\nan old default branch\n`);
  return git(upstream.dir, 'hash-object', '-t', 'commit', '-w', file).trim();
}

type Check = {
  number: number;
  title: string | null;
  author: string | null;
  files: string[];
  checked: { ref: string; commit: string; how: string } | null;
  status: string;
  reason: string | null;
  report: { patches: Array<{ name: string; status: string; reasons: Array<{ file: string; reason: string }> }> } | null;
};
const summary = (checks: Check[]) =>
  checks.map((c) => [c.number, c.status, c.files, c.checked?.how ?? null, c.checked?.ref ?? null]);

beforeAll(() => {
  upstream = makeUpstream();
  project = makeProject(upstream.sha);
  // The default branch moved on after the pin, in a file the series does not change.
  writeFileSync(path.join(upstream.dir, 'NEWS.md'), 'news\n');
  git(upstream.dir, 'add', '-A');
  git(upstream.dir, 'commit', '--quiet', '-m', 'news');
  // 11: a line of the docs far from 0002's hunk: the series applies as it is.
  pullRequest(11, (dir) => edit(dir, DOCS, 'Text about scripts.', 'Text about scripts, longer.'), { merge: true });
  // 12: the context of 0001's hunk: a three-way merge takes it.
  pullRequest(12, (dir) => edit(dir, CMAKE, '/allocator.cpp', '/allocators.cpp'), { merge: true });
  // 13: its own lines where 0002 adds its section: a conflict.
  pullRequest(
    13,
    (dir) => edit(dir, DOCS, 'Text about operations.\n\n', 'Text about operations.\n\nUpstream words.\n\n'),
    { merge: true },
  );
  // 14: no file of the series.
  pullRequest(14, (dir) => writeFileSync(path.join(dir, 'CONTRIBUTING.md'), 'be kind\n'), { merge: true });
  // 15: a head only (it does not merge with main on GitHub's side), in a file of the series.
  pullRequest(15, (dir) => edit(dir, DOCS, 'Custom Extensions in MLX', 'Custom Extensions in MLX!'), { merge: false });
  // 16: the source lists a merge ref it cannot give.
  brokenRef('refs/pull/16/merge');
});

const run = (args: string[], env: Record<string, string> = {}) =>
  runCli(['check', '--open-prs', '--mlx-repo', upstream.dir, ...args], { cwd: project, env });

describe("check --open-prs from the source's refs/pull/*/merge", () => {
  it('lists the merge refs that share a file, checks each merged (clean, three-way, conflict), and one it cannot fetch is "could not check"; exit 4', async () => {
    const result = await run(['--open-prs-from', 'source', '--json']);
    expect(result.code, result.stderr).toBe(4);
    const { openPrs } = result.json;
    expect(openPrs.listing).toEqual({
      kind: 'source-refs',
      source: upstream.dir,
      why: 'asked for (--open-prs-from source)',
    });
    // 11 to 14 and the broken 16; 15 has no merge ref.
    expect([openPrs.listed, openPrs.considered, openPrs.limit]).toEqual([5, 5, 30]);
    const checks = openPrs.pullRequests as Check[];
    expect(summary(checks)).toEqual([
      [16, 'could-not-check', [], null, null],
      [13, 'conflict', [DOCS], 'merge-ref', 'refs/pull/13/merge'],
      [12, 'three-way', [CMAKE], 'merge-ref', 'refs/pull/12/merge'],
      [11, 'clean', [DOCS], 'merge-ref', 'refs/pull/11/merge'],
    ]);
    expect(checks[0]!.reason).toMatch(/^could not fetch 123456789012 from .*: fatal: .*not our ref/);
    const docs = checks[1]!.report!.patches.find((p) => p.name === '0002-docs.patch')!;
    expect(docs.status).toBe('conflict');
    expect(docs.reasons.map((r) => `${r.file}: ${r.reason}`)).toEqual([`${DOCS}: upstream_changed`]);
    expect(checks.every((c) => c.title === null && c.author === null)).toBe(true);
  });

  it('--limit looks at the highest numbers only; the report for people and in Markdown names each result', async () => {
    const lines = await run(['--open-prs-from', 'source', '--limit', '4']);
    expect(lines.code, lines.stderr).toBe(4);
    expect(lines.stdout).toContain(
      "the source's refs/pull/*/merge (" +
        upstream.dir +
        '; asked for (--open-prs-from source)): 5 merge ref(s), the 4 most recent looked at (--limit 4); open state unknown',
    );
    expect(lines.stdout).toMatch(/^#13: conflict$/m);
    expect(lines.stdout).toMatch(/^#12: three-way$/m);
    expect(lines.stdout).not.toMatch(/^#11/m);
    expect(lines.stdout).toContain('Could not check #16: not a clean result.');

    const markdown = await run(['--open-prs-from', 'source', '--limit', '4', '--markdown']);
    expect(markdown.code).toBe(4);
    const rows = markdown.stdout.split('\n').filter((l) => l.startsWith('| #'));
    expect(rows.map((r) => r.split(' | ').at(-2))).toEqual(['could-not-check', 'conflict', 'three-way']);
    expect(rows[1]).toContain('`0002-docs.patch`: `docs/src/dev/extensions.rst` hunk 1');
  });

  it('exit 0 when every pull request looked at applies (clean or three-way); 5 when one could not be checked', async () => {
    // Without the conflict: drop 13 and 16 from the source for this case.
    const saved = ['13', '16'].map((n) => ({ n, id: git(upstream.dir, 'rev-parse', `refs/pull/${n}/merge`).trim() }));
    git(upstream.dir, 'update-ref', '-d', 'refs/pull/13/merge');
    git(upstream.dir, 'update-ref', '-d', 'refs/pull/16/merge');
    try {
      const ok = await run(['--open-prs-from', 'source', '--json']);
      expect(ok.code, ok.stderr).toBe(0);
      expect(summary(ok.json.openPrs.pullRequests).map((r) => r.slice(0, 2))).toEqual([
        [12, 'three-way'],
        [11, 'clean'],
      ]);
      brokenRef('refs/pull/16/merge');
      const unknown = await run(['--open-prs-from', 'source', '--json']);
      expect(unknown.code).toBe(5);
      expect(unknown.json.ok).toBe(false);
    } finally {
      git(upstream.dir, 'update-ref', 'refs/pull/13/merge', saved[0]!.id);
      brokenRef('refs/pull/16/merge');
    }
  });

  it('a merge ref older than the pin (GitHub stopped refreshing it): its head merged with the pin is checked instead', async () => {
    const old = olderRoot();
    const head = heads[11] as string;
    const merge = git(upstream.dir, 'commit-tree', `${head}^{tree}`, '-p', old, '-p', head, '-m', 'stale merge').trim();
    git(upstream.dir, 'update-ref', 'refs/pull/18/merge', merge);
    try {
      const result = await run(['--open-prs-from', 'source', '--limit', '1', '--json']);
      expect(result.code, result.stderr).toBe(0);
      const [stale] = result.json.openPrs.pullRequests as Check[];
      expect(summary([stale!])).toEqual([[18, 'clean', [DOCS], 'head-merged-with-pin', 'refs/pull/18/head']]);
      expect(result.stderr).toContain(
        'refs/pull/18/merge predates the pinned commit: checking refs/pull/18/head merged with it instead',
      );
    } finally {
      git(upstream.dir, 'update-ref', '-d', 'refs/pull/18/merge');
    }
  });

  it('--budget 0 lists the pull requests that share a file and checks none: each is "could not check" (5)', async () => {
    const result = await run(['--open-prs-from', 'source', '--budget', '0', '--json']);
    expect(result.code, result.stderr).toBe(5);
    const checks = result.json.openPrs.pullRequests as Check[];
    expect(checks.map((c) => [c.number, c.status, c.checked])).toEqual([
      [16, 'could-not-check', null],
      [13, 'could-not-check', null],
      [12, 'could-not-check', null],
      [11, 'could-not-check', null],
    ]);
    expect(checks[1]!.reason).toBe('the time budget (--budget, 0 min) ran out before it');
    expect(checks[1]!.files).toEqual([DOCS]);
  });

  it('usage: --limit 0, --open-prs with --against, --limit without --open-prs', async () => {
    const zero = await run(['--limit', '0', '--json']);
    expect([zero.code, zero.json.error.code]).toEqual([2, 'USAGE']);
    const both = await run(['--against', 'main', '--json']);
    expect([both.code, both.json.error.message]).toEqual([2, '--open-prs does not go with --against.']);
    const alone = await runCli(['check', '--mlx-repo', upstream.dir, '--against', 'main', '--limit', '3', '--json'], {
      cwd: project,
    });
    expect([alone.code, alone.json.error.message]).toEqual([2, '--limit: only with --open-prs.']);
  });
});

describe("check --open-prs from GitHub's API (the local stand-in)", () => {
  let api: GitHubStandIn;
  const pull = (number: number, files: string[], author = 'bob') =>
    api.pulls.push({
      number,
      title: `Pull request ${number}`,
      body: '',
      draft: false,
      head: `${author}:pr-${number}`,
      base: 'main',
      state: 'open',
      author,
      ...(heads[number] ? { sha: heads[number] } : {}),
      files,
    });
  const viaApi = (...args: string[]) =>
    run(['--open-prs-from', 'auto', '--api-url', api.url, '--json', ...args], { GH_TOKEN: TOKEN });

  beforeAll(async () => {
    api = await startGitHubStandIn({ token: TOKEN, repository: 'ml-explore/mlx', defaultBranch: 'main' });
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.pulls.length = 0;
    api.requests.length = 0;
    api.failures.length = 0;
    api.pageSize = 1;
    // Open now: 11, 12, 14 (no file of the series), 15 (a head only) and 17 (not in the source); closed: 13.
    pull(11, [DOCS, 'README.md']);
    pull(12, [CMAKE]);
    pull(14, ['CONTRIBUTING.md']);
    pull(15, [DOCS], 'carol');
    pull(17, ['tests/CMakeLists.txt', DOCS]);
    pull(13, [DOCS]);
    api.pulls.at(-1)!.state = 'closed';
  });

  it('lists the open pull requests and their files over several pages, fetches only those that share a file, merges a head with the pin, and one the source lacks is "could not check" (5)', async () => {
    const result = await viaApi();
    expect(result.code, result.stderr).toBe(5);
    const { openPrs } = result.json;
    expect(openPrs.listing).toEqual({
      kind: 'github',
      apiUrl: api.url,
      repository: 'ml-explore/mlx',
    });
    expect([openPrs.listed, openPrs.considered]).toEqual([5, 5]);
    const checks = openPrs.pullRequests as Check[];
    expect(summary(checks)).toEqual([
      [17, 'could-not-check', [DOCS], null, null],
      [15, 'clean', [DOCS], 'head-merged-with-pin', 'refs/pull/15/head'],
      [12, 'three-way', [CMAKE], 'merge-ref', 'refs/pull/12/merge'],
      [11, 'clean', [DOCS], 'merge-ref', 'refs/pull/11/merge'],
    ]);
    expect(checks.map((c) => [c.title, c.author])).toEqual([
      ['Pull request 17', 'bob'],
      ['Pull request 15', 'carol'],
      ['Pull request 12', 'bob'],
      ['Pull request 11', 'bob'],
    ]);
    expect(checks[0]!.reason).toBe(`the source ${upstream.dir} has neither refs/pull/17/merge nor refs/pull/17/head`);
    // One item a page: the 5 open pull requests in 5 pages; the files of 11 and 17 in 2 pages each, of the others in 1.
    const gets = api.requests
      .map((r) => new URL(r.url, api.url))
      .map((u) => `${u.pathname}?page=${u.searchParams.get('page') ?? 1}`);
    expect(gets.filter((g) => g.startsWith('/repos/ml-explore/mlx/pulls?'))).toHaveLength(5);
    expect(gets.filter((g) => g.includes('/files'))).toHaveLength(7);
    expect(api.requests.every((r) => r.authorization === `token ${TOKEN}`)).toBe(true);
    expect(result.stderr).toContain('GitHub token: from GH_TOKEN');
    expect(result.stderr).not.toContain(TOKEN);
  });

  it('a 502 is tried again and the listing goes on; a 5xx that lasts falls back to the source and says why', async () => {
    api.failures.push(502);
    const once = await viaApi('--limit', '2');
    expect(once.stderr).toMatch(/HTTP 502; trying again in 1 s \(retry 1 of 3\)/);
    expect(once.json.openPrs.listing.kind).toBe('github');
    expect(once.json.openPrs.considered).toBe(2);
    expect(summary(once.json.openPrs.pullRequests).map((r) => r.slice(0, 2))).toEqual([
      [17, 'could-not-check'],
      [15, 'clean'],
    ]);

    api.failures.push(503, 503, 503, 503);
    const lasting = await viaApi();
    expect(lasting.json.openPrs.listing).toEqual({
      kind: 'source-refs',
      source: upstream.dir,
      why: expect.stringMatching(
        /^GitHub's API could not be read: GET \/repos\/ml-explore\/mlx\/pulls\?state=open failed \(HTTP 503\)/,
      ),
    });
    expect(lasting.code).toBe(4);
    expect(summary(lasting.json.openPrs.pullRequests).map((r) => r[0])).toEqual([16, 13, 12, 11]);
  });

  it('--open-prs-from github: an API that does not answer is GITHUB_API_FAILED (1), not a fallback', async () => {
    api.failures.push(503, 503, 503, 503);
    const result = await run(['--open-prs-from', 'github', '--api-url', api.url, '--json'], { GH_TOKEN: TOKEN });
    expect([result.code, result.json.error.code]).toEqual([1, 'GITHUB_API_FAILED']);
  });

  it('a head with no history in common with the pin cannot be merged with it: "could not check" (5)', async () => {
    git(upstream.dir, 'update-ref', 'refs/pull/19/head', olderRoot());
    api.pulls.length = 0;
    pull(19, [DOCS]);
    try {
      const result = await viaApi();
      expect(result.code, result.stderr).toBe(5);
      const [unrelated] = result.json.openPrs.pullRequests as Check[];
      expect(unrelated!.status).toBe('could-not-check');
      expect(unrelated!.reason).toMatch(
        /^could not merge refs\/pull\/19\/head \([0-9a-f]{12}\) with the pinned commit: .*unrelated histories/,
      );
    } finally {
      git(upstream.dir, 'update-ref', '-d', 'refs/pull/19/head');
    }
  });

  it('an API URL that cannot be reached: the source, and the report says why', async () => {
    const closed = await startGitHubStandIn({ token: TOKEN, repository: 'ml-explore/mlx', defaultBranch: 'main' });
    await closed.close();
    const result = await run(['--api-url', closed.url, '--json'], { GH_TOKEN: TOKEN });
    expect(result.json.openPrs.listing.kind).toBe('source-refs');
    expect(result.json.openPrs.listing.why).toMatch(/cannot be reached \(ECONNREFUSED\)$/);
  });
});

describe('check --open-prs in a workdir of its own', () => {
  it('keeps its repository in <workdir>/check, as check --against does', async () => {
    const workdir = tempDir('msp-openprs-work-');
    const result = await run(['--open-prs-from', 'source', '--workdir', workdir, '--limit', '1', '--json']);
    expect(result.code, result.stderr).toBe(5);
    expect(git(path.join(workdir, 'check', 'mlx.git'), 'rev-parse', '--is-bare-repository').trim()).toBe('true');
  });
});
