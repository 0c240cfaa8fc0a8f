/**
 * `pr --ci` (issue 27): the check runs and commit statuses of the commit the
 * tool pushed last, read with the real Octokit client from a GitHub API
 * stand-in on a local port (test/support/github-ci.ts). The fork is a local
 * bare repository; `--fork-owner alice` names its owner, so its repository
 * on GitHub is alice/mlx.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { makeWorld, pushByHand, type World } from '../support/fork.js';
import { fakeGh, withGh } from '../support/gh.js';
import { startGitHubCiStandIn, type GitHubCiStandIn } from '../support/github-ci.js';
import { runCli, type CliResult } from '../support/repos.js';

const TOKEN = 'ghp_ciTOKEN1234567890abcdefSECRET';
const UP = 'ml-explore/mlx';
const FORK = 'alice/mlx';
const BRANCH = 'mlx-storage-pr';
const LEASE = `refs/mlx-storage-pr/pushed/${BRANCH}`;

function expectNoToken(result: CliResult): void {
  expect(result.stdout).not.toContain(TOKEN);
  expect(result.stderr).not.toContain(TOKEN);
}

/** The request paths (without the query) the stand-in received since `from`. */
const paths = (api: GitHubCiStandIn, from = 0) => api.requests.slice(from).map((r) => r.url.replace(/\?.*$/, ''));

describe('pr --ci against a GitHub API stand-in', () => {
  let api: GitHubCiStandIn;
  let w: World;
  let sha: string;
  const ci = async (args: string[] = [], env: Record<string, string> = {}) => {
    const result = await runCli(
      ['pr', '--ci', '--fork', w.fork, '--fork-owner', 'alice', '--api-url', api.url, '--json', ...args],
      { cwd: w.project, env: { ...w.env, GH_TOKEN: TOKEN, ...env }, seams: { ciPollMs: 50 } },
    );
    expectNoToken(result);
    return result;
  };
  const human = async (args: string[] = [], env: Record<string, string> = {}) => {
    const result = await runCli(
      ['pr', '--ci', '--fork', w.fork, '--fork-owner', 'alice', '--api-url', api.url, ...args],
      { cwd: w.project, env: { ...w.env, GH_TOKEN: TOKEN, ...env }, seams: { ciPollMs: 50 } },
    );
    expectNoToken(result);
    return result;
  };
  const openPull = () => api.pulls.push({ number: 5, head: `alice:${BRANCH}`, sha, state: 'open' });

  beforeAll(async () => {
    api = await startGitHubCiStandIn({ token: TOKEN, repositories: [UP, FORK] });
    w = await makeWorld();
    const pushed = await w.pr('--skip-checks');
    expect(pushed.code, pushed.stderr).toBe(0);
    sha = w.forkRefs()[LEASE] as string;
  });
  afterAll(() => api.close());
  beforeEach(() => {
    for (const repo of [UP, FORK]) api.repos[repo] = { checkRuns: {}, statuses: {}, workflowRuns: [], actions: true };
    api.pulls.length = 0;
    api.requests.length = 0;
    api.scripted.length = 0;
    api.pageSize = 100;
    api.onRequest = null;
  });

  it('reads both places for the pushed commit: one line per job (where, name, conclusion, link), then a summary; all passed or skipped: 0', async () => {
    openPull();
    api.repos[UP]!.checkRuns[sha] = [
      { name: 'check_lint', status: 'completed', conclusion: 'success' },
      { name: 'linux_build_and_test (ubuntu-22.04)', status: 'completed', conclusion: 'success' },
      { name: 'mac_build (metal)', status: 'completed', conclusion: 'success' },
    ];
    api.repos[UP]!.statuses[sha] = [{ context: 'ci/circleci: build', state: 'success' }];
    api.repos[FORK]!.checkRuns[sha] = [
      { name: 'check_lint', status: 'completed', conclusion: 'success' },
      { name: 'mac_build', status: 'completed', conclusion: 'skipped' },
    ];
    const result = await ci();
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toMatchObject({
      ok: true,
      command: 'pr',
      mode: 'ci',
      commit: sha,
      branch: BRANCH,
      branchTip: sha,
      branchMoved: false,
      pullRequest: { number: 5, url: `https://github.example/${UP}/pull/5`, headSha: sha },
      summary: { total: 6, passed: 5, skipped: 1, failed: 0, running: 0 },
      result: 'passed',
    });
    expect(result.json.jobs).toContainEqual({
      where: 'pull-request',
      repository: UP,
      kind: 'check-run',
      name: 'mac_build (metal)',
      status: 'completed',
      conclusion: 'success',
      outcome: 'passed',
      url: `https://github.example/${UP}/runs/1002`,
    });
    expect(result.json.jobs).toContainEqual({
      where: 'pull-request',
      repository: UP,
      kind: 'status',
      name: 'ci/circleci: build',
      status: 'completed',
      conclusion: 'success',
      outcome: 'passed',
      url: `https://ci.example/${UP}/ci/circleci: build`,
    });
    expect(result.json.jobs.filter((j: { where: string }) => j.where === 'fork')).toHaveLength(2);
    for (const where of [UP, FORK])
      for (const what of ['check-runs', 'status'])
        expect(paths(api)).toContain(`/repos/${where}/commits/${sha}/${what}`);
    const text = await human();
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(`pull request\\s+mac_build \\(metal\\)\\s+success\\s+https://github.example/${UP}/runs/1002`),
    );
    expect(text.stdout).toMatch(/fork\s+mac_build\s+skipped\s+https:\/\/github.example\/alice\/mlx\/runs\/1001/);
    expect(text.stdout).toContain('6 jobs: 5 passed, 1 skipped');
  });

  it('follows the Link header through every page of check runs and statuses', async () => {
    openPull();
    api.pageSize = 2;
    api.repos[UP]!.checkRuns[sha] = ['a', 'b', 'c', 'd', 'e'].map((n) => ({
      name: `job_${n}`,
      status: 'completed' as const,
      conclusion: 'success' as const,
    }));
    api.repos[FORK]!.statuses[sha] = ['x', 'y', 'z'].map((c) => ({ context: `ctx_${c}`, state: 'success' as const }));
    const result = await ci();
    expect(result.code, result.stderr).toBe(0);
    const names = result.json.jobs.map((j: { name: string }) => j.name);
    expect(names).toEqual(
      expect.arrayContaining(['job_a', 'job_b', 'job_c', 'job_d', 'job_e', 'ctx_x', 'ctx_y', 'ctx_z']),
    );
    expect(names).toHaveLength(8);
    const pages = api.requests.filter((r) => r.url.includes(`/repos/${UP}/commits/${sha}/check-runs`));
    expect(pages.map((r) => new URL(r.url, api.url).searchParams.get('page'))).toEqual([null, '2', '3']);
  });

  for (const conclusion of ['failure', 'timed_out', 'cancelled'] as const)
    it(`a job that ended ${conclusion}: the report with ok false, exit 8`, async () => {
      openPull();
      api.repos[UP]!.checkRuns[sha] = [
        { name: 'check_lint', status: 'completed', conclusion: 'success' },
        { name: 'linux_build_and_test', status: 'completed', conclusion },
      ];
      const result = await ci();
      expect(result.code, result.stderr).toBe(8);
      expect(result.json).toMatchObject({ ok: false, result: 'failed', summary: { failed: 1, passed: 1 } });
    });

  it('a failed commit status (error) is a failure too (8)', async () => {
    api.repos[FORK]!.statuses[sha] = [{ context: 'lint', state: 'error' }];
    const result = await ci();
    expect(result.code, result.stderr).toBe(8);
    expect(result.json.jobs[0]).toMatchObject({ kind: 'status', name: 'lint', outcome: 'failed', conclusion: 'error' });
  });

  it('queued and in_progress runs (conclusion null) and a pending status: ok false, exit 11', async () => {
    openPull();
    api.repos[UP]!.checkRuns[sha] = [
      { name: 'check_lint', status: 'completed', conclusion: 'success' },
      { name: 'linux_build_and_test', status: 'in_progress', conclusion: null },
      { name: 'mac_build', status: 'queued', conclusion: null },
    ];
    api.repos[FORK]!.statuses[sha] = [{ context: 'lint', state: 'pending' }];
    const result = await ci();
    expect(result.code, result.stderr).toBe(11);
    expect(result.json).toMatchObject({ ok: false, result: 'running', summary: { running: 3, passed: 1 } });
    expect(result.json.jobs).toContainEqual(
      expect.objectContaining({ name: 'mac_build', status: 'queued', conclusion: null, outcome: 'running' }),
    );
    const text = await human();
    expect(text.stdout).toMatch(/pull request\s+mac_build\s+queued/);
    expect(text.stdout).toMatch(/pull request\s+linux_build_and_test\s+in_progress/);
  });

  it('--wait polls until nothing runs, one progress line per poll on stderr, then reports (0)', async () => {
    openPull();
    api.repos[UP]!.checkRuns[sha] = [{ name: 'linux_build_and_test', status: 'in_progress', conclusion: null }];
    let polls = 0;
    api.onRequest = (r) => {
      if (!r.url.startsWith(`/repos/${UP}/pulls`)) return;
      polls += 1;
      if (polls === 3)
        api.repos[UP]!.checkRuns[sha] = [{ name: 'linux_build_and_test', status: 'completed', conclusion: 'success' }];
    };
    const result = await ci(['--wait']);
    expect(result.code, result.stderr).toBe(0);
    expect(polls).toBe(3);
    const progress = result.stderr.split('\n').filter((l) => l.startsWith('poll '));
    expect(progress).toHaveLength(3);
    expect(progress[0]).toContain('1 queued or running');
    expect(progress[0]).toContain('waiting up to 60 min');
    expect(result.json).toMatchObject({ result: 'passed', polls: 3, waited: { minutes: 60, timedOut: false } });
  });

  it('--wait <minutes> stops at the bound while jobs still run (11), saying so', async () => {
    api.repos[FORK]!.checkRuns[sha] = [{ name: 'check_lint', status: 'queued', conclusion: null }];
    const started = Date.now();
    const result = await ci(['--wait', '0.01']);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.code, result.stderr).toBe(11);
    expect(result.json).toMatchObject({ result: 'running', waited: { minutes: 0.01, timedOut: true } });
    expect(result.json.polls).toBeGreaterThan(1);
    expect(result.stderr).toContain('stopped waiting after 0.01 min');
  });

  it('no runs, no pull request, a branch outside main and test/*: CI_NOT_FOUND (1) naming both reasons and the test/<name> branch', async () => {
    const result = await ci();
    expect(result.code, result.stderr).toBe(1);
    expect(result.json.ok).toBe(false);
    expect(result.json.error.code).toBe('CI_NOT_FOUND');
    expect(result.json.error.message).toContain(`no pull request is open from alice:${BRANCH}`);
    expect(result.json.error.message).toContain(`the branch ${BRANCH} does not trigger MLX's CI on the fork`);
    expect(result.json.error.hint).toContain('--branch test/');
    expect(result.json.error.hint).toContain('check_lint, linux_sanitizer_build_and_test, linux_fedora_build_cpp');
    expect(result.json.error.details.reasons).toEqual({ pullRequest: 'no-pull-request', fork: 'branch-not-triggered' });
    // Nothing to read upstream without a pull request.
    expect(paths(api).filter((p) => p.startsWith(`/repos/${UP}/commits`))).toEqual([]);
  });

  it('no runs while the pull request waits for a maintainer to approve its workflows: CI_NOT_FOUND with that reason', async () => {
    openPull();
    api.repos[UP]!.workflowRuns = [
      {
        name: 'Build and Test',
        head_sha: sha,
        event: 'pull_request',
        status: 'completed',
        conclusion: 'action_required',
      },
      { name: 'Nightly', head_sha: sha, event: 'pull_request', status: 'waiting', conclusion: null },
    ];
    const result = await ci();
    expect(result.code, result.stderr).toBe(1);
    expect(result.json.error.code).toBe('CI_NOT_FOUND');
    expect(result.json.error.details.reasons.pullRequest).toBe('awaiting-approval');
    expect(result.json.error.message).toContain("wait for a maintainer's approval");
    expect(
      api.requests.some((r) => r.url.includes(`/repos/${UP}/actions/runs?`) && r.url.includes(`head_sha=${sha}`)),
    ).toBe(true);
  });

  it('no runs on a fork with Actions disabled: CI_NOT_FOUND saying how to enable them', async () => {
    api.repos[FORK]!.actions = false;
    const result = await ci();
    expect(result.code, result.stderr).toBe(1);
    expect(result.json.error.details.reasons.fork).toBe('actions-disabled');
    expect(result.json.error.message).toContain('the fork alice/mlx has Actions disabled');
    expect(result.json.error.hint).toContain('Settings');
  });

  it('a test/<name> branch on a fork with Actions enabled and no run yet: CI_NOT_FOUND, reason none yet; GitHub answering 403 on the permissions does not hide it', async () => {
    const pushed = await w.pr('--skip-checks', '--branch', 'test/metal-view');
    expect(pushed.code, pushed.stderr).toBe(0);
    api.repos[FORK]!.actions = 403;
    const result = await ci(['--branch', 'test/metal-view']);
    expect(result.code, result.stderr).toBe(1);
    expect(result.json.error.details.reasons).toEqual({ pullRequest: 'no-pull-request', fork: 'none-yet' });
  });

  it('the fork branch moved since the last push: the checks of the commit the tool pushed, and a line saying the branch holds another', async () => {
    const pushed = await w.pr('--skip-checks', '--branch', 'moved');
    expect(pushed.code, pushed.stderr).toBe(0);
    const lease = w.forkRefs()['refs/mlx-storage-pr/pushed/moved'] as string;
    const tip = pushByHand(w.fork, 'A change by hand', 'moved');
    api.repos[FORK]!.checkRuns[lease] = [{ name: 'check_lint', status: 'completed', conclusion: 'success' }];
    api.repos[FORK]!.checkRuns[tip] = [{ name: 'check_lint', status: 'completed', conclusion: 'failure' }];
    const from = api.requests.length;
    const result = await ci(['--branch', 'moved']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toMatchObject({ commit: lease, branchTip: tip, branchMoved: true });
    expect(paths(api, from)).toContain(`/repos/${FORK}/commits/${lease}/check-runs`);
    expect(paths(api, from).some((p) => p.includes(tip))).toBe(false);
    const text = await human(['--branch', 'moved']);
    expect(text.stdout).toContain(
      `the branch moved holds ${tip.slice(0, 12)}, not ${lease.slice(0, 12)}, the commit mlx-storage-pr pushed last`,
    );
  });

  it('a branch the tool never pushed: CI_NOT_FOUND naming pr --push, and no request to GitHub', async () => {
    const from = api.requests.length;
    const result = await ci(['--branch', 'never-pushed']);
    expect(result.code).toBe(1);
    expect(result.json.error.code).toBe('CI_NOT_FOUND');
    expect(result.json.error.details.reasons).toEqual({ commit: 'not-pushed' });
    expect(result.json.error.hint).toContain('pr --push');
    expect(api.requests.slice(from)).toEqual([]);
  });

  it('403 with x-ratelimit-remaining 0: GITHUB_API_FAILED (1) saying when the limit resets', async () => {
    const reset = Math.floor(Date.now() / 1000) + 3600;
    api.scripted.push({
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
      body: { message: 'API rate limit exceeded for 127.0.0.1.' },
    });
    const result = await ci();
    expect(result.code).toBe(1);
    expect(result.json.error.code).toBe('GITHUB_API_FAILED');
    expect(result.json.error.message).toContain('API rate limit exceeded');
    expect(result.json.error.message).toContain(`resets at ${new Date(reset * 1000).toISOString()}`);
    expect(result.json.error.details).toMatchObject({
      status: 403,
      rateLimitReset: new Date(reset * 1000).toISOString(),
    });
  });

  it('--wait waits for the rate limit to reset, then reads on', async () => {
    api.repos[FORK]!.checkRuns[sha] = [{ name: 'check_lint', status: 'completed', conclusion: 'success' }];
    const reset = Math.floor(Date.now() / 1000) + 2;
    api.scripted.push({
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
      body: { message: 'API rate limit exceeded for 127.0.0.1.' },
    });
    const from = api.requests.length;
    const result = await ci(['--wait', '1']);
    expect(result.code, result.stderr).toBe(0);
    const [limited, next] = api.requests.slice(from);
    expect(next!.at).toBeGreaterThanOrEqual(reset * 1000);
    expect(next!.at - limited!.at).toBeGreaterThanOrEqual(900);
    expect(result.stderr).toContain('rate limit');
  });

  it('429 with Retry-After: without --wait GITHUB_API_FAILED (1) naming the delay; with --wait the next request comes after it', async () => {
    api.repos[FORK]!.checkRuns[sha] = [{ name: 'check_lint', status: 'completed', conclusion: 'success' }];
    const busy = { status: 429, headers: { 'retry-after': '1' }, body: { message: 'Too many requests' } };
    api.scripted.push(busy);
    const now = await ci();
    expect(now.code).toBe(1);
    expect(now.json.error.code).toBe('GITHUB_API_FAILED');
    expect(now.json.error.message).toContain('retry after 1 s');
    expect(now.json.error.hint).toContain('--wait');

    api.scripted.push(busy);
    const from = api.requests.length;
    const waited = await ci(['--wait', '1']);
    expect(waited.code, waited.stderr).toBe(0);
    const [refused, next] = api.requests.slice(from);
    expect(next!.at - refused!.at).toBeGreaterThanOrEqual(1000);
  });

  it('a 502 and a dropped connection are tried again, each retry logged; then the report (0)', async () => {
    api.repos[FORK]!.checkRuns[sha] = [{ name: 'check_lint', status: 'completed', conclusion: 'success' }];
    api.scripted.push({ status: 502, body: { message: 'Server Error' } }, { status: 0, body: null });
    const result = await ci();
    expect(result.code, result.stderr).toBe(0);
    const retries = result.stderr.split('\n').filter((l) => l.includes('trying again'));
    expect(retries).toHaveLength(2);
    expect(retries[0]).toContain('HTTP 502; trying again in 1 s (retry 1 of 3)');
    expect(retries[1]).toContain('no answer');
  });

  it('without a token: no Authorization header, and a warning that GitHub allows 60 requests an hour', async () => {
    api.repos[FORK]!.checkRuns[sha] = [{ name: 'check_lint', status: 'completed', conclusion: 'success' }];
    const from = api.requests.length;
    // A gh that is not logged in: no token from `gh auth token` either, whatever this machine's gh.
    const result = await ci([], { GH_TOKEN: '', GITHUB_TOKEN: '', ...withGh(fakeGh(null).bin) });
    expect(result.code, result.stderr).toBe(0);
    expect(api.requests.slice(from).map((r) => r.authorization)).toEqual(api.requests.slice(from).map(() => null));
    expect(result.stderr).toContain('60 requests an hour');
    expect(result.json.authenticated).toBe(false);
  });

  it('with a token: every request carries it, and it is in no output, --json or error, even when GitHub echoes it', async () => {
    api.repos[FORK]!.checkRuns[sha] = [{ name: 'check_lint', status: 'completed', conclusion: 'success' }];
    const from = api.requests.length;
    const ok = await ci();
    expect(ok.code).toBe(0);
    expect(new Set(api.requests.slice(from).map((r) => r.authorization))).toEqual(new Set([`token ${TOKEN}`]));
    expect(ok.json.authenticated).toBe(true);
    // A status whose context (and link) a misconfigured service filled with the token.
    api.repos[FORK]!.statuses[sha] = [{ context: `deploy ${TOKEN}`, state: 'success' }];
    const echoed = await ci();
    expect(echoed.code).toBe(0);
    expect(echoed.json.jobs).toContainEqual(expect.objectContaining({ kind: 'status', name: 'deploy ***' }));
    expect((await human()).stdout).toContain('deploy ***');
    api.scripted.push({ status: 422, body: { message: `proxy saw Authorization: token ${TOKEN}` } });
    const failed = await ci();
    expect(failed.code).toBe(1);
    expect(failed.json.error.code).toBe('GITHUB_API_FAILED');
    expect(failed.json.error.message).toContain('***');
    const text = await human([], {});
    expect(text.code).toBe(0);
  });
});

describe('pr --ci: usage', () => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld();
  });
  const run = (...args: string[]) => runCli(['pr', ...args, '--json'], { cwd: w.project, env: w.env });

  it('--ci with --push is a usage error (2) saying to run them one after the other', async () => {
    const result = await run('--ci', '--push', '--fork', w.fork);
    expect(result.code).toBe(2);
    expect(result.json.error.message).toContain('--ci');
    expect(result.json.error.hint).toContain('pr --push');
  });

  it('--wait without --ci is a usage error (2)', async () => {
    const result = await run('--push', '--fork', w.fork, '--wait', '5');
    expect(result.code).toBe(2);
    expect(result.json.error.message).toContain('--wait needs --ci');
  });

  for (const value of ['abc', '0', '-1'])
    it(`--wait ${value} is a usage error (2) naming the value`, async () => {
      const result = await run('--ci', '--fork', w.fork, `--wait=${value}`);
      expect(result.code).toBe(2);
      expect(result.json.error.message).toContain(`--wait must be a number of minutes above 0 (got "${value}")`);
    });

  it('--ci without --fork is a usage error (2)', async () => {
    const result = await run('--ci');
    expect(result.code).toBe(2);
    expect(result.json.error.message).toContain('--ci needs --fork');
  });
});
