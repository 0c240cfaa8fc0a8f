/**
 * `pr --push --open`: the pull request through the GitHub REST API, with the
 * real Octokit client pointed at a stand-in server on a local port (the one
 * part of the outside world these tests cannot use for real). The fork is a
 * local bare repository, so `--fork-owner` says whose fork it is.
 */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { DESCRIPTION, makeWorld, MESSAGE, ONLY_PR_TEXT, writePrText, type World } from '../support/fork.js';
import { fakeGh, withGh } from '../support/gh.js';
import { startGitHubStandIn, type GitHubStandIn } from '../support/github-api.js';
import { FIXTURES, runCli, type CliResult } from '../support/repos.js';

const TOKEN = 'ghp_openTOKEN0987654321zyxwSECRET';
const HEAD = 'alice:mlx-storage-pr';
const SUBJECT = 'Add a read-only Metal storage view';

/** The requests as `METHOD path`, in order. */
const calls = (api: GitHubStandIn, from = 0) => api.requests.slice(from).map((r) => `${r.method} ${r.url}`);
const LOOKUPS = [
  'GET /repos/ml-explore/mlx',
  `GET /repos/ml-explore/mlx/pulls?head=${encodeURIComponent(HEAD)}&state=open`,
];

function expectNoToken(result: CliResult): void {
  expect(result.stdout).not.toContain(TOKEN);
  expect(result.stderr).not.toContain(TOKEN);
}

describe('pr --push --open against a GitHub API stand-in', () => {
  let api: GitHubStandIn;
  let w: World;
  const open = async (...args: string[]) => {
    const result = await runCli(
      ['pr', '--push', '--fork', w.fork, '--open', '--fork-owner', 'alice', '--api-url', api.url, '--json', ...args],
      { cwd: w.project, env: w.env },
    );
    expectNoToken(result);
    return result;
  };

  beforeAll(async () => {
    api = await startGitHubStandIn({ token: TOKEN, repository: 'ml-explore/mlx', defaultBranch: 'main' });
    w = await makeWorld({ GH_TOKEN: TOKEN });
  });
  afterAll(() => api.close());

  it('creates a draft pull request from <owner>:<branch> into the default branch: title the commit subject, body the description verbatim', async () => {
    const result = await open(...ONLY_PR_TEXT);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json.status).toBe('created');
    expect(result.json.pullRequest).toEqual({
      status: 'created',
      number: 1,
      url: 'https://github.example/ml-explore/mlx/pull/1',
      draft: true,
      head: HEAD,
      repository: 'ml-explore/mlx',
      base: 'main',
      changed: [],
    });
    expect(calls(api)).toEqual([
      ...LOOKUPS,
      `GET /search/issues?q=${encodeURIComponent('repo:ml-explore/mlx is:pr is:open author:alice')}&per_page=100`,
      'POST /repos/ml-explore/mlx/pulls',
    ]);
    expect(api.requests.at(-1)?.body).toEqual({
      title: SUBJECT,
      body: DESCRIPTION,
      head: HEAD,
      base: 'main',
      draft: true,
    });
    expect(new Set(api.requests.map((r) => r.authorization))).toEqual(new Set([`token ${TOKEN}`]));
    const human = await runCli(
      ['pr', '--push', '--fork', w.fork, '--open', '--fork-owner', 'alice', '--api-url', api.url, '--skip-checks'],
      { cwd: w.project, env: w.env },
    );
    expect(human.stdout).toContain('pull request unchanged: https://github.example/ml-explore/mlx/pull/1');
  });

  it('again with nothing changed: asks, changes nothing (no POST, no PATCH)', async () => {
    const from = api.requests.length;
    const result = await open('--skip-checks');
    expect(result.json).toMatchObject({ status: 'unchanged', pullRequest: { status: 'unchanged', number: 1 } });
    expect(calls(api, from)).toEqual(LOOKUPS);
  });

  it('after verify passes with the same inputs: reuses its result instead of running the checks, says so, and asks as before', async () => {
    const verified = await runCli(['verify', '--json', ...ONLY_PR_TEXT], { cwd: w.project, env: w.env });
    expect(verified.code, verified.stderr).toBe(0);
    const from = api.requests.length;
    const result = await open(...ONLY_PR_TEXT);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toMatchObject({
      status: 'unchanged',
      checksReused: { command: 'verify' },
      checks: verified.json.checks,
      pullRequest: { status: 'unchanged', number: 1 },
    });
    expect(calls(api, from)).toEqual(LOOKUPS);
  });

  it('a new description: updates only the body', async () => {
    const edited = DESCRIPTION.replace('evaluated array.', 'evaluated array, for external Metal code.');
    writePrText(w.project, MESSAGE, edited);
    const from = api.requests.length;
    const result = await open('--skip-checks');
    expect(result.json.status).toBe('unchanged');
    expect(result.json.pullRequest).toMatchObject({ status: 'updated', changed: ['body'], number: 1 });
    expect(calls(api, from)).toEqual([...LOOKUPS, 'PATCH /repos/ml-explore/mlx/pulls/1']);
    expect(api.requests.at(-1)?.body).toEqual({ body: edited });
    expect(api.pulls[0]?.body).toBe(edited);
  });

  it('a new commit subject: the branch is updated and the title with it; the draft flag is left as it is', async () => {
    writePrText(
      w.project,
      MESSAGE.replace(SUBJECT, 'Add MetalStorageView'),
      readFileSync(path.join(w.project, 'pr', 'description.md'), 'utf8'),
    );
    const from = api.requests.length;
    const result = await open('--skip-checks', '--no-draft');
    expect(result.json.status).toBe('updated');
    expect(result.json.pullRequest).toMatchObject({ status: 'updated', changed: ['title'], draft: true });
    expect(api.requests.at(-1)?.body).toEqual({ title: 'Add MetalStorageView' });
    expect(calls(api, from)).toEqual([...LOOKUPS, 'PATCH /repos/ml-explore/mlx/pulls/1']);
  });

  it('--dry-run: only the lookups, and what it would do', async () => {
    writePrText(w.project, MESSAGE, DESCRIPTION);
    const from = api.requests.length;
    const result = await open('--skip-checks', '--dry-run');
    expect(result.json.status).toBe('would-update');
    expect(result.json.pullRequest).toMatchObject({ status: 'would-update', changed: ['title', 'body'] });
    expect(calls(api, from)).toEqual(LOOKUPS);
  });

  it('--no-draft on a new branch (--allow-second-pr: alice has #1 open): the pull request is created ready for review; GITHUB_API_URL names the API', async () => {
    const from = api.requests.length;
    const result = await runCli(
      [
        'pr',
        '--push',
        '--fork',
        w.fork,
        '--branch',
        'ready',
        '--open',
        '--fork-owner',
        'alice',
        '--no-draft',
        '--allow-second-pr',
        '--skip-checks',
        '--json',
      ],
      { cwd: w.project, env: { ...w.env, GITHUB_API_URL: api.url } },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.json.pullRequest).toMatchObject({ status: 'created', number: 2, draft: false, head: 'alice:ready' });
    expect(api.requests.at(-1)?.body).toMatchObject({ head: 'alice:ready', draft: false });
    expect(calls(api, from).at(-1)).toBe('POST /repos/ml-explore/mlx/pulls');
  });
});

describe('pr --open: refused before any request, and nothing pushed', () => {
  let api: GitHubStandIn;
  let w: World;
  let before: Record<string, string>;
  const open = (env: Record<string, string> = {}, ...args: string[]) =>
    runCli(
      [
        'pr',
        '--push',
        '--fork',
        w.fork,
        '--open',
        '--fork-owner',
        'alice',
        '--api-url',
        api.url,
        '--json',
        '--skip-checks',
        ...args,
      ],
      { cwd: w.project, env: { ...w.env, ...env } },
    );

  beforeAll(async () => {
    api = await startGitHubStandIn({ token: TOKEN, repository: 'ml-explore/mlx', defaultBranch: 'main' });
    w = await makeWorld({ GH_TOKEN: TOKEN });
    before = w.forkRefs();
  });
  afterAll(() => api.close());

  it('without an AI use disclosure in pr/description.md (1, PR_TEXT_INCOMPLETE)', async () => {
    writePrText(w.project, MESSAGE, '## Proposed changes\n\nA read-only view of the Metal buffer.\n');
    const result = await open();
    expect(result.code).toBe(1);
    expect(result.json.error.code).toBe('PR_TEXT_INCOMPLETE');
    expect(result.json.error.message).toContain('AI use disclosure');
    expect(api.requests).toEqual([]);
    expect(w.forkRefs()).toEqual(before);
  });

  it('with the description as shipped, placeholders and all (1), naming the lines', async () => {
    copyFileSync(path.join(FIXTURES, 'pr', 'description.md'), path.join(w.project, 'pr', 'description.md'));
    const result = await open();
    expect(result.code).toBe(1);
    expect(result.json.error.code).toBe('PR_TEXT_INCOMPLETE');
    expect(result.json.error.message).toContain('pr/description.md:3');
    expect(api.requests).toEqual([]);
    expect(w.forkRefs()).toEqual(before);
    writePrText(w.project);
  });

  it('without a token (2, TOKEN_MISSING); the hint says which tokens work', async () => {
    // A gh that is not logged in: no token from `gh auth token` either, whatever this machine's gh.
    const result = await open({ GH_TOKEN: '', GITHUB_TOKEN: '', ...withGh(fakeGh(null).bin) });
    expect(result.code).toBe(2);
    expect(result.json.error.code).toBe('TOKEN_MISSING');
    expect(result.json.error.hint).toContain('public_repo');
    expect(api.requests).toEqual([]);
    expect(w.forkRefs()).toEqual(before);
  });

  it('a fork whose URL does not name its owner, without --fork-owner (2)', async () => {
    const result = await runCli(
      ['pr', '--push', '--fork', w.fork, '--open', '--api-url', api.url, '--json', '--skip-checks'],
      {
        cwd: w.project,
        env: w.env,
      },
    );
    expect(result.code).toBe(2);
    expect(result.json.error.hint).toContain('--fork-owner');
    expect(api.requests).toEqual([]);
  });

  it('--open without --push is a usage error (2)', async () => {
    const result = await runCli(['pr', '--open', '--fork', w.fork, '--json'], { cwd: w.project, env: w.env });
    expect(result.code).toBe(2);
    expect(api.requests).toEqual([]);
  });

  it('a token that may not create pull requests upstream: the branch is pushed, the API error says which tokens work (1)', async () => {
    writeFileSync(path.join(w.project, 'pr', 'description.md'), DESCRIPTION);
    api.refuseCreate = 403;
    const result = await open();
    expect(result.code).toBe(1);
    expect(result.json.error.code).toBe('GITHUB_API_FAILED');
    expect(result.json.error.message).toContain('HTTP 403');
    expect(result.json.error.message).toContain('Resource not accessible by personal access token');
    expect(result.json.error.hint).toContain('fine-grained token scoped to your fork cannot');
    expect(result.json.error.hint).toContain('open the pull request once by hand');
    expectNoToken(result);
    expect(w.forkRefs()['refs/heads/mlx-storage-pr']).toBeDefined();
  });
});
