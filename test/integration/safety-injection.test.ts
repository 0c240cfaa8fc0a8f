/**
 * Values from the command line, the config and the environment that would steer git (issue 37): an option
 * smuggled in as a ref or a URL, a branch git reads as something else, GIT_* variables pointing git at another
 * repository, and a token in a URL reaching the output.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';

import { execa } from 'execa';
import { beforeEach, describe, expect, it } from 'vitest';

import { makeExportProject, makeExportUpstream } from '../support/export-fixtures.js';
import { refsOf } from '../support/fork.js';
import { editConfig, git, makeProject, makeUpstream, runCli, snapshot, tempDir } from '../support/repos.js';

/** An option that makes git run `touch <marker>`: the marker exists afterwards only if git took it as an option. */
function smuggled(): { value: string; marker: string } {
  const marker = path.join(tempDir('msp-pwned-'), 'pwned');
  return { value: `--upload-pack=touch ${marker}`, marker };
}

describe('a git option given as a ref, a URL or a source', () => {
  let upstream: { dir: string; sha: string };
  let project: string;
  const cli = (args: string[], env: Record<string, string> = {}) =>
    runCli([...args, '--json'], { cwd: project, env: { MLX_REPO: upstream.dir, ...env } });

  beforeEach(async () => {
    upstream = makeExportUpstream();
    project = makeExportProject(upstream.sha);
    expect((await cli(['apply'])).code).toBe(0);
  });

  it('bump --to: refused as a usage error, git never runs it', async () => {
    const { value, marker } = smuggled();
    const before = snapshot(path.join(project, '.work', 'mlx'));
    const result = await cli(['bump', `--to=${value}`]);
    expect(existsSync(marker)).toBe(false);
    expect(result.code, result.stdout).toBe(2);
    expect(result.json.error.code).toBe('USAGE');
    expect(result.json.error.message).toContain('--to');
    expect(snapshot(path.join(project, '.work', 'mlx'))).toBe(before);
  });

  it('bump --to a refspec (+src:dst): refused, no ref of the checkout written', async () => {
    const checkout = path.join(project, '.work', 'mlx');
    const before = refsOf(checkout);
    const result = await cli(['bump', '--to', '+main:refs/heads/written-by-fetch']);
    expect(result.code, result.stdout).toBe(2);
    expect(result.json.error.message).toContain('--to');
    expect(refsOf(checkout)).toEqual(before);
  });

  it('check --against: refused as a usage error', async () => {
    const { value, marker } = smuggled();
    const result = await cli(['check', `--against=${value}`]);
    expect(existsSync(marker)).toBe(false);
    expect(result.code, result.stdout).toBe(2);
    expect(result.json.error.message).toContain('--against');
  });

  it('init --from and --pin: refused as a usage error, for a source on this machine and a URL', async () => {
    for (const source of [upstream.dir, `file://${upstream.dir}`])
      for (const option of ['--from', '--pin']) {
        const { value, marker } = smuggled();
        const target = path.join(tempDir(), 'new');
        const other = option === '--from' ? ['--pin', upstream.sha] : ['--from', 'main'];
        const result = await cli(['init', '--project', target, `${option}=${value}`, ...other, '--mlx-repo', source]);
        expect(existsSync(marker)).toBe(false);
        expect(result.code, `${option} ${source}: ${result.stdout}`).toBe(2);
        expect(result.json.error.message).toContain(option);
        expect(existsSync(target)).toBe(false);
      }
  });

  it('pr --fork: refused as a usage error before anything is read or pushed', async () => {
    const { value, marker } = smuggled();
    const result = await cli(['pr', '--push', `--fork=${value}`, '--skip-checks']);
    expect(existsSync(marker)).toBe(false);
    expect(result.code, result.stdout).toBe(2);
    expect(result.json.error.message).toContain('--fork');
  });

  it('--mlx-repo, MLX_REPO and upstream.url: taken as a folder (here none: exit 5), never as an option', async () => {
    const runs: Array<() => Promise<{ code: number }>> = [];
    const fresh = () => makeExportProject(upstream.sha);
    const a = smuggled();
    runs.push(() => runCli(['apply', '--json', `--mlx-repo=${a.value}`], { cwd: fresh(), env: {} }));
    const b = smuggled();
    runs.push(() => runCli(['apply', '--json'], { cwd: fresh(), env: { MLX_REPO: b.value } }));
    const c = smuggled();
    const fromConfig = fresh();
    editConfig(fromConfig, (config) => {
      (config['upstream'] as Record<string, unknown>)['url'] = c.value;
    });
    runs.push(() => runCli(['apply', '--json'], { cwd: fromConfig, env: {} }));
    for (const [i, run] of runs.entries()) {
      const result = await run();
      expect(result.code, `run ${i}`).toBe(5);
    }
    for (const { marker } of [a, b, c]) expect(existsSync(marker)).toBe(false);
  });
});

describe('the git adapter and a value that looks like an option', () => {
  it('refuses it for every remote and revision argument, before git starts', async () => {
    const { Git } = await import('../../src/adapters/git.js');
    const { createLogger } = await import('../../src/adapters/log.js');
    const upstream = makeUpstream();
    const repo = tempDir();
    git(repo, 'init', '--quiet');
    const g = new Git(repo, createLogger(), { PATH: process.env['PATH'] });
    const { value, marker } = smuggled();
    const source = `file://${upstream.dir}`;
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['fetchCommit source', () => g.fetchCommit(value, upstream.sha, { depth: 1 })],
      ['fetchCommit commit', () => g.fetchCommit(source, value, { depth: 1 })],
      ['fetchCommits', () => g.fetchCommits(source, [value], {})],
      ['fetchSince', () => g.fetchSince(source, [value], 0, {})],
      ['fetchRefs url', () => g.fetchRefs(value, ['+main:refs/x'])],
      ['lsRemote', () => g.lsRemote(value)],
      ['remoteRefs source', () => g.remoteRefs(value, ['main'])],
      ['remoteRefs pattern', () => g.remoteRefs(source, [value])],
      ['remoteRefIds', () => g.remoteRefIds(value, ['refs/heads/main'])],
      ['expandUrl', () => g.expandUrl(value)],
      ['remotePushUrls', () => g.remotePushUrls(value)],
      ['pushAtomic', () => g.pushAtomic(value, [{ commit: upstream.sha, ref: 'refs/heads/x', expect: null }])],
      ['checkoutBranch', () => g.checkoutBranch('-b', upstream.sha)],
      ['checkoutDetached', () => g.checkoutDetached(value)],
      ['commitsIn', () => g.commitsIn(value, [], 1)],
      ['grepLines', () => g.grepLines(value, 'x', [])],
      ['updateRef', () => g.updateRef(value, upstream.sha)],
    ];
    for (const [name, call] of calls) {
      const error = await call().then(
        () => null,
        (e: unknown) => e,
      );
      expect(error, name).toMatchObject({ code: 'USAGE' });
      expect(existsSync(marker), name).toBe(false);
    }
  });
});

describe('a branch name git would read as something else', () => {
  it('pr --branch HEAD, refs/heads/main, -x, a..b, x.lock: exit 2 before anything else, the fork unchanged', async () => {
    const upstream = makeUpstream();
    const forks = tempDir('msp-fork-');
    const fork = path.join(forks, 'mlx.git');
    git(forks, 'clone', '--quiet', '--bare', upstream.dir, fork);
    // No apply yet: a bad branch is reported before the checkout is looked at.
    const project = makeProject(upstream.sha);
    const before = refsOf(fork);
    for (const branch of ['HEAD', 'refs/heads/main', '-x', 'a..b', 'x.lock', '@{-1}', 'a b']) {
      for (const mode of [['--push'], ['--ci']]) {
        const result = await runCli(['pr', ...mode, '--fork', fork, `--branch=${branch}`, '--json'], {
          cwd: project,
          env: { MLX_REPO: upstream.dir },
        });
        expect(result.code, `${mode[0]} --branch ${branch}: ${result.stdout}`).toBe(2);
        expect(result.json.error.code).toBe('USAGE');
        expect(result.json.error.message).toContain('--branch');
      }
    }
    expect(refsOf(fork)).toEqual(before);
    expect(existsSync(path.join(project, '.work'))).toBe(false);
  });

  it('a config branch -x, a..b, x.lock, HEAD, refs/heads/x: the config is invalid (exit 7) and nothing is fetched', async () => {
    const upstream = makeUpstream();
    for (const branch of ['-x', 'a..b', 'x.lock', 'HEAD', 'refs/heads/x', 'a/', '.a', 'a//b', '@']) {
      const project = makeProject(upstream.sha);
      editConfig(project, (config) => {
        config['branch'] = branch;
      });
      const result = await runCli(['apply', '--json'], { cwd: project, env: { MLX_REPO: upstream.dir } });
      expect(result.code, `${branch}: ${result.stdout}`).toBe(7);
      expect(result.json.error.code).toBe('CONFIG_INVALID');
      expect(result.json.error.message).toContain('branch');
      expect(existsSync(path.join(project, '.work', 'mlx'))).toBe(false);
    }
  });

  it('the rules are git check-ref-format --branch, plus HEAD, @ and refs/... refused', async () => {
    const { branchNameProblem } = await import('../../src/core/git-values.js');
    const names = ['a', 'a/b', 'a.b', 'a-b', 'v1.2', 'a..b', 'a.lock', 'a/.b', '.a', 'a.', 'a/', '/a', 'a//b', 'a b'];
    names.push('a~1', 'a^', 'a:b', 'a?', 'a*', 'a[b', 'a\\b', 'a@{b', '@', '-a', 'a\tb', 'naïve', 'a/b.lock/c', 'x@y');
    const extra = new Set(['HEAD', '@', 'refs/heads/main', 'refs/x']);
    for (const name of [...names, ...extra]) {
      let gitTakes = true;
      try {
        await execa('git', ['check-ref-format', '--branch', name], { cwd: tempDir() });
      } catch {
        gitTakes = false;
      }
      expect(branchNameProblem(name) === null, name).toBe(gitTakes && !extra.has(name));
    }
  });

  it('valid names still pass: nested, with dots and dashes inside', async () => {
    const upstream = makeUpstream();
    const project = makeProject(upstream.sha);
    editConfig(project, (config) => {
      config['branch'] = 'me/metal-view.v2_x';
    });
    const result = await runCli(['apply', '--json'], { cwd: project, env: { MLX_REPO: upstream.dir } });
    expect(result.code, result.stdout).toBe(0);
    expect(git(path.join(project, '.work', 'mlx'), 'symbolic-ref', '--short', 'HEAD').trim()).toBe(
      'me/metal-view.v2_x',
    );
  });
});

/** A repository of the user's that is not the tool's, with an uncommitted edit: what GIT_* variables point at. */
function foreignRepo(): { dir: string; state: () => string } {
  const dir = tempDir('msp-foreign-');
  git(dir, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(path.join(dir, 'mine.txt'), 'committed\n');
  git(dir, 'add', 'mine.txt');
  git(dir, 'commit', '--quiet', '-m', 'mine');
  writeFileSync(path.join(dir, 'mine.txt'), 'my uncommitted edit\n');
  const objects = (folder: string): string[] =>
    readdirSync(folder, { recursive: true, encoding: 'utf8' })
      .map((f) => f.toString())
      .sort();
  return {
    dir,
    state: () =>
      [
        snapshot(dir),
        JSON.stringify(refsOf(dir)),
        git(dir, 'stash', 'list'),
        readFileSync(path.join(dir, '.git', 'index')).toString('base64'),
        objects(path.join(dir, '.git', 'objects')).join('\n'),
      ].join('\n'),
  };
}

describe('GIT_* variables of the caller (a git hook, an IDE task) pointing at another repository', () => {
  const SERIES_FILE = 'mlx/backend/metal/storage_view.cpp';
  let upstream: { dir: string; sha: string };
  let project: string;
  let checkout: string;

  beforeEach(() => {
    upstream = makeUpstream();
    project = makeProject(upstream.sha);
    checkout = path.join(project, '.work', 'mlx');
  });

  const variants = (foreign: string): Array<Record<string, string>> => [
    { GIT_DIR: path.join(foreign, '.git'), GIT_WORK_TREE: foreign },
    { GIT_DIR: path.join(foreign, '.git') },
    { GIT_INDEX_FILE: path.join(foreign, '.git', 'index') },
    { GIT_OBJECT_DIRECTORY: path.join(foreign, '.git', 'objects') },
    { GIT_COMMON_DIR: path.join(foreign, '.git'), GIT_NAMESPACE: 'x' },
  ];

  it("apply --force and reset save and replace the checkout's files, not that repository's", async () => {
    expect((await runCli(['apply'], { cwd: project, env: { MLX_REPO: upstream.dir } })).code).toBe(0);
    const foreign = foreignRepo();
    const before = foreign.state();
    for (const extra of variants(foreign.dir)) {
      const label = Object.keys(extra).join('+');
      const cli = (...args: string[]) =>
        runCli([...args, '--json'], { cwd: project, env: { MLX_REPO: upstream.dir, ...extra } });
      if (!existsSync(path.join(checkout, SERIES_FILE))) expect((await cli('apply')).code, label).toBe(0);
      writeFileSync(path.join(checkout, SERIES_FILE), 'an edit in the checkout\n');
      // A changed series: apply --force replaces the edited file, saving the edit first.
      const template = path.join(project, 'templates', SERIES_FILE);
      writeFileSync(template, `${readFileSync(template, 'utf8')}// ${label}\n`);
      const stashes = git(checkout, 'stash', 'list').split('\n').filter(Boolean).length;
      const forced = await cli('apply', '--force');
      expect(forced.code, `${label} apply --force: ${forced.stdout}`).toBe(0);
      expect(foreign.state(), `${label} apply --force`).toBe(before);
      // The checkout's edit was saved in the checkout's own stash, and the new series is there.
      expect(git(checkout, 'stash', 'list').split('\n').filter(Boolean).length, label).toBe(stashes + 1);
      expect(readFileSync(path.join(checkout, SERIES_FILE), 'utf8'), label).toContain(`// ${label}`);
      writeFileSync(path.join(checkout, SERIES_FILE), 'another edit\n');
      const reset = await cli('reset');
      expect(reset.code, `${label} reset: ${reset.stdout}`).toBe(0);
      expect(foreign.state(), `${label} reset`).toBe(before);
      // Back on the pinned commit, which lacks the file the series adds; the edit is in the stash.
      expect(existsSync(path.join(checkout, SERIES_FILE)), label).toBe(false);
      expect(git(checkout, 'stash', 'list').split('\n').filter(Boolean).length, label).toBe(stashes + 2);
    }
  });

  it('a new checkout (apply) and status are made and read in the workdir, that repository untouched', async () => {
    const foreign = foreignRepo();
    const before = foreign.state();
    for (const extra of variants(foreign.dir)) {
      const label = Object.keys(extra).join('+');
      const fresh = makeProject(upstream.sha);
      const env = { MLX_REPO: upstream.dir, ...extra };
      const applied = await runCli(['apply', '--json'], { cwd: fresh, env });
      expect(applied.code, `${label} apply: ${applied.stdout}`).toBe(0);
      const status = await runCli(['status', '--json'], { cwd: fresh, env });
      expect(status.json.state, `${label} status: ${status.stdout}`).toBe('applied');
      expect(foreign.state(), label).toBe(before);
    }
  });
});

describe('GIT_* variables of the caller and the programs the tool starts besides its git adapter', () => {
  it("git archive (the Metal lane's copy of the tree) reads the repository it runs in", async () => {
    const { exportGitTree } = await import('../../src/adapters/archive.js');
    const { createLogger } = await import('../../src/adapters/log.js');
    const upstream = makeUpstream();
    const foreign = foreignRepo();
    const before = foreign.state();
    const dest = tempDir();
    const env = { PATH: process.env['PATH'], GIT_DIR: path.join(foreign.dir, '.git'), GIT_WORK_TREE: foreign.dir };
    await exportGitTree(upstream.dir, upstream.sha, ['mlx'], dest, {
      env,
      log: createLogger({ stream: new PassThrough() }),
    });
    expect(existsSync(path.join(dest, 'mlx', 'backend', 'metal', 'no_metal.cpp'))).toBe(true);
    expect(foreign.state()).toBe(before);
  });

  it('a long program (CMake, which may run git) and a short one get none of them', async () => {
    const { run, runLogged } = await import('../../src/adapters/process.js');
    const { createLogger } = await import('../../src/adapters/log.js');
    const { REPOSITORY_VARIABLES } = await import('../../src/adapters/env.js');
    const env = {
      PATH: process.env['PATH'],
      ...Object.fromEntries(REPOSITORY_VARIABLES.map((v) => [v, '/elsewhere'])),
    };
    const script = 'env | grep "^GIT_" || true';
    const short = await run('sh', ['-c', script], { env });
    expect(short.stdout).toBe('');
    const long = await runLogged(createLogger({ stream: new PassThrough() }), 'sh', ['-c', script], {
      cwd: tempDir(),
      env,
      keepOutput: true,
    });
    expect(long.output.trim()).toBe('');
  });
});

describe('a token in the URL of the MLX source', () => {
  const SOURCE = 'http://x-access-token:SECRET@127.0.0.1:9/mlx.git';
  let project: string;

  beforeEach(() => {
    project = makeProject(makeUpstream().sha);
  });

  it('apply --mlx-repo: not in the SOURCE_UNREACHABLE message, --json details or the --verbose git command lines', async () => {
    const result = await runCli(['apply', '--json', '--verbose', '--mlx-repo', SOURCE], { cwd: project, env: {} });
    expect(result.code, result.stdout).toBe(5);
    expect(result.json.error.code).toBe('SOURCE_UNREACHABLE');
    // The URL is still named, without its user part.
    expect(result.stdout).toContain('127.0.0.1:9/mlx.git');
    expect(result.stderr).toContain('127.0.0.1:9/mlx.git');
    expect(result.stdout).not.toContain('SECRET');
    expect(result.stderr).not.toContain('SECRET');
    expect(result.stdout).not.toContain('x-access-token');
    expect(result.stderr).not.toContain('x-access-token');
  });

  it('MLX_REPO: not in apply, status --json or bump --json output', async () => {
    const env = { MLX_REPO: SOURCE };
    for (const args of [['apply'], ['status'], ['bump', '--to', 'main'], ['check', '--against', 'main']]) {
      const result = await runCli([...args, '--json', '--verbose'], { cwd: project, env });
      expect(`${result.stdout}${result.stderr}`, args.join(' ')).not.toContain('SECRET');
      expect(`${result.stdout}${result.stderr}`, args.join(' ')).not.toContain('x-access-token');
      expect(result.stdout, args.join(' ')).toContain('127.0.0.1:9/mlx.git');
    }
  });

  it('a URL of another scheme with a password, an ssh URL with a user only', async () => {
    const { redactUrls } = await import('../../src/core/redact.js');
    expect(redactUrls('fetch ftp://me:pw@h/x and git://u:p@h/y')).toBe('fetch ftp://***@h/x and git://***@h/y');
    expect(redactUrls('https://TOKEN@github.com/a/b.git')).toBe('https://***@github.com/a/b.git');
    expect(redactUrls("'HTTPS://u:p@h/x'")).toBe("'HTTPS://***@h/x'");
    // An ssh user name is no secret, and what an ssh URL needs to be recognised.
    expect(redactUrls('ssh://git@github.com/a/b.git git@github.com:a/b.git')).toBe(
      'ssh://git@github.com/a/b.git git@github.com:a/b.git',
    );
    expect(redactUrls('ssh://git:pw@github.com/a/b.git')).toBe('ssh://***@github.com/a/b.git');
  });
});
