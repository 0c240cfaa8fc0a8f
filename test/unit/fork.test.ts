import { describe, expect, it } from 'vitest';

import {
  commitSubject,
  githubRepoOf,
  leaseRef,
  parseRepoLocation,
  planRefresh,
  repositoryKey,
  sameContent,
  tokenHeaderEnv,
} from '../../src/pull-request/fork-refs.js';
import { UserError } from '../../src/core/errors.js';

const key = (location: string, cwd = '/work') => repositoryKey(parseRepoLocation(location, cwd));

describe('repository locations', () => {
  it('gives every spelling of one GitHub repository one key', () => {
    const forms = [
      'https://github.com/ml-explore/mlx.git',
      'https://github.com/ml-explore/mlx',
      'https://github.com/ml-explore/mlx/',
      'HTTPS://GITHUB.COM/ML-EXPLORE/MLX.GIT',
      'https://user@github.com:443/ml-explore/mlx.git',
      'ssh://git@github.com/ml-explore/mlx.git',
      'ssh://git@ssh.github.com:443/ml-explore/mlx.git',
      'git://github.com/ml-explore/mlx',
      'git@github.com:ml-explore/mlx.git',
      'github.com:ml-explore/mlx/',
      'https://www.github.com/ml-explore//mlx.git//',
      'https://github.com/ml%2Dexplore/mlx',
    ];
    expect(new Set(forms.map((f) => key(f)))).toEqual(new Set(['github.com/ml-explore/mlx']));
  });

  it('compares host names in the forms a resolver treats as one: trailing dot, percent-encoded, full-width, any case', () => {
    const forms = [
      'https://github.com./ml-explore/mlx.git',
      'https://GITHUB.COM../ml-explore/mlx',
      'https://%67ithub.com/ml-explore/mlx',
      'https://github%2Ecom:443/ml-explore/mlx/',
      'https://\uff47\uff49\uff54\uff48\uff55\uff42.com/ml-explore/mlx',
      'git@github.com.:ml-explore/mlx.git',
      'ssh://git@GitHub.Com.:22/ml-explore/mlx.git/',
      'https::https://github.com/ml-explore/mlx',
    ];
    expect(Object.fromEntries(forms.map((f) => [f, key(f)]))).toEqual(
      Object.fromEntries(forms.map((f) => [f, 'github.com/ml-explore/mlx'])),
    );
    // A host that only looks alike is another host.
    expect(key('https://github.co/ml-explore/mlx')).toBe('github.co/ml-explore/mlx');
    expect(key('https://github-com.example/ml-explore/mlx')).toBe('github-com.example/ml-explore/mlx');
  });

  it('tells other repositories, owners and hosts apart', () => {
    expect(key('https://github.com/alice/mlx.git')).toBe('github.com/alice/mlx');
    expect(key('https://github.com/ml-explore/mlx-examples')).toBe('github.com/ml-explore/mlx-examples');
    expect(key('https://gitlab.com/ml-explore/mlx')).toBe('gitlab.com/ml-explore/mlx');
  });

  it('reads local paths and file URLs as folders, a working tree and its .git folder as one', () => {
    expect(key('../up', '/work/project')).toBe('file:/work/up');
    expect(key('/work/up/.git/')).toBe('file:/work/up');
    expect(key('file:///work/up')).toBe('file:/work/up');
    expect(key('/work/fork.git')).toBe('file:/work/fork.git');
    // A single letter before a colon is a drive, not an scp-like host.
    expect(parseRepoLocation('C:/src/mlx', '/work').kind).toBe('file');
  });

  it('notices a password in a URL, not a user name', () => {
    const withPassword = parseRepoLocation('https://alice:ghp_x@github.com/alice/mlx.git', '/');
    const withUser = parseRepoLocation('https://alice@github.com/alice/mlx.git', '/');
    expect(withPassword.kind === 'network' && withPassword.password).toBe(true);
    expect(withUser.kind === 'network' && withUser.password).toBe(false);
  });

  it('finds the owner and name of a repository on a GitHub host, and nothing in a local path', () => {
    expect(githubRepoOf(parseRepoLocation('git@github.com:alice/mlx.git', '/'))).toEqual({
      host: 'github.com',
      owner: 'alice',
      repo: 'mlx',
    });
    expect(githubRepoOf(parseRepoLocation('https://ghe.example.com/team/mlx/', '/'))).toMatchObject({ owner: 'team' });
    expect(githubRepoOf(parseRepoLocation('/srv/git/mlx.git', '/'))).toBeNull();
    expect(githubRepoOf(parseRepoLocation('https://example.com/a/b/c.git', '/'))).toBeNull();
  });
});

describe('planRefresh', () => {
  const plan = (branch: string | null, lease: string | null, force = false, tipMatches = false) =>
    planRefresh({ branch, lease }, { force, tipMatches });

  it('creates a branch that is not there, also when a lease is left from a deleted branch', () => {
    expect(plan(null, null)).toEqual({ action: 'create' });
    expect(plan(null, 'a')).toEqual({ action: 'create' });
  });

  it('leaves its own tip alone when the content matches, updates it otherwise', () => {
    expect(plan('a', 'a', false, true)).toEqual({ action: 'unchanged' });
    expect(plan('a', 'a')).toEqual({ action: 'update', backup: false });
    expect(plan('a', 'a', true)).toEqual({ action: 'update', backup: false });
  });

  it('refuses a tip it did not push, and with force keeps it first', () => {
    expect(plan('b', 'a')).toEqual({ action: 'refuse', reason: 'moved' });
    expect(plan('b', null)).toEqual({ action: 'refuse', reason: 'never-pushed' });
    // A foreign tip is refused even when its content happens to match.
    expect(plan('b', 'a', false, true)).toEqual({ action: 'refuse', reason: 'moved' });
    expect(plan('b', 'a', true)).toEqual({ action: 'update', backup: true });
    expect(plan('b', null, true)).toEqual({ action: 'update', backup: true });
  });
});

describe('commit content', () => {
  const content = {
    tree: 't',
    parents: ['p'],
    message: 'Subject\n\nBody\n',
    author: 'Ann Dev <ann@example.invalid>',
    committer: 'Ann Dev <ann@example.invalid>',
  };
  it('compares tree, parents, message, author and committer exactly', () => {
    expect(sameContent(content, { ...content })).toBe(true);
    expect(sameContent(content, { ...content, message: 'Subject\n\nBody' })).toBe(false);
    expect(sameContent(content, { ...content, parents: ['q'] })).toBe(false);
    expect(sameContent(content, { ...content, tree: 'u' })).toBe(false);
    expect(sameContent(content, { ...content, author: 'Ann Dev <>' })).toBe(false);
    expect(sameContent(content, { ...content, committer: 'Ann <ann@example.invalid>' })).toBe(false);
  });

  it('takes the first line with text as the subject', () => {
    expect(commitSubject('\n  Add a view  \n\nBody')).toBe('Add a view');
  });

  it('keeps the lease next to the branch in its own namespace', () => {
    expect(leaseRef('feature/x')).toBe('refs/mlx-storage-pr/pushed/feature/x');
  });
});

describe('tokenHeaderEnv', () => {
  const token = 'ghp_abc';
  const basic = `Authorization: Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`;

  it("gives git the token as a header for the fork's origin only, after the environment's own entries", () => {
    expect(tokenHeaderEnv(parseRepoLocation('https://github.com/alice/mlx.git', '/'), token, {})).toEqual({
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.https://github.com/.extraHeader',
      GIT_CONFIG_VALUE_0: basic,
    });
    expect(
      tokenHeaderEnv(parseRepoLocation('http://127.0.0.1:8080/mlx.git', '/'), token, { GIT_CONFIG_COUNT: '2' }),
    ).toEqual({
      GIT_CONFIG_COUNT: '3',
      GIT_CONFIG_KEY_2: 'http.http://127.0.0.1:8080/.extraHeader',
      GIT_CONFIG_VALUE_2: basic,
    });
  });

  it('refuses plain http to another machine, where the token would cross the network unencrypted', () => {
    const refuse = () => tokenHeaderEnv(parseRepoLocation('http://git.example.com/alice/mlx.git', '/'), token, {});
    expect(refuse).toThrow(UserError);
    expect(refuse).toThrow(
      'http://git.example.com/alice/mlx.git: mlx-storage-pr does not send the token over plain http',
    );
    for (const local of ['http://localhost:8080/mlx.git', 'http://127.0.0.2/mlx.git', 'http://[::1]:8080/mlx.git'])
      expect(tokenHeaderEnv(parseRepoLocation(local, '/'), token, {})).toHaveProperty('GIT_CONFIG_COUNT', '1');
  });

  it('gives nothing for ssh and local forks, which do not use it', () => {
    expect(tokenHeaderEnv(parseRepoLocation('git@github.com:alice/mlx.git', '/'), token, {})).toEqual({});
    expect(tokenHeaderEnv(parseRepoLocation('/srv/fork.git', '/'), token, {})).toEqual({});
  });
});
