/**
 * `pr --push`: the user's commit on the fork's branch, refreshed without ever
 * overwriting work the tool did not push. Real git throughout: the upstream
 * is a fixture repository, the fork a bare clone of it (as GitHub's fork has
 * the upstream history), reached by path, file URL or over HTTP.
 */
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import {
  cloneProject,
  DESCRIPTION,
  IDENTITY,
  makeWorld,
  MESSAGE,
  ONLY_PR_TEXT,
  pushByHand,
  refsOf,
  writePrText,
  type World,
} from '../support/fork.js';
import { startGitHttpServer } from '../support/git-http.js';
import { addMulImplementation, MUL_TEST } from '../support/mul-fixture.js';
import {
  ccacheDir,
  FIXTURES,
  git,
  gitAsync,
  makeProject,
  makeUpstream,
  runCli,
  sh,
  tempDir,
  type CliResult,
} from '../support/repos.js';

const BRANCH = 'refs/heads/mlx-storage-pr';
const LEASE = 'refs/mlx-storage-pr/pushed/mlx-storage-pr';

describe('pr --push: refreshing the branch on the fork', () => {
  let w: World;
  let first: string;
  let hand: string;

  beforeAll(async () => {
    w = await makeWorld();
  });

  it("creates the branch with the user's commit: the applied tree on the pinned commit, the message verbatim, the user's identity", async () => {
    const before = w.forkRefs();
    const result = await w.pr(...ONLY_PR_TEXT);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toMatchObject({ ok: true, command: 'pr', status: 'created', branch: 'mlx-storage-pr' });
    first = result.json.commit as string;
    const refs = w.forkRefs();
    expect(refs[BRANCH]).toBe(first);
    expect(refs[LEASE]).toBe(first);
    expect(Object.keys(refs).sort()).toEqual([...Object.keys(before), BRANCH, LEASE].sort());

    const applied = git(w.checkout, 'rev-parse', 'HEAD').trim();
    expect(git(w.fork, 'rev-parse', `${first}^{tree}`)).toBe(git(w.checkout, 'rev-parse', 'HEAD^{tree}'));
    expect(git(w.fork, 'rev-list', '--parents', '-n', '1', first).trim()).toBe(`${first} ${w.upstream.sha}`);
    const raw = git(w.fork, 'cat-file', 'commit', first);
    expect(raw.slice(raw.indexOf('\n\n') + 2)).toBe(MESSAGE);
    expect(raw).toMatch(/^author Ada Lovelace <ada@example\.invalid> /m);
    expect(raw).toMatch(/^committer Ada Lovelace <ada@example\.invalid> /m);
    // apply's own commit (the tool's identity and fixed date) never reaches the fork.
    await expect(gitAsync(w.fork, 'cat-file', '-e', `${applied}^{commit}`)).rejects.toThrow();
    expect(result.json.checks.map((c: { id: string }) => c.id)).toEqual([
      'pr-files',
      'pr-placeholders',
      'pr-ai-disclosure',
    ]);
    expect(result.json.skipped).toEqual([
      'format-cpp',
      'format-cmake',
      'metal-typecheck',
      'docs',
      'linux-build',
      'tests-fail-without-implementation',
      'metal-twin',
      'mutants',
      'sanitizer',
    ]);
  });

  /** Commits in the checkout's object store with the content of `first` and another id: made by `pr`, not pushed. */
  const unpushedTwins = () =>
    git(w.checkout, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname) %(objecttype)')
      .split('\n')
      .filter((l) => l.endsWith(' commit'))
      .map((l) => l.split(' ')[0] as string)
      .filter((id) => id !== first)
      .filter((id) => git(w.checkout, 'rev-parse', `${id}^{tree}`) === git(w.fork, 'rev-parse', `${first}^{tree}`))
      .filter((id) => git(w.checkout, 'rev-list', '--parents', '-n', '1', id).trim() === `${id} ${w.upstream.sha}`)
      .filter((id) => git(w.checkout, 'show', '-s', '--format=%B', id) === `${MESSAGE}\n`);
  const at = (date: string) => ({ ...w.env, GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date });

  it('a second run at another time makes a commit with another id and the same content: unchanged, nothing pushed', async () => {
    const before = w.forkRefs();
    const result = await runCli(['pr', '--push', '--fork', w.fork, ...ONLY_PR_TEXT], {
      cwd: w.project,
      env: at('2031-05-05T10:00:00Z'),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^unchanged: mlx-storage-pr on /);
    expect(result.stderr).not.toContain('git push');
    expect(w.forkRefs()).toEqual(before);
    expect(unpushedTwins()).toHaveLength(1);
  });

  it('after reset and apply again, at yet another time: unchanged', async () => {
    expect((await runCli(['reset'], { cwd: w.project, env: w.env })).code).toBe(0);
    expect((await runCli(['apply'], { cwd: w.project, env: w.env })).code).toBe(0);
    const before = w.forkRefs();
    const result = await runCli(['pr', '--push', '--fork', w.fork, '--json', '--skip-checks'], {
      cwd: w.project,
      env: at('2032-06-06T10:00:00Z'),
    });
    expect(result.json).toMatchObject({ status: 'unchanged', commit: first, previous: first });
    expect(w.forkRefs()).toEqual(before);
    expect(unpushedTwins()).toHaveLength(2);
  });

  it("from a fresh clone with a new workdir, as in CI: the lease on the fork says the branch is the tool's, so unchanged", async () => {
    const fresh = await cloneProject(w.upstream, w.env);
    const result = await runCli(['pr', '--push', '--fork', `file://${w.fork}`, '--json', '--skip-checks'], {
      cwd: fresh.project,
      env: w.env,
    });
    expect(result.json).toMatchObject({ status: 'unchanged', commit: first });
  });

  it('after a template changes: updated, the lease moves with the branch in the same push', async () => {
    const file = path.join(w.project, 'templates/mlx/backend/metal/storage_view.cpp');
    writeFileSync(file, `${readFileSync(file, 'utf8')}// v2\n`);
    expect((await runCli(['apply'], { cwd: w.project, env: w.env })).code).toBe(0);
    const result = await w.pr('--skip-checks');
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toMatchObject({ status: 'updated', previous: first });
    const second = result.json.commit as string;
    expect(second).not.toBe(first);
    expect(w.forkRefs()[BRANCH]).toBe(second);
    expect(w.forkRefs()[LEASE]).toBe(second);
    expect(git(w.fork, 'rev-parse', `${second}^`).trim()).toBe(w.upstream.sha);
    expect(result.stderr).toContain('warning: --skip-checks');
    expect(result.json.checks).toBeNull();
  });

  it('a commit pushed by hand survives the next refresh: refused (3), the commit named, still on the branch', async () => {
    hand = pushByHand(w.fork, 'Rename a variable as the review asked');
    const human = await runCli(['pr', '--push', '--fork', w.fork, '--skip-checks'], { cwd: w.project, env: w.env });
    expect(human.code).toBe(3);
    expect(human.stderr).toContain(
      `${hand.slice(0, 12)} Rename a variable as the review asked (Fixture <fixture@example.invalid>)`,
    );
    expect(human.stderr).toContain('--force');
    const result = await w.pr('--skip-checks');
    expect(result.code).toBe(3);
    expect(result.json.error).toMatchObject({ code: 'BRANCH_MOVED', details: { tip: hand, total: 1 } });
    expect(result.json.error.details.commits).toEqual([
      { commit: hand, author: 'Fixture <fixture@example.invalid>', subject: 'Rename a variable as the review asked' },
    ]);
    expect(w.forkRefs()[BRANCH]).toBe(hand);
  });

  it('the same from a fresh clone with a new workdir, as in CI: refused, the commit still there', async () => {
    const fresh = await cloneProject(w.upstream, w.env);
    const file = path.join(fresh.project, 'templates/mlx/backend/metal/storage_view.cpp');
    writeFileSync(file, `${readFileSync(file, 'utf8')}// v2\n`);
    expect((await runCli(['apply'], { cwd: fresh.project, env: w.env })).code).toBe(0);
    const result = await runCli(['pr', '--push', '--fork', w.fork, '--json', '--skip-checks'], {
      cwd: fresh.project,
      env: w.env,
    });
    expect(result.code).toBe(3);
    expect(result.json.error).toMatchObject({ code: 'BRANCH_MOVED', details: { tip: hand } });
    expect(w.forkRefs()[BRANCH]).toBe(hand);
  });

  it('--force replaces it after keeping the tip under a backup ref on the fork, and prints how to get it back (which works)', async () => {
    const human = await runCli(['pr', '--push', '--fork', w.fork, '--skip-checks', '--force'], {
      cwd: w.project,
      env: w.env,
    });
    expect(human.code, human.stderr).toBe(0);
    const refs = w.forkRefs();
    const backups = Object.keys(refs).filter((r) => r.startsWith('refs/mlx-storage-pr/backup/mlx-storage-pr/'));
    expect(backups).toHaveLength(1);
    const backup = backups[0] as string;
    expect(refs[backup]).toBe(hand);
    expect(refs[BRANCH]).not.toBe(hand);
    // The lease follows the branch. Its id may equal the previous lease: the same content committed in the same second.
    expect(refs[BRANCH]).toBe(refs[LEASE]);
    expect(human.stdout).toMatch(/^updated: mlx-storage-pr on .*, [0-9a-f]{12} -> [0-9a-f]{12}$/m);
    expect(human.stdout).toContain(
      `kept the previous tip ${hand.slice(0, 12)} on the fork as ${backup}; get it back with:`,
    );

    // The printed commands, run as printed in a scratch repository, put the hand-made commit back.
    const restore = human.stdout
      .split('\n')
      .filter((l) => l.startsWith('  git '))
      .map((l) => l.trim());
    expect(restore).toEqual([
      `git fetch ${w.fork} ${backup}`,
      `git push --force ${w.fork} FETCH_HEAD:refs/heads/mlx-storage-pr`,
    ]);
    const scratch = tempDir('msp-restore-');
    git(scratch, 'init', '--quiet');
    for (const command of restore) git(scratch, ...command.split(' ').slice(1));
    expect(w.forkRefs()[BRANCH]).toBe(hand);
  });
});

describe('pr --push: a branch the tool never pushed to, and a dry run', () => {
  let w: World;
  beforeAll(async () => {
    w = await makeWorld();
  });

  it('--dry-run runs the checks and compares, pushes nothing: would-create', async () => {
    const before = w.forkRefs();
    const result = await w.pr('--dry-run', ...ONLY_PR_TEXT);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toMatchObject({ status: 'would-create', previous: null, backup: null });
    expect(result.json.checks).toHaveLength(3);
    expect(w.forkRefs()).toEqual(before);
  });

  it('an existing branch without the lease ref is refused (3), even with the same content; a new branch is created', async () => {
    git(w.fork, 'branch', 'review', w.upstream.sha);
    const before = w.forkRefs();
    const taken = await w.pr('--branch', 'review', '--skip-checks');
    expect(taken.code).toBe(3);
    expect(taken.json.error).toMatchObject({ code: 'BRANCH_NOT_PUSHED_BY_TOOL', details: { tip: w.upstream.sha } });
    expect(taken.json.error.hint).toContain('--branch');
    expect(w.forkRefs()).toEqual(before);

    const fresh = await w.pr('--branch', 'metal-storage-view', '--skip-checks');
    expect(fresh.json).toMatchObject({ status: 'created', branch: 'metal-storage-view' });
    expect(w.forkRefs()['refs/heads/metal-storage-view']).toBe(fresh.json.commit);
    expect(w.forkRefs()['refs/mlx-storage-pr/pushed/metal-storage-view']).toBe(fresh.json.commit);
    expect(w.forkRefs()['refs/heads/review']).toBe(w.upstream.sha);
  });

  it('a branch deleted on the fork (after a merge) is created again', async () => {
    git(w.fork, 'update-ref', '-d', 'refs/heads/metal-storage-view');
    const result = await w.pr('--branch', 'metal-storage-view', '--skip-checks');
    expect(result.json).toMatchObject({ status: 'created', previous: null });
  });

  it("takes author and committer from the user's git config ($HOME/.gitconfig) when no GIT_AUTHOR_* or GIT_COMMITTER_* variable is set", async () => {
    const home = tempDir('msp-home-');
    writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = Grace Hopper\n\temail = grace@example.invalid\n');
    const env = {
      ...w.env,
      HOME: home,
      GIT_AUTHOR_NAME: undefined,
      GIT_AUTHOR_EMAIL: undefined,
      GIT_COMMITTER_NAME: undefined,
      GIT_COMMITTER_EMAIL: undefined,
      EMAIL: undefined,
    };
    const result = await runCli(
      ['pr', '--push', '--fork', w.fork, '--branch', 'from-git-config', '--skip-checks', '--json'],
      { cwd: w.project, env },
    );
    expect(result.code, result.stderr).toBe(0);
    const grace = 'Grace Hopper <grace@example.invalid>';
    expect(result.json).toMatchObject({ status: 'created', author: grace, committer: grace });
    const pushed = w.forkRefs()['refs/heads/from-git-config'];
    expect(pushed).toBe(result.json.commit);
    const raw = git(w.fork, 'cat-file', 'commit', pushed!);
    expect(raw).toMatch(/^author Grace Hopper <grace@example\.invalid> \d+ [+-]\d{4}$/m);
    expect(raw).toMatch(/^committer Grace Hopper <grace@example\.invalid> \d+ [+-]\d{4}$/m);
  });

  it('an invalid branch name is a usage error (2)', async () => {
    const result = await w.pr('--branch', 'no..dots', '--skip-checks');
    expect(result.code).toBe(2);
    expect(result.json.error.code).toBe('USAGE');
  });
});

describe('pr --push: another push lands on the branch while the tool refreshes it', () => {
  /** A world whose branch the tool created, a template change to push, and someone's commit ready in their clone. */
  async function raceWorld() {
    const w = await makeWorld();
    const created = await w.pr('--skip-checks');
    expect(created.json.status).toBe('created');
    const file = path.join(w.project, 'templates/mlx/backend/metal/storage_view.cpp');
    writeFileSync(file, `${readFileSync(file, 'utf8')}// v2\n`);
    expect((await runCli(['apply'], { cwd: w.project, env: w.env })).code).toBe(0);
    const theirs = path.join(tempDir('msp-theirs-'), 'clone');
    git(path.dirname(theirs), 'clone', '--quiet', '--branch', 'mlx-storage-pr', w.fork, theirs);
    writeFileSync(path.join(theirs, 'REVIEW.md'), 'a fix made in the web editor\n');
    git(theirs, 'add', 'REVIEW.md');
    git(theirs, 'commit', '--quiet', '-m', 'Fix a typo in the docs');
    const their = git(theirs, 'rev-parse', 'HEAD').trim();
    const push = `unset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_PREFIX\nexec git -C '${theirs}' push --quiet --no-verify origin mlx-storage-pr\n`;
    const hook = (name: string, script: string) => {
      const file = path.join(w.checkout, '.git', 'hooks', name);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, `#!/bin/sh\n${script}`);
      chmodSync(file, 0o755);
    };
    return { w, first: created.json.commit as string, their, push, hook };
  }

  async function expectRefused(w: World, first: string, their: string) {
    const raced = await w.pr('--skip-checks');
    expect(raced.code, raced.stderr).toBe(3);
    expect(raced.json.error).toMatchObject({ code: 'BRANCH_MOVED', details: { tip: their } });
    expect(raced.json.error.message).toContain('moved after mlx-storage-pr read it');
    // Their commit is kept, and the lease ref did not move either: the push is atomic.
    expect(w.forkRefs()[BRANCH]).toBe(their);
    expect(w.forkRefs()[LEASE]).toBe(first);
    // The next run names it.
    const next = await w.pr('--skip-checks');
    expect(next.json.error).toMatchObject({ code: 'BRANCH_MOVED', details: { tip: their, total: 1 } });
    expect(next.json.error.details.commits[0].subject).toBe('Fix a typo in the docs');
  }

  it("between the fetch and the push (git's lease refuses it): refused (3), their commit kept, the lease ref not moved", async () => {
    const { w, first, their, push, hook } = await raceWorld();
    // git runs reference-transaction as the fetch records the fork's branch in the checkout: the other push
    // lands right after the tool has read the branch and before its own push starts.
    hook(
      'reference-transaction',
      `[ "$1" = committed ] || exit 0\ngrep -q ' refs/mlx-storage-pr/fork/heads/mlx-storage-pr$' || exit 0\n${push}`,
    );
    await expectRefused(w, first, their);
  });

  it('during the push (the fork refuses the stale update): refused (3), their commit kept, the lease ref not moved', async () => {
    const { w, first, their, push, hook } = await raceWorld();
    // git runs pre-push after it has read the fork's refs for the push and before it sends the update.
    hook('pre-push', push);
    await expectRefused(w, first, their);
  });
});

describe('pr --push: refusals before anything is pushed', () => {
  let w: World;
  let before: Record<string, string>;
  beforeAll(async () => {
    w = await makeWorld();
    before = w.forkRefs();
  });
  const run = (args: string[], env: Record<string, string> = {}) =>
    runCli(['pr', '--json', ...args], { cwd: w.project, env: { ...w.env, ...env } });

  it('the upstream repository in every URL form, through a remote, an insteadOf rule or the MLX source: refused (2)', async () => {
    const forms = [
      'https://github.com/ml-explore/mlx.git',
      'https://github.com/ml-explore/mlx',
      'https://github.com/ml-explore/mlx/',
      'https://github.com/ml-explore/mlx.git/',
      'HTTPS://GitHub.com/ML-Explore/MLX.GIT',
      'http://github.com/ml-explore/mlx',
      'https://www.github.com/ml-explore/mlx',
      'https://github.com:443/ml-explore/mlx.git',
      'https://github.com/ml-explore//mlx.git',
      'https://github.com/ml%2Dexplore/mlx.git',
      'ssh://git@github.com/ml-explore/mlx.git',
      'ssh://git@ssh.github.com:443/ml-explore/mlx.git',
      'git+ssh://git@github.com/ml-explore/mlx',
      'git://github.com/ml-explore/mlx.git',
      'git@github.com:ml-explore/mlx.git',
      'git@github.com:ml-explore/mlx',
      'git@github.com:ml-explore/mlx.git/',
      'git@GITHUB.COM:/ml-explore/mlx.git',
      'github.com:ml-explore/mlx.git',
      // The MLX source this project fetches from, as a path, its .git folder and a file URL.
      w.upstream.dir,
      path.join(w.upstream.dir, '.git'),
      `file://${w.upstream.dir}/`,
    ];
    git(w.checkout, 'remote', 'add', 'upstream', 'git@github.com:ml-explore/mlx.git');
    git(w.checkout, 'remote', 'add', 'sneaky', w.fork);
    git(w.checkout, 'remote', 'set-url', '--push', 'sneaky', 'https://github.com/ml-explore/mlx');
    git(w.checkout, 'config', 'url.https://github.com/ml-explore/.insteadOf', 'https://github.com/someone-else/');
    const refused: Record<string, unknown> = {};
    for (const form of [...forms, 'upstream', 'sneaky', 'https://github.com/someone-else/mlx.git']) {
      const result = await run(['--push', '--fork', form, '--skip-checks']);
      refused[form] = result.code === 2 && result.json.error.code === 'PUSH_TARGET_UPSTREAM' ? 'refused' : result.json;
    }
    expect(refused).toEqual(Object.fromEntries(Object.keys(refused).map((k) => [k, 'refused'])));
    const human = await runCli(['pr', '--push', '--fork', 'upstream', '--skip-checks'], { cwd: w.project, env: w.env });
    expect(human.stderr).toContain(
      'The remote upstream points to the upstream repository (https://github.com/ml-explore/mlx.git), not your fork.',
    );
    git(w.checkout, 'remote', 'remove', 'upstream');
    git(w.checkout, 'remote', 'remove', 'sneaky');
    git(w.checkout, 'config', '--remove-section', 'url.https://github.com/ml-explore/');
    expect(w.forkRefs()).toEqual(before);
  });

  it('a fork URL that carries a password or token: refused (2)', async () => {
    const result = await run([
      '--push',
      '--fork',
      'https://someone:ghp_secret@github.com/someone/mlx.git',
      '--skip-checks',
    ]);
    expect(result.code).toBe(2);
    expect(result.json.error.code).toBe('USAGE');
    expect(result.json.error.hint).toContain('GH_TOKEN');
    expect(JSON.stringify(result.json)).not.toContain('ghp_secret');
  });

  it('a token with a plain http fork on another machine: refused (2) before anything is pushed', async () => {
    const fork = 'http://git.example.invalid/someone/mlx.git';
    const result = await run(['--push', '--fork', fork, '--skip-checks'], { GH_TOKEN: 'ghp_secret' });
    expect(result.code).toBe(2);
    expect(result.json.error).toMatchObject({ code: 'USAGE' });
    expect(result.json.error.message).toContain(`${fork}: mlx-storage-pr does not send the token over plain http`);
    expect(JSON.stringify(result.json)).not.toContain('ghp_secret');
  });

  it('the commit message as shipped, with placeholders: refused (1), naming the file and line', async () => {
    copyFileSync(path.join(FIXTURES, 'pr', 'commit-message.txt'), path.join(w.project, 'pr', 'commit-message.txt'));
    const result = await run(['--push', '--fork', w.fork, '--skip-checks']);
    expect(result.code).toBe(1);
    expect(result.json.error.code).toBe('PR_TEXT_INCOMPLETE');
    expect(result.json.error.message).toContain('pr/commit-message.txt:1: TODO(user): subject line');
    expect(result.json.error.message).toContain('pr/commit-message.txt:3: TODO(user): body');
    writeFileSync(path.join(w.project, 'pr', 'commit-message.txt'), '\n\n');
    expect((await run(['--push', '--fork', w.fork, '--skip-checks'])).json.error.code).toBe('PR_TEXT_INCOMPLETE');
    writePrText(w.project);
  });

  it('no identity in the environment or the git config: refused (1)', async () => {
    const result = await run(['--push', '--fork', w.fork, '--skip-checks'], {
      GIT_AUTHOR_NAME: '',
      GIT_AUTHOR_EMAIL: '',
      GIT_COMMITTER_NAME: '',
      GIT_COMMITTER_EMAIL: '',
      EMAIL: '',
    });
    expect(result.code).toBe(1);
    expect(result.json.error.code).toBe('IDENTITY_MISSING');
    expect(result.json.error.hint).toContain('user.email');
  });

  it('edits in the checkout that are not in templates/ or patches/: refused (3), the edits kept', async () => {
    const file = path.join(w.checkout, 'mlx/backend/metal/storage_view.cpp');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, `${text}// mine\n`);
    const result = await run(['--push', '--fork', w.fork, '--skip-checks']);
    expect(result.code).toBe(3);
    expect(result.json.error).toMatchObject({
      code: 'DIRTY_CHECKOUT',
      details: { dirty: ['mlx/backend/metal/storage_view.cpp'] },
    });
    expect(readFileSync(file, 'utf8')).toBe(`${text}// mine\n`);
    writeFileSync(file, text);
  });

  it('a required check of verify that fails: refused (1) with the checks; --skip-checks pushes with a warning', async () => {
    writePrText(w.project, MESSAGE, '## Proposed changes\n\nA view.\n');
    const result = await run(['--push', '--fork', w.fork, ...ONLY_PR_TEXT]);
    expect(result.code).toBe(1);
    expect(result.json.error.code).toBe('CHECK_FAILED');
    expect(result.json.error.message).toContain('AI use disclosure');
    expect(
      (result.json.error.details.checks as Array<{ id: string; status: string }>).map((c) => `${c.id}: ${c.status}`),
    ).toEqual(['pr-files: pass', 'pr-placeholders: pass', 'pr-ai-disclosure: fail']);
    expect(w.forkRefs()).toEqual(before);
    writePrText(w.project);
  });

  it('templates/ changed since the last apply: refused (1, NOT_APPLIED)', async () => {
    const file = path.join(w.project, 'templates/mlx/backend/metal/storage_view.cpp');
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, `${text}// v3\n`);
    const result = await run(['--push', '--fork', w.fork, '--skip-checks']);
    expect(result.code).toBe(1);
    expect(result.json.error.code).toBe('NOT_APPLIED');
    writeFileSync(file, text);
  });

  it('without --push, or --push without --fork: a usage error (2); a fork that is not a remote, URL or folder too', async () => {
    expect((await run([])).json.error.code).toBe('USAGE');
    expect((await run(['--fork', w.fork])).code).toBe(2);
    expect((await run(['--push'])).code).toBe(2);
    const missing = await run(['--push', '--fork', 'no-such-remote', '--skip-checks']);
    expect(missing.code).toBe(2);
    expect(missing.json.error.hint).toContain('remote add');
    expect(w.forkRefs()).toEqual(before);
  });

  it("a fork that cannot be read: exit 5 (FORK_UNREACHABLE) with git's words", async () => {
    const nowhere = path.join(tempDir('msp-nowhere-'), 'empty');
    mkdirSync(nowhere);
    const result = await run(['--push', '--fork', nowhere, '--skip-checks']);
    expect(result.code).toBe(5);
    expect(result.json.error.code).toBe('FORK_UNREACHABLE');
    expect(result.json.error.message).toContain('not appear to be a git repository');
  });
});

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

describe('pr --push: the token', () => {
  it('reaches git as a header for the fork (the HTTP server saw it) and appears in no output, --json, log or git file', async () => {
    const token = 'ghp_TOKEN1234567890abcdefSECRET';
    const w = await makeWorld({ GH_TOKEN: token });
    const server = await startGitHttpServer(
      path.dirname(w.fork),
      `Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`,
    );
    try {
      const url = `${server.url}/${path.basename(w.fork)}`;
      const runs: CliResult[] = [];
      for (const args of [['--json'], ['--verbose'], ['--json', '--verbose']]) {
        runs.push(
          await runCli(['pr', '--push', '--fork', url, '--skip-checks', ...args], { cwd: w.project, env: w.env }),
        );
      }
      // A refusal, whose message quotes git: still no token.
      pushByHand(w.fork, 'A change by hand');
      runs.push(
        await runCli(['pr', '--push', '--fork', url, '--skip-checks', '--json', '--verbose'], {
          cwd: w.project,
          env: w.env,
        }),
      );
      expect(runs.map((r) => r.code)).toEqual([0, 0, 0, 3]);
      expect(runs[0]?.json.status).toBe('created');
      expect(runs[1]?.stdout).toMatch(/^unchanged: /);
      // The fork answered only requests that carried the token; without it nothing could have been pushed.
      expect(server.authorizations.length).toBeGreaterThan(0);
      expect(new Set(server.authorizations)).toEqual(
        new Set([`Basic ${Buffer.from(`x-access-token:${token}`).toString('base64')}`]),
      );
      const encoded = Buffer.from(`x-access-token:${token}`).toString('base64');
      for (const r of runs) {
        for (const text of [r.stdout, r.stderr]) {
          expect(text).not.toContain(token);
          expect(text).not.toContain(encoded);
        }
      }
      for (const file of [...filesUnder(path.join(w.checkout, '.git')), ...filesUnder(w.fork)]) {
        const bytes = readFileSync(file);
        expect(bytes.includes(token), file).toBe(false);
        expect(bytes.includes(encoded), file).toBe(false);
      }
      expect(readFileSync(path.join(w.checkout, '.git', 'config'), 'utf8')).not.toMatch(/extraheader|token/i);
    } finally {
      await server.close();
    }
  });

  it('without the token the HTTP fork refuses, and the error says which token to set', async () => {
    const w = await makeWorld();
    const server = await startGitHttpServer(path.dirname(w.fork), 'Basic nothing-matches');
    try {
      const result = await runCli(
        ['pr', '--push', '--fork', `${server.url}/${path.basename(w.fork)}`, '--skip-checks', '--json'],
        { cwd: w.project, env: w.env },
      );
      expect(result.code).toBe(5);
      expect(result.json.error.code).toBe('FORK_UNREACHABLE');
      expect(result.json.error.hint).toContain('GH_TOKEN');
    } finally {
      await server.close();
    }
  });
});

const hasTools = ['/usr/bin/cmake', '/usr/include/doctest/doctest.h', '/usr/lib/cmake/doctest/doctest.cmake'].every(
  existsSync,
);
const toolsReason = 'skipped: needs cmake, a C++ compiler and doctest-dev (sudo apt-get install cmake g++ doctest-dev)';
if (!hasTools) console.warn(`pr with the build checks: ${toolsReason}`);

describe.skipIf(!hasTools)(
  hasTools
    ? "pr --push with verify's build checks on a CMake + doctest fixture"
    : `pr with the build checks (${toolsReason})`,
  () => {
    let upstream: { dir: string; sha: string };
    let project: string;
    let fork: string;
    let env: Record<string, string>;
    const write = (file: string, text: string) => {
      mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
      writeFileSync(path.join(project, file), text);
    };
    const pr = (...extra: string[]) =>
      runCli(['pr', '--push', '--fork', fork, '--offline', '--json', '--skip', 'format', 'metal-typecheck', ...extra], {
        cwd: project,
        env,
      });

    beforeAll(async () => {
      upstream = makeUpstream('cmake-project/upstream');
      project = makeProject(upstream.sha, 'cmake-project/project');
      writePrText(project);
      fork = path.join(tempDir('msp-fork-'), 'mlx.git');
      git(path.dirname(fork), 'clone', '--quiet', '--bare', upstream.dir, fork);
      env = {
        HOME: tempDir('msp-home-'),
        GIT_CONFIG_NOSYSTEM: '1',
        ...IDENTITY,
        MLX_REPO: upstream.dir,
        MLX_STORAGE_PR_CACHE: tempDir('msp-cache-'),
        CCACHE_DIR: ccacheDir(),
      };
      expect((await runCli(['apply'], { cwd: project, env })).code).toBe(0);
    });

    it('refuses the push while a build check fails: the new test passes without the implementation (1)', async () => {
      const tested = await runCli(['test', '--offline', '--json'], { cwd: project, env });
      expect(tested.code, tested.stderr).toBe(0);
      const result = await pr();
      expect(result.code, result.stderr).toBe(1);
      expect(result.json.error.code).toBe('CHECK_FAILED');
      const checks = result.json.error.details.checks as Array<{ id: string; status: string; detail: string }>;
      // The suite's results are the ones `test` saved for this series; the check without the implementation ran.
      expect(checks.find((c) => c.id === 'linux-build')?.detail).toContain('saved results');
      expect(checks.find((c) => c.id === 'tests-fail-without-implementation')).toMatchObject({ status: 'fail' });
      expect(refsOf(fork)['refs/heads/mlx-storage-pr']).toBeUndefined();
    });

    it('with an implementation the new test needs, builds what has no saved results, then pushes; the next run reuses that run, and with --recheck reads only saved results', async () => {
      addMulImplementation(project);
      write('templates/tests/new_tests.cpp', MUL_TEST);
      expect((await runCli(['apply'], { cwd: project, env })).code).toBe(0);
      const pushed = await pr();
      expect(pushed.code, pushed.stderr).toBe(0);
      expect(pushed.json.status).toBe('created');
      const checks = pushed.json.checks as Array<{ id: string; status: string; detail: string }>;
      expect(checks.find((c) => c.id === 'linux-build')?.detail).not.toContain('saved results');
      expect(checks.find((c) => c.id === 'tests-fail-without-implementation')?.status).toBe('pass');

      const again = await pr();
      expect(again.json.status).toBe('unchanged');
      expect(again.json.checksReused).toMatchObject({ command: 'pr' });
      expect(again.json.checks).toEqual(checks);
      expect(again.stderr).not.toMatch(/Running `(cmake|ninja)/);

      const rechecked = await pr('--recheck');
      expect(rechecked.json).toMatchObject({ status: 'unchanged', checksReused: null });
      const saved = rechecked.json.checks as Array<{ id: string; detail: string }>;
      expect(saved.find((c) => c.id === 'linux-build')?.detail).toContain('saved results');
      expect(saved.find((c) => c.id === 'tests-fail-without-implementation')?.detail).toContain('saved result');
      expect(rechecked.stderr).not.toMatch(/Running `(cmake|ninja)/);
    });
  },
);

describe('pr --push: a review fix pushed by hand, brought into the series as the refusal says', () => {
  it('fetch and cherry-pick (the commands in the hint), export, apply, then --force: the fix is in templates/ and on the fork', async () => {
    const w = await makeWorld();
    expect((await w.pr('--skip-checks')).json.status).toBe('created');
    // A reviewer's fix, made on the fork's branch by hand.
    const clone = path.join(tempDir('msp-review-'), 'clone');
    git(path.dirname(clone), 'clone', '--quiet', '--branch', 'mlx-storage-pr', w.fork, clone);
    const file = 'mlx/backend/metal/storage_view.cpp';
    writeFileSync(path.join(clone, file), `${readFileSync(path.join(clone, file), 'utf8')}// Reviewed.\n`);
    git(clone, 'commit', '--quiet', '-am', 'Note the review');
    git(clone, 'push', '--quiet', 'origin', 'mlx-storage-pr');
    const hand = git(clone, 'rev-parse', 'HEAD').trim();

    const refused = await w.pr('--skip-checks');
    expect(refused.code).toBe(3);
    const commands = [...(refused.json.error.hint as string).matchAll(/`(git -C [^`]+)`/g)].map((m) => m[1] as string);
    expect(commands).toHaveLength(2);
    for (const command of commands) await sh(command, { env: w.env });
    const exported = await runCli(['export', '--json'], { cwd: w.project, env: w.env });
    expect(exported.code, exported.stderr).toBe(0);
    expect(readFileSync(path.join(w.project, 'templates', file), 'utf8')).toMatch(/\/\/ Reviewed\.\n$/);
    expect((await runCli(['apply'], { cwd: w.project, env: w.env })).code).toBe(0);

    const forced = await w.pr('--skip-checks', '--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.json.status).toBe('updated');
    const tip = w.forkRefs()[BRANCH] as string;
    expect(git(w.fork, 'show', `${tip}:${file}`)).toMatch(/\/\/ Reviewed\.\n$/);
    expect(git(w.fork, 'rev-parse', `${tip}^`).trim()).toBe(w.upstream.sha);
    expect(Object.entries(w.forkRefs()).find(([ref]) => ref.includes('/backup/'))?.[1]).toBe(hand);
  });
});

describe("pr --push: a passing run of verify's checks with the same inputs stands in for them", () => {
  let w: World;
  /** Each call of the compiler the Metal type-check asks for (CLANGXX), one line per call: the checks ran. */
  let calls: string;
  // The PR text checks, and the Metal type-check, which asks CLANGXX for its version (this one fails, so the check is
  // not checked and, as nobody asked for it, not required): its calls show whether the checks ran.
  const CHECKS = ['--skip', 'format', 'docs', 'build'];
  const ran = () => (existsSync(calls) ? readFileSync(calls, 'utf8').split('\n').filter(Boolean).length : 0);
  const verify = (...args: string[]) => runCli(['verify', '--json', ...args], { cwd: w.project, env: w.env });

  beforeAll(async () => {
    const bin = tempDir('msp-clang-');
    calls = path.join(bin, 'calls');
    const clang = path.join(bin, 'clang++');
    writeFileSync(clang, `#!/bin/sh\necho "$*" >> '${calls}'\nexit 1\n`);
    chmodSync(clang, 0o755);
    w = await makeWorld({ CLANGXX: clang });
  });

  it('verify passes; then pr --push reuses its result, says so, and runs no check', async () => {
    const verified = await verify(...CHECKS);
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.json.ready).toBe(true);
    const afterVerify = ran();
    expect(afterVerify).toBeGreaterThan(0);

    const result = await w.pr(...CHECKS);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json.status).toBe('created');
    expect(result.json.checksReused).toMatchObject({
      command: 'verify',
      inputs: expect.stringMatching(/^[0-9a-f]{12}$/),
    });
    expect(Date.parse(result.json.checksReused.at as string)).not.toBeNaN();
    expect(result.json.checks).toEqual(verified.json.checks);
    expect(result.json.skipped).toEqual(verified.json.skipped);
    expect(ran()).toBe(afterVerify);

    const human = await runCli(['pr', '--push', '--fork', w.fork, ...CHECKS], { cwd: w.project, env: w.env });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain(
      `  verify's checks: 3 passed (the result of verify at ${result.json.checksReused.at} for the same inputs, ${result.json.checksReused.inputs}; --recheck runs them again), left out (--skip): `,
    );
    expect(ran()).toBe(afterVerify);
  });

  it('--recheck runs them; a run of pr that passes is saved in turn', async () => {
    const before = ran();
    const result = await w.pr(...CHECKS, '--recheck');
    expect(result.code, result.stderr).toBe(0);
    expect(result.json.checksReused).toBeNull();
    expect(ran()).toBeGreaterThan(before);
    const human = await runCli(['pr', '--push', '--fork', w.fork, ...CHECKS, '--recheck'], {
      cwd: w.project,
      env: w.env,
    });
    expect(human.stdout).toMatch(/^ {2}verify's checks: 3 passed, left out \(--skip\): /m);

    const after = ran();
    const again = await w.pr(...CHECKS);
    expect(again.json.checksReused).toMatchObject({ command: 'pr' });
    expect(ran()).toBe(after);
  });

  it('another --skip, or another option the checks read, runs them', async () => {
    const before = ran();
    const other = await w.pr('--skip', 'format', 'docs', 'build', 'pr-ai-disclosure');
    expect(other.code, other.stderr).toBe(0);
    expect(other.json.checksReused).toBeNull();
    expect(ran()).toBeGreaterThan(before);

    const next = ran();
    const offline = await w.pr(...CHECKS, '--offline');
    expect(offline.code, offline.stderr).toBe(0);
    expect(offline.json.checksReused).toBeNull();
    expect(ran()).toBeGreaterThan(next);

    // The compiler flags of the environment change the build: the checks run.
    expect((await w.pr(...CHECKS, '--offline')).json.checksReused).toMatchObject({ command: 'pr' });
    const flagged = ran();
    const flags = await runCli(['pr', '--push', '--fork', w.fork, '--json', ...CHECKS, '--offline'], {
      cwd: w.project,
      env: { ...w.env, CXXFLAGS: '-O0' },
    });
    expect(flags.code, flags.stderr).toBe(0);
    expect(flags.json.checksReused).toBeNull();
    expect(ran()).toBeGreaterThan(flagged);
  });

  it('after a pr/ text changes, or a template changes and is applied: the checks run again', async () => {
    // One run is saved, the last that passed: here --offline's, so this one runs and is saved, and the next reuses it.
    expect((await w.pr(...CHECKS)).json.checksReused).toBeNull();
    expect((await w.pr(...CHECKS)).json.checksReused).toMatchObject({ command: 'pr' });
    writePrText(w.project, MESSAGE, `${DESCRIPTION}\nTested on Linux.\n`);
    const before = ran();
    const text = await w.pr(...CHECKS);
    expect(text.code, text.stderr).toBe(0);
    expect(text.json.checksReused).toBeNull();
    expect(ran()).toBeGreaterThan(before);

    const file = path.join(w.project, 'templates/mlx/backend/metal/storage_view.cpp');
    writeFileSync(file, `${readFileSync(file, 'utf8')}// v2\n`);
    expect((await runCli(['apply'], { cwd: w.project, env: w.env })).code).toBe(0);
    const next = ran();
    const changed = await w.pr(...CHECKS);
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.json).toMatchObject({ status: 'updated', checksReused: null });
    expect(ran()).toBeGreaterThan(next);
  });

  it('a run that fails is never reused: each pr runs the checks again and refuses', async () => {
    // Asked for with --require-metal, the Metal type-check is required, and this compiler fails it.
    const failed = await verify(...CHECKS, '--require-metal');
    expect(failed.code).toBe(1);
    for (const _ of [1, 2]) {
      const before = ran();
      const refused = await w.pr(...CHECKS, '--require-metal');
      expect(refused.code).toBe(1);
      expect(refused.json.error.code).toBe('CHECK_FAILED');
      expect(ran()).toBeGreaterThan(before);
    }
  });

  it('--recheck with --skip-checks: a usage error (2)', async () => {
    const result = await w.pr('--recheck', '--skip-checks');
    expect(result.code).toBe(2);
    expect(result.json.error.message).toContain('--recheck');
  });
});
