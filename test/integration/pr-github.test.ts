/**
 * GitHub the way `gh` users expect it, against the GitHub API stand-in with
 * the real Octokit client: where the token comes from (`--token-env`,
 * GH_TOKEN, GITHUB_TOKEN, then `gh auth token`, with a small `gh` script on
 * PATH standing in for gh), retries of a 5xx or a dropped connection, MLX's
 * one-open-pull-request rule, and the compare URL after a push.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { makeWorld, ONLY_PR_TEXT, type World } from '../support/fork.js';
import { startGitHubStandIn, type GitHubStandIn } from '../support/github-api.js';
import { fakeGh, withGh } from '../support/gh.js';
import { runCli, type CliResult } from '../support/repos.js';

const TOKEN = 'ghp_ghTOKEN5555555555abcdefSECRET';
const HEAD = 'alice:mlx-storage-pr';

function expectNoToken(result: CliResult): void {
  expect(result.stdout).not.toContain(TOKEN);
  expect(result.stderr).not.toContain(TOKEN);
}

describe('pr --open: where the token comes from', () => {
  let api: GitHubStandIn;
  let w: World;
  const open = async (env: Record<string, string>, ...args: string[]) => {
    const result = await runCli(
      ['pr', '--push', '--fork', w.fork, '--open', '--fork-owner', 'alice', '--api-url', api.url, '--json', ...args],
      { cwd: w.project, env: { ...w.env, GH_TOKEN: '', GITHUB_TOKEN: '', ...env } },
    );
    expectNoToken(result);
    return result;
  };

  beforeAll(async () => {
    api = await startGitHubStandIn({ token: TOKEN, repository: 'ml-explore/mlx', defaultBranch: 'main' });
    w = await makeWorld();
  });
  afterAll(() => api.close());
  beforeEach(() => {
    api.pulls.length = 0;
    api.requests.length = 0;
  });

  it('no GH_TOKEN or GITHUB_TOKEN: the token `gh auth token` prints for the API host, and stderr names gh as the source', async () => {
    const gh = fakeGh(TOKEN);
    const result = await open(withGh(gh.bin), ...ONLY_PR_TEXT);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json.pullRequest).toMatchObject({ status: 'created', head: HEAD });
    expect(gh.calls()).toEqual(['auth token --hostname 127.0.0.1']);
    expect(result.stderr).toContain('GitHub token: from `gh auth token`');
    expect(new Set(api.requests.map((r) => r.authorization))).toEqual(new Set([`token ${TOKEN}`]));
  });

  it('GH_TOKEN comes before gh, which is then not run', async () => {
    const gh = fakeGh('gho_other');
    const result = await open({ ...withGh(gh.bin), GH_TOKEN: TOKEN }, '--skip-checks');
    expect(result.code, result.stderr).toBe(0);
    expect(gh.calls()).toEqual([]);
    expect(result.stderr).toContain('GitHub token: from GH_TOKEN');
  });

  it('--token-env NAME reads that variable only, and says so', async () => {
    const gh = fakeGh('gho_other');
    const result = await open(
      { ...withGh(gh.bin), MY_PR_TOKEN: TOKEN, GH_TOKEN: 'ghp_wrong' },
      '--skip-checks',
      '--token-env',
      'MY_PR_TOKEN',
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('GitHub token: from MY_PR_TOKEN (--token-env)');
    expect(gh.calls()).toEqual([]);
  });

  it('--token-env naming an unset variable: TOKEN_MISSING (2) naming it, nothing sent', async () => {
    const result = await open({}, '--skip-checks', '--token-env', 'NOT_SET_ANYWHERE');
    expect(result.code).toBe(2);
    expect(result.json.error.code).toBe('TOKEN_MISSING');
    expect(result.json.error.message).toContain('NOT_SET_ANYWHERE');
    expect(api.requests).toEqual([]);
  });

  it('gh on PATH but not logged in, and no variable: TOKEN_MISSING (2), the hint names gh auth login', async () => {
    const gh = fakeGh(null);
    const result = await open(withGh(gh.bin), '--skip-checks');
    expect(result.code).toBe(2);
    expect(result.json.error.code).toBe('TOKEN_MISSING');
    expect(result.json.error.hint).toContain('gh auth login');
    expect(gh.calls()).toHaveLength(1);
    expect(api.requests).toEqual([]);
  });
});

describe('pr --open: retries, one open pull request, the compare URL', () => {
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
  beforeEach(() => {
    api.pulls.length = 0;
    api.requests.length = 0;
    api.failures.length = 0;
  });

  it('a 502, then a dropped connection, then answers: each retry logged, the pull request created once', async () => {
    api.failures.push(502, 'drop');
    const result = await open(...ONLY_PR_TEXT);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json.pullRequest).toMatchObject({ status: 'created', number: 1 });
    const retries = result.stderr.split('\n').filter((l) => l.includes('trying again'));
    expect(retries).toHaveLength(2);
    expect(retries[0]).toMatch(/GET .*HTTP 502; trying again in 1 s \(retry 1 of 3\)/);
    expect(retries[1]).toMatch(/no answer.*trying again in 2 s \(retry 2 of 3\)/);
    expect(api.pulls).toHaveLength(1);
  });

  it('a POST answered 502 after GitHub created the pull request: found, not created twice', async () => {
    api.failures.push('create-then-502');
    const result = await open('--skip-checks', '--branch', 'second-try');
    expect(result.code, result.stderr).toBe(0);
    expect(result.json.pullRequest).toMatchObject({ status: 'created', number: 1, head: 'alice:second-try' });
    expect(api.pulls).toHaveLength(1);
    expect(result.stderr).toContain('looking for the pull request');
  });

  it('a 5xx that lasts: GITHUB_API_FAILED (1) after 3 retries, each logged', async () => {
    api.failures.push(503, 503, 503, 503);
    const result = await open('--skip-checks');
    expect(result.code).toBe(1);
    expect(result.json.error.code).toBe('GITHUB_API_FAILED');
    expect(result.stderr.split('\n').filter((l) => l.includes('trying again'))).toHaveLength(3);
  }, 30_000);

  it('another open pull request of the same user upstream: OTHER_PULL_REQUEST_OPEN (1) naming it, none created; --allow-second-pr goes ahead', async () => {
    api.pulls.push({
      number: 41,
      title: 'Fix a typo',
      body: '',
      draft: false,
      head: 'alice:typo',
      base: 'main',
      state: 'open',
    });
    const refused = await open('--skip-checks');
    expect(refused.code).toBe(1);
    expect(refused.json.error.code).toBe('OTHER_PULL_REQUEST_OPEN');
    expect(refused.json.error.message).toContain('#41 Fix a typo: https://github.example/ml-explore/mlx/pull/41');
    expect(refused.json.error.hint).toContain('--allow-second-pr');
    expect(api.requests.filter((r) => r.method === 'POST')).toEqual([]);

    const allowed = await open('--skip-checks', '--allow-second-pr');
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.json.pullRequest).toMatchObject({ status: 'created', head: HEAD });
  });

  it("someone else's open pull request does not count, nor does this branch's own", async () => {
    api.pulls.push({ number: 7, title: 'x', body: '', draft: false, head: 'bob:x', base: 'main', state: 'open' });
    const first = await open('--skip-checks');
    expect(first.code, first.stderr).toBe(0);
    const again = await open('--skip-checks');
    expect(again.code, again.stderr).toBe(0);
    expect(again.json.pullRequest.status).toBe('unchanged');
  });

  it('after a push without --open: the compare URL that opens the pull request, no token needed', async () => {
    const result = await runCli(['pr', '--push', '--fork', w.fork, '--fork-owner', 'alice', '--skip-checks'], {
      cwd: w.project,
      env: w.env,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      'open the pull request on GitHub (no token needed): https://github.com/ml-explore/mlx/compare/alice:mlx-storage-pr?expand=1',
    );
    const json = await runCli(['pr', '--push', '--fork', w.fork, '--fork-owner', 'alice', '--skip-checks', '--json'], {
      cwd: w.project,
      env: w.env,
    });
    expect(json.json.compareUrl).toBe('https://github.com/ml-explore/mlx/compare/alice:mlx-storage-pr?expand=1');
  });
});
