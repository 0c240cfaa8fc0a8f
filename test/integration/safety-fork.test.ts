/**
 * Safety of the fork target (issue 23, items 3-5): a token in a URL is never
 * accepted nor printed, never sent over plain http to another machine (git or
 * the GitHub API), and git's pushInsteadOf rules cannot turn the push to upstream.
 * Issue 37: nor can another path to the MLX source or another spelling of the upstream host.
 */
import { existsSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import path from 'node:path';

import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeWorld, pushByHand, refsOf, type World } from '../support/fork.js';
import { startGitHttpServer } from '../support/git-http.js';
import { git, runCli, tempDir, type CliResult } from '../support/repos.js';

const TOKEN = 'ghp_safetyTOKEN1234567890SECRET';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

function expectNoSecret(result: CliResult, ...secrets: string[]): void {
  for (const secret of secrets) {
    expect(result.stdout).not.toContain(secret);
    expect(result.stderr).not.toContain(secret);
  }
}

describe('pr --push: a token in the fork URL', () => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld();
  });
  const run = (args: string[], env: Record<string, string> = {}) =>
    runCli(['pr', ...args], { cwd: w.project, env: { ...w.env, ...env } });

  it('an http(s) URL with any user part (token@, user@, user:pass@) is refused (2), the token in no output, --json or log', async () => {
    const forms = [
      `https://${TOKEN}@github.com/someone/mlx.git`,
      `https://someone@github.com/someone/mlx.git`,
      `https://someone:${TOKEN}@github.com/someone/mlx.git`,
      `http://${TOKEN}@127.0.0.1:9/someone/mlx.git`,
    ];
    for (const form of forms) {
      for (const json of [['--json'], ['--verbose']]) {
        const result = await run(['--push', '--fork', form, '--skip-checks', ...json]);
        expect(result.code, form).toBe(2);
        expectNoSecret(result, TOKEN);
        if (json[0] === '--json') {
          expect(result.json.error.code).toBe('USAGE');
          expect(result.json.error.hint).toContain('GH_TOKEN');
        }
      }
    }
    const logs = path.join(w.project, '.work');
    for (const file of filesUnder(logs).filter((f) => f.endsWith('.log')))
      expect(readFileSync(file, 'utf8'), file).not.toContain(TOKEN);
  });

  it('a remote of the checkout whose URL holds a token is refused (2) without printing it', async () => {
    git(w.checkout, 'remote', 'add', 'tokened', `https://${TOKEN}@github.com/someone/mlx.git`);
    try {
      const result = await run(['--push', '--fork', 'tokened', '--skip-checks', '--json']);
      expect(result.code).toBe(2);
      expectNoSecret(result, TOKEN);
    } finally {
      git(w.checkout, 'remote', 'remove', 'tokened');
    }
  });

  it('ssh and scp-like URLs keep their git@ user', async () => {
    const result = await run(['--push', '--fork', 'git@github.com:ml-explore/mlx.git', '--skip-checks', '--json']);
    // The upstream refusal, not the user-part refusal: git@ is allowed.
    expect(result.json.error.code).toBe('PUSH_TARGET_UPSTREAM');
  });
});

describe('pr --push: the token and git tracing', () => {
  it('GIT_TRACE_CURL, GIT_CURL_VERBOSE and GIT_TRACE in the environment do not print the Authorization header', async () => {
    const w = await makeWorld({ GH_TOKEN: TOKEN });
    const encoded = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
    const server = await startGitHttpServer(path.dirname(w.fork), `Basic ${encoded}`);
    try {
      const url = `${server.url}/${path.basename(w.fork)}`;
      const trace = {
        GIT_TRACE_REDACT: '0',
        GIT_TRACE: '1',
        GIT_TRACE_CURL: '1',
        GIT_CURL_VERBOSE: '1',
        GIT_TRACE_PACKET: '1',
      };
      const ok = await runCli(['pr', '--push', '--fork', url, '--skip-checks', '--verbose'], {
        cwd: w.project,
        env: { ...w.env, ...trace },
      });
      expect(ok.code, ok.stderr).toBe(0);
      expectNoSecret(ok, TOKEN, encoded);
      pushByHand(w.fork, 'A change by hand');
      // A token the fork refuses: git fails, and its stderr tail is part of the message.
      const refused = await runCli(['pr', '--push', '--fork', url, '--skip-checks', '--json', '--verbose'], {
        cwd: w.project,
        env: { ...w.env, ...trace, GH_TOKEN: 'ghp_wrongTOKEN0000000000' },
      });
      expect(refused.code).toBe(5);
      expectNoSecret(
        refused,
        'ghp_wrongTOKEN0000000000',
        Buffer.from('x-access-token:ghp_wrongTOKEN0000000000').toString('base64'),
      );
      expect(refused.stdout + refused.stderr).not.toMatch(/Authorization:/i);
    } finally {
      await server.close();
    }
  });
});

describe('pr --push under GitHub Actions', () => {
  it('asks GitHub to mask the encoded Authorization header before git runs, once per push, only under GITHUB_ACTIONS=true', async () => {
    const w = await makeWorld({ GH_TOKEN: TOKEN });
    const encoded = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
    const server = await startGitHttpServer(path.dirname(w.fork), `Basic ${encoded}`);
    try {
      const url = `${server.url}/${path.basename(w.fork)}`;
      const actions = await runCli(['pr', '--push', '--fork', url, '--skip-checks', '--verbose'], {
        cwd: w.project,
        env: { ...w.env, GITHUB_ACTIONS: 'true' },
      });
      expect(actions.code, actions.stderr).toBe(0);
      const mask = actions.stderr.indexOf(`::add-mask::${encoded}\n`);
      expect(mask).toBeGreaterThanOrEqual(0);
      // Before the first git command that talks to the fork.
      const firstFetch = actions.stderr.search(/Running `git [^`]*(ls-remote|fetch|push)/);
      expect(firstFetch === -1 || mask < firstFetch).toBe(true);
      const local = await runCli(['pr', '--push', '--fork', url, '--skip-checks'], { cwd: w.project, env: w.env });
      expect(local.code, local.stderr).toBe(0);
      expect(local.stderr).not.toContain('::add-mask::');
    } finally {
      await server.close();
    }
  });
});

describe('pr --open: the token over plain http', () => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld({ GH_TOKEN: TOKEN });
  });
  afterAll(() => undefined);

  it('--api-url http://<another host> is refused (2) before anything is pushed or sent', async () => {
    const before = git(w.fork, 'for-each-ref');
    const result = await runCli(
      [
        'pr',
        '--push',
        '--fork',
        w.fork,
        '--open',
        '--fork-owner',
        'alice',
        '--api-url',
        'http://api.example.invalid/api/v3',
        '--skip-checks',
        '--json',
      ],
      { cwd: w.project, env: w.env },
    );
    expect(result.code).toBe(2);
    expect(result.json.error.code).toBe('USAGE');
    expect(result.json.error.message).toContain('http://api.example.invalid/api/v3');
    expect(result.json.error.message).toContain('plain http');
    expect(git(w.fork, 'for-each-ref')).toBe(before);
  });
});

describe('pr --push: pushInsteadOf and dot segments', () => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld();
  });
  const run = (fork: string) =>
    runCli(['pr', '--push', '--fork', fork, '--skip-checks', '--json'], { cwd: w.project, env: w.env });

  it('a pushInsteadOf rule that sends the fork URL to upstream is refused (2), nothing pushed', async () => {
    const before = git(w.fork, 'for-each-ref');
    const mine = 'https://github.com/someone/mlx.git';
    git(w.checkout, 'config', 'url.https://github.com/ml-explore/mlx.git.pushInsteadOf', mine);
    try {
      const result = await run(mine);
      expect(result.code, JSON.stringify(result.json)).toBe(2);
      expect(result.json.error.code).toBe('PUSH_TARGET_UPSTREAM');
    } finally {
      git(w.checkout, 'config', '--remove-section', 'url.https://github.com/ml-explore/mlx.git');
    }
    expect(git(w.fork, 'for-each-ref')).toBe(before);
  });

  it('a pushInsteadOf rule that sends a remote of the checkout to upstream is refused (2)', async () => {
    git(w.checkout, 'remote', 'add', 'mine', 'https://github.com/someone/mlx.git');
    git(w.checkout, 'config', 'url.git@github.com:ml-explore/.pushInsteadOf', 'https://github.com/someone/');
    try {
      const result = await run('mine');
      expect(result.code).toBe(2);
      expect(result.json.error.code).toBe('PUSH_TARGET_UPSTREAM');
    } finally {
      git(w.checkout, 'config', '--remove-section', 'url.git@github.com:ml-explore/');
      git(w.checkout, 'remote', 'remove', 'mine');
    }
  });

  it('the longest matching pushInsteadOf wins over a shorter one and over insteadOf', async () => {
    git(w.checkout, 'config', 'url.https://github.com/ml-explore/.pushInsteadOf', 'https://github.com/a/b/');
    git(w.checkout, 'config', 'url.https://github.com/harmless/.pushInsteadOf', 'https://github.com/a/');
    git(w.checkout, 'config', 'url.https://github.com/harmless2/.insteadOf', 'https://github.com/a/b/');
    try {
      const result = await run('https://github.com/a/b/mlx.git');
      expect(result.code).toBe(2);
      expect(result.json.error.code).toBe('PUSH_TARGET_UPSTREAM');
    } finally {
      for (const s of ['ml-explore/', 'harmless/', 'harmless2/'])
        git(w.checkout, 'config', '--remove-section', `url.https://github.com/${s}`);
    }
  });

  it('dot segments in the path are removed before comparing: https://github.com/ml-explore/./mlx.git is refused', async () => {
    for (const form of [
      'https://github.com/ml-explore/./mlx.git',
      'https://github.com/someone/../ml-explore/mlx.git',
      'https://github.com/ml-explore/%6Dlx.git',
    ]) {
      const result = await run(form);
      expect(result.code, form).toBe(2);
      expect(result.json.error.code, form).toBe('PUSH_TARGET_UPSTREAM');
    }
  });
});

/** The MLX source under another name: git follows each of these to the same object store. */
describe('pr --push: the MLX source through another path', () => {
  let w: World;
  let linked: string;
  beforeAll(async () => {
    w = await makeWorld();
    linked = path.join(tempDir('msp-linked-'), 'linked');
    git(w.upstream.dir, 'worktree', 'add', '--quiet', '--detach', linked);
  });
  const run = (fork: string) =>
    runCli(['pr', '--push', '--fork', fork, '--skip-checks', '--json'], { cwd: w.project, env: w.env });

  async function expectRefused(fork: string): Promise<void> {
    const before = refsOf(w.upstream.dir);
    const result = await run(fork);
    expect(refsOf(w.upstream.dir), `${fork}: pushed to the source`).toEqual(before);
    expect(result.code, `${fork}: ${JSON.stringify(result.json)}`).toBe(2);
    expect(result.json.error.code, fork).toBe('PUSH_TARGET_UPSTREAM');
    expect(result.json.error.hint).toContain('--fork https://github.com/<you>/mlx.git');
  }

  it('a linked worktree of the source, its file URL and its admin folder <source>/.git/worktrees/<n>: refused (2)', async () => {
    await expectRefused(linked);
    await expectRefused(`file://${linked}`);
    await expectRefused(path.join(w.upstream.dir, '.git', 'worktrees', path.basename(linked)));
  });

  it('a folder whose .git file points at the source: refused (2)', async () => {
    const folder = tempDir('msp-gitfile-');
    writeFileSync(path.join(folder, '.git'), `gitdir: ${path.join(w.upstream.dir, '.git')}\n`);
    await expectRefused(folder);
  });

  it('a symlink to the source or to its .git folder, and a path git completes with .git to one: refused (2)', async () => {
    const links = tempDir('msp-links-');
    symlinkSync(w.upstream.dir, path.join(links, 'mlx'));
    symlinkSync(path.join(w.upstream.dir, '.git'), path.join(links, 'mlx.git'));
    await expectRefused(path.join(links, 'mlx'));
    await expectRefused(path.join(links, 'mlx.git'));
    // git adds .git to a path that is not there: file://<links>/source reaches <links>/source.git.
    symlinkSync(w.upstream.dir, path.join(links, 'source.git'));
    await expectRefused(`file://${path.join(links, 'source')}`);
  });

  it('a remote of the checkout whose URL is the linked worktree, as an absolute or a relative path: refused (2)', async () => {
    git(w.checkout, 'remote', 'add', 'linked', linked);
    git(w.checkout, 'remote', 'add', 'relative', path.relative(w.checkout, linked));
    try {
      await expectRefused('linked');
      await expectRefused('relative');
    } finally {
      git(w.checkout, 'remote', 'remove', 'linked');
      git(w.checkout, 'remote', 'remove', 'relative');
    }
  });

  it('a bind mount of the source: refused (2)', async (test) => {
    const mountPoint = tempDir('msp-bind-');
    try {
      await execa('mount', ['--bind', w.upstream.dir, mountPoint]);
    } catch (error) {
      test.skip(`mount --bind needs root and a kernel that allows it here: ${String(error).split('\n')[0]}`);
      return;
    }
    try {
      await expectRefused(mountPoint);
      await expectRefused(`file://${mountPoint}/.git`);
    } finally {
      // Before the temp folders are removed: removing the mount point's files would remove the source's.
      await execa('umount', [mountPoint]);
    }
  });

  it('a fork that is another repository next to the source is not refused', async () => {
    const result = await run(w.fork);
    expect(result.code, result.stderr).toBe(0);
  });
});

/** A host name in the forms a resolver treats as one: git would connect to the upstream host with each. */
describe('pr --push: the upstream host in another spelling', () => {
  let w: World;
  let connections: string[];
  let proxy: Server;
  let trapCalls: () => string[];
  beforeAll(async () => {
    w = await makeWorld();
    // Every way git could leave this machine ends in a trap that records it: ssh, the git:// proxy, http(s).
    connections = [];
    proxy = createServer((socket) => {
      socket.once('data', (data) => connections.push(`http ${data.toString('utf8').split('\r\n')[0]}`));
      socket.on('error', () => undefined);
      setTimeout(() => socket.destroy(), 50);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as AddressInfo).port;
    const trap = path.join(tempDir('msp-trap-'), 'trap');
    const record = path.join(path.dirname(trap), 'calls');
    writeFileSync(trap, `#!/bin/sh\necho "$0 $*" >> ${record}\nexit 1\n`, { mode: 0o755 });
    writeFileSync(
      path.join(w.env.HOME as string, '.gitconfig'),
      `[core]\n\tsshCommand = ${trap}\n\tgitProxy = ${trap}\n[http]\n\tproxy = http://127.0.0.1:${port}\n`,
    );
    trapCalls = () => (existsSync(record) ? readFileSync(record, 'utf8').split('\n').filter(Boolean) : []);
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
  });
  const run = (fork: string) =>
    runCli(['pr', '--push', '--fork', fork, '--skip-checks', '--json'], { cwd: w.project, env: w.env });
  const reached = () => [...connections, ...trapCalls()];

  it('the traps see a push to another host (so their silence below means no connection)', async () => {
    for (const fork of ['https://example.invalid/someone/mlx.git', 'git@example.invalid:someone/mlx.git']) {
      const before = reached().length;
      const result = await run(fork);
      expect(result.code, fork).not.toBe(0);
      await expect.poll(() => reached().length, { timeout: 30_000 }).toBeGreaterThan(before);
    }
  });

  it('a trailing dot, a percent-encoded or full-width host, any case, port, user or .git: refused (2) before git connects', async () => {
    const forms = [
      'https://github.com./ml-explore/mlx.git',
      'https://GitHub.COM./ML-Explore/MLX/',
      'https://github.com.:443/ml-explore/mlx',
      'https://%67ithub.com/ml-explore/mlx.git',
      'https://github%2Ecom/ml-explore/mlx',
      'https://%47%49%54%48%55%42.%43%4F%4D/ml-explore/mlx.git',
      'https://\uff47\uff49\uff54\uff48\uff55\uff42.com/ml-explore/mlx',
      'git@github.com.:ml-explore/mlx.git',
      'git@GITHUB.COM.:ml-explore/mlx',
      'ssh://git@github.com.:22/ml-explore/mlx.git/',
      'ssh://git@%67ithub.com/ml-explore/mlx',
      'git://github.com./ml-explore/mlx',
      // git's <transport>::<address>: git-remote-https connects to the address.
      'https::https://github.com/ml-explore/mlx.git',
    ];
    git(w.checkout, 'remote', 'add', 'dotted', 'git@github.com.:ml-explore/mlx');
    git(w.checkout, 'config', 'url.https://github.com./ml-explore/.insteadOf', 'https://github.com/someone-else/');
    const before = reached().length;
    const outcome: Record<string, unknown> = {};
    try {
      for (const form of [...forms, 'dotted', 'https://github.com/someone-else/mlx.git']) {
        const result = await run(form);
        outcome[form] =
          result.code === 2 && result.json.error.code === 'PUSH_TARGET_UPSTREAM' ? 'refused' : result.json;
      }
    } finally {
      git(w.checkout, 'remote', 'remove', 'dotted');
      git(w.checkout, 'config', '--remove-section', 'url.https://github.com./ml-explore/');
    }
    expect(outcome).toEqual(Object.fromEntries(Object.keys(outcome).map((k) => [k, 'refused'])));
    expect(reached().slice(before)).toEqual([]);
  });
});
