/**
 * The process contract of every command: its exit code and the shape of its
 * `--json` object (keys, value types and the stable values: statuses, states,
 * error codes, check ids, paths), on the success paths and the documented
 * failure paths. Outputs are normalised first (test/support/contract.ts):
 * temp folders, commit ids, times and build keys become names, and prose
 * (messages, hints, details) becomes `<text>`, so wording can change freely
 * but nothing else can.
 *
 * Cases in one `describe` share a project and run in order, as a user's
 * commands would; a case's name says what it changes or the state it needs.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';

import { laneToolchain, makeMetalProject, makeMetalUpstream, skipName } from '../support/check-metal-fixtures.js';
import { byOutcome, gitOnlyPath, runJson, runTable, spawnJson, type Names, type Outcome } from '../support/contract.js';
import { makeExportProject, makeExportUpstream } from '../support/export-fixtures.js';
import { stage } from '../support/stages.js';
import { makeFormatProject, makeFormatUpstream } from '../support/format-fixtures.js';
import { makeWorld, MESSAGE, ONLY_PR_TEXT, pushByHand, writePrText, type World } from '../support/fork.js';
import { addMulImplementation, MUL_TEST } from '../support/mul-fixture.js';
import { editConfig, FIXTURES, git, makeProject, makeUpstream, REPO_ROOT, tempDir } from '../support/repos.js';

const COMMANDS = ['apply', 'status', 'reset', 'test', 'doctor', 'format', 'check-metal', 'verify'] as const;

const lane = await laneToolchain();
const freeGiB = (() => {
  const stats = statfsSync(os.tmpdir());
  return (stats.bavail * stats.bsize) / 2 ** 30;
})();
// `test --offline` needs every dependency from system packages; build steps are counted as Ninja counts them, the
// notes depend on ccache, and the disk check passes from 8 GiB free.
const hasBuildTools =
  [
    '/usr/bin/cmake',
    '/usr/bin/ninja',
    '/usr/bin/ccache',
    '/usr/include/doctest/doctest.h',
    '/usr/lib/cmake/doctest/doctest.cmake',
    '/usr/include/nlohmann/json.hpp',
    '/usr/include/fmt/format.h',
  ].every(existsSync) && freeGiB >= 8;
const buildToolsReason =
  'skipped: needs cmake, ninja, ccache, a C++ compiler, doctest-dev, nlohmann-json3-dev, libfmt-dev and 8 GiB free in the temp folder ' +
  '(sudo apt-get install cmake ninja-build ccache g++ doctest-dev nlohmann-json3-dev libfmt-dev)';

async function hasCMakeFormat(): Promise<boolean> {
  try {
    return (await execa('cmake-format', ['--version'])).stdout.trim() === '0.6.13';
  } catch {
    return false;
  }
}
const cmakeFormat = await hasCMakeFormat();
const cmakeFormatReason = 'skipped: needs cmake-format 0.6.13 on PATH (pip install cmakelang==0.6.13)';

const doctorReady = process.platform === 'linux' && freeGiB >= 8;
const doctorReason = 'skipped: the doctor checks pinned here are those of Linux with 8 GiB free in the temp folder';
const libraries = await execa('ldconfig', ['-p']).then(
  (result) => result.stdout,
  () => '',
);
// BLAS/LAPACK headers and libraries, found where doctor looks for them.
const hasBlas =
  existsSync('/usr/include/lapacke.h') &&
  ['/usr/include/cblas.h', '/usr/include/x86_64-linux-gnu/cblas.h', '/usr/include/aarch64-linux-gnu/cblas.h'].some(
    existsSync,
  ) &&
  /lib(open)?blas\.so/.test(libraries) &&
  /liblapack\.so/.test(libraries);
// Every tool doctor looks for, found the way doctor finds it.
const machineReady =
  doctorReady &&
  hasBuildTools &&
  lane.toolchain !== null &&
  ['/usr/bin/ninja', '/usr/bin/ccache'].every(existsSync) &&
  hasBlas;
const machineReason =
  'skipped: needs every tool doctor checks (cmake, g++, ninja, ccache, BLAS/LAPACK with ldconfig on PATH, clang-19 with libc++-19, the offline packages) and 8 GiB free';

/** A test name that says why the test skips when `ready` is false (and says it on stderr too). */
function withReason(name: string, ready: boolean, reason: string): string {
  if (ready) return name;
  console.warn(`${name}: ${reason}`);
  return `${name} (${reason})`;
}

/** Only the exit codes of a table. */
const codes = (out: Record<string, Outcome>) =>
  Object.fromEntries(Object.entries(out).map(([name, o]) => [name, o.code]));

describe('every command', () => {
  let upstream: { dir: string; sha: string };
  let fresh: string;
  const names = (project: string): Names => ({
    paths: { project, upstream: upstream.dir },
    shas: { pinned: upstream.sha },
  });

  beforeAll(() => {
    upstream = makeUpstream();
    fresh = makeProject(upstream.sha);
  });

  it('exits 2 on an unknown option, an unknown command, no command, an unknown --skip name and CMake arguments before --', async () => {
    const rows: Record<string, string[]> = Object.fromEntries(COMMANDS.map((c) => [c, [c, '--no-such-option']]));
    rows['(none)'] = [];
    rows['no-such-command'] = ['no-such-command'];
    rows['verify --skip no-such-check'] = ['verify', '--skip', 'no-such-check'];
    rows['test -DX=ON'] = ['test', '-DX=ON'];
    const out = await runTable(rows, (args) => runJson(args, { cwd: fresh, names: names(fresh) }));
    // Only the code is pinned: what --json prints for a usage error is not part of the contract yet.
    expect(codes(out)).toMatchSnapshot();
  });

  it('exits 7 with CONFIG_INVALID when the config is invalid, whatever the command', async () => {
    const broken = makeProject(upstream.sha);
    editConfig(broken, (c) => ((c['upstream'] as Record<string, unknown>)['commit'] = upstream.sha.slice(0, 12)));
    const rows = Object.fromEntries(COMMANDS.map((c) => [c, [c, '--mlx-repo', upstream.dir]]));
    expect(
      byOutcome(await runTable(rows, (args) => runJson(args, { cwd: broken, names: names(broken) }))),
    ).toMatchSnapshot();
  });

  it('exits 7 on a config that is not JSON, an unknown template variable, a series naming a missing patch and a path out of the checkout', async () => {
    const project = (edit: (dir: string) => void) => {
      const dir = makeProject(upstream.sha);
      edit(dir);
      return dir;
    };
    const cases = {
      'not JSON': project((dir) => writeFileSync(path.join(dir, 'mlx-storage-pr.config.json'), '{ "upstream": ')),
      'unknown variable': project((dir) =>
        writeFileSync(path.join(dir, 'templates/mlx/backend/metal/storage_view.cpp'), '#include "{{header_file}}"\n'),
      ),
      'series names a missing patch': project((dir) =>
        writeFileSync(path.join(dir, 'patches/series'), '0001-metal-cmake.patch\n0009-missing.patch\n'),
      ),
      'path escapes': project((dir) =>
        editConfig(dir, (c) => ((c['variables'] as Record<string, unknown>)['header_path'] = '../../outside.h')),
      ),
    };
    const out: Record<string, Outcome> = {};
    for (const [name, dir] of Object.entries(cases))
      out[name] = await runJson(['apply', '--mlx-repo', upstream.dir], { cwd: dir, names: names(dir) });
    expect(out).toMatchSnapshot();
  });

  it('before the first apply: nothing to show or reset, and the commands that need a checkout say so', async () => {
    const rows = {
      'apply --dry-run': ['apply', '--dry-run'],
      status: ['status'],
      reset: ['reset'],
      test: ['test', '--offline'],
      format: ['format'],
      verify: ['verify'],
    };
    // Only git on this PATH, so the result does not depend on the machine.
    const out = await runTable(rows, (args) =>
      runJson(args, { cwd: fresh, env: { PATH: gitOnlyPath() }, names: names(fresh) }),
    );
    expect(byOutcome(out)).toMatchSnapshot();
    expect(existsSync(path.join(fresh, '.work', 'mlx'))).toBe(false);
  });

  it('a workdir whose mlx/ is not a git checkout: exit 5 with CHECKOUT_INVALID (verify: checks not passing, 1), and the folder is left alone', async () => {
    const project = makeProject(upstream.sha);
    mkdirSync(path.join(project, '.work', 'mlx'), { recursive: true });
    writeFileSync(path.join(project, '.work', 'mlx', 'notes.txt'), 'mine\n');
    const rows = {
      apply: ['apply'],
      status: ['status'],
      reset: ['reset'],
      test: ['test', '--offline'],
      format: ['format'],
      verify: ['verify'],
    };
    const out = await runTable(rows, (args) =>
      runJson([...args, '--mlx-repo', upstream.dir], {
        cwd: project,
        env: { PATH: gitOnlyPath() },
        names: names(project),
      }),
    );
    expect(byOutcome(out)).toMatchSnapshot();
    expect(readFileSync(path.join(project, '.work', 'mlx', 'notes.txt'), 'utf8')).toBe('mine\n');
  });
});

describe("apply, status and reset through a checkout's life", () => {
  let upstream: { dir: string; sha: string };
  let project: string;
  let checkout: string;
  const run = (...args: string[]) =>
    runJson([...args, '--mlx-repo', upstream.dir], {
      cwd: project,
      names: { paths: { project, upstream: upstream.dir }, shas: { pinned: upstream.sha } },
    });
  const writeProject = (file: string, text: string) => writeFileSync(path.join(project, file), text);
  const writeCheckout = (file: string, text: string) => writeFileSync(path.join(checkout, file), text);

  beforeAll(() => {
    upstream = makeUpstream();
    project = makeProject(upstream.sha);
    checkout = path.join(project, '.work', 'mlx');
  });
  // Each case starts from the state the case before it leaves (the stage of that name), made once.
  const folders = () => [project];
  const fresh = stage(folders, () => undefined);
  const applied = stage(folders, async () => {
    await fresh();
    return run('apply');
  });
  const editedTemplate = stage(folders, async () => {
    await applied();
    writeProject('templates/mlx/backend/metal/storage_view.cpp', '// v2\n');
    const head = git(checkout, 'rev-parse', 'HEAD');
    const out = { status: await run('status'), dryRun: await run('apply', '--dry-run') };
    return { out, head, after: git(checkout, 'rev-parse', 'HEAD') };
  });
  const dirty = stage(folders, async () => {
    await editedTemplate();
    writeCheckout('mlx/backend/metal/storage_view.cpp', '// my edit\n');
    return { apply: await run('apply'), status: await run('status') };
  });
  const forced = stage(folders, async () => {
    await dirty();
    return run('apply', '--force');
  });
  const foreignHead = stage(folders, async () => {
    await forced();
    writeCheckout('mine.txt', 'x\n');
    git(checkout, 'add', 'mine.txt');
    git(checkout, 'commit', '--quiet', '-m', 'my commit');
    writeProject('templates/mlx/backend/metal/storage_view.cpp', '// v3\n');
    return { apply: await run('apply'), status: await run('status') };
  });
  const forcedForeign = stage(folders, async () => {
    await foreignHead();
    return run('apply', '--force');
  });
  const reset = stage(folders, async () => {
    await forcedForeign();
    writeCheckout('mlx/backend/metal/storage_view.h', '// edited\n');
    return { reset: await run('reset'), again: await run('reset'), status: await run('status') };
  });

  it('apply: fetches, applies and reports what it changed (0, applied)', async () => {
    expect(await applied()).toMatchSnapshot();
  });

  it('apply again: nothing to do (0, already-applied); status: applied', async () => {
    await applied();
    expect({ apply: await run('apply'), status: await run('status') }).toMatchSnapshot();
  });

  it('after a template edit: status says outdated, apply --dry-run lists the change and writes nothing (0, would-apply)', async () => {
    const { out, head, after } = await editedTemplate();
    expect(out).toMatchSnapshot();
    expect(after).toBe(head);
  });

  it('apply refuses uncommitted edits in a file it would change (3, DIRTY_CHECKOUT); status lists them', async () => {
    expect(await dirty()).toMatchSnapshot();
  });

  it('apply --force saves the edits and applies (0, applied, saved)', async () => {
    expect(await forced()).toMatchSnapshot();
  });

  it('apply refuses a HEAD that is neither pinned nor applied (3, FOREIGN_HEAD); status says foreign-head', async () => {
    expect(await foreignHead()).toMatchSnapshot();
  });

  it('apply --force keeps the foreign HEAD in a backup ref (0, applied, saved.headBackup)', async () => {
    expect(await forcedForeign()).toMatchSnapshot();
  });

  it('reset saves edits and returns to the pinned commit (0, reset); again: already-clean; status: not-applied', async () => {
    expect(await reset()).toMatchSnapshot();
  });

  it('a patch that does not apply: apply exits 4 with PATCH_CONFLICT and the conflicts; status lists them', async () => {
    await reset();
    const patch = path.join(project, 'patches', '0002-docs.patch');
    const original = readFileSync(patch, 'utf8');
    writeFileSync(patch, original.replace(' Text about operations.', ' Text about something else.'));
    const before = git(checkout, 'rev-parse', 'HEAD');
    expect({
      apply: await run('apply'),
      '3way': await run('apply', '--3way'),
      status: await run('status'),
    }).toMatchSnapshot();
    expect(git(checkout, 'rev-parse', 'HEAD')).toBe(before);
    writeFileSync(patch, original);
  });
});

describe('apply and status when the MLX source or the pin changes', () => {
  let upstream: { dir: string; sha: string };
  let project: string;
  let moved: string;
  const names = (): Names => ({ paths: { project, upstream: upstream.dir }, shas: { pinned: upstream.sha, moved } });
  const run = (...args: string[]) => runJson(args, { cwd: project, names: names() });

  beforeAll(() => {
    upstream = makeUpstream();
    project = makeProject(upstream.sha);
    moved = '';
  });

  it('exits 5 when the source does not exist (SOURCE_UNREACHABLE) or lacks the pinned commit (COMMIT_NOT_FOUND)', async () => {
    const absent = '0123456789abcdef0123456789abcdef01234567';
    const other = makeProject(absent);
    const out = {
      missing: await run('apply', '--mlx-repo', path.join(upstream.dir, 'no-such-folder')),
      'no commit': await runJson(['apply', '--mlx-repo', upstream.dir], {
        cwd: other,
        names: { paths: { project: other, upstream: upstream.dir }, shas: { absent } },
      }),
    };
    expect(out).toMatchSnapshot();
    expect(existsSync(path.join(project, '.work', 'mlx'))).toBe(false);
  });

  it('after the pin moves: status says the commit is missing; apply fetches it and exits 4 (upstream_changed); --3way merges (0)', async () => {
    expect((await run('apply', '--mlx-repo', upstream.dir)).code).toBe(0);
    const cmake = path.join(upstream.dir, 'mlx/backend/metal/CMakeLists.txt');
    writeFileSync(cmake, readFileSync(cmake, 'utf8').replace('/allocator.cpp', '/allocators.cpp'));
    git(upstream.dir, 'commit', '--quiet', '-am', 'rename allocator');
    moved = git(upstream.dir, 'rev-parse', 'HEAD').trim();
    editConfig(project, (c) => ((c['upstream'] as Record<string, unknown>)['commit'] = moved));
    const out = {
      'status before': await run('status'),
      apply: await run('apply', '--mlx-repo', upstream.dir),
      'status after fetch': await run('status'),
      '3way': await run('apply', '--3way', '--mlx-repo', upstream.dir),
      'status after 3way': await run('status'),
    };
    expect(out).toMatchSnapshot();
  });
});

describe('the workdir lock', () => {
  let upstream: { dir: string; sha: string };
  let project: string;

  beforeAll(async () => {
    upstream = makeUpstream();
    project = makeProject(upstream.sha);
    expect((await runJson(['apply', '--mlx-repo', upstream.dir], { cwd: project })).code).toBe(0);
  });

  it('apply (even --dry-run) and reset exit 6 with LOCKED while a live process holds the workdir; status still reads (0)', async () => {
    const lock = path.join(project, '.work', '.lock');
    // This test's own process is alive, so the lock is held.
    writeFileSync(lock, JSON.stringify({ pid: process.pid, command: 'test' }));
    const rows = {
      apply: ['apply'],
      'apply --force': ['apply', '--force'],
      'apply --dry-run': ['apply', '--dry-run'],
      reset: ['reset'],
      status: ['status'],
    };
    const out = await runTable(rows, (args) =>
      runJson(args, {
        cwd: project,
        names: { paths: { project, upstream: upstream.dir }, shas: { pinned: upstream.sha }, vary: ['pid'] },
      }),
    );
    rmSync(lock);
    expect(byOutcome(out)).toMatchSnapshot();
  });
});

describe('pr: the branch on the fork', () => {
  let w: World;
  const names = (): Names => ({
    paths: { project: w.project, upstream: w.upstream.dir, fork: w.fork },
    shas: { pinned: w.upstream.sha },
  });
  const run = (...args: string[]) => runJson(['pr', ...args], { cwd: w.project, env: w.env, names: names() });
  const push = (...args: string[]) => run('--push', '--fork', w.fork, ...args);

  beforeAll(async () => {
    w = await makeWorld();
  });
  // Each case starts from the state the case before it leaves (the stage of that name), made once.
  const folders = () => [w.project, w.fork, w.upstream.dir];
  const world = stage(folders, () => undefined);
  const created = stage(folders, async () => {
    await world();
    return { created: await push(...ONLY_PR_TEXT), unchanged: await push('--skip-checks') };
  });
  const refused = stage(folders, async () => {
    await created();
    const out: Record<string, Outcome> = {};
    out['upstream'] = await run('--push', '--fork', 'git@github.com:ml-explore/mlx.git', '--skip-checks');
    writePrText(w.project, 'TODO(user): subject\n');
    out['placeholders'] = await push('--skip-checks');
    writePrText(w.project, MESSAGE, '## Proposed changes\n\nA view.\n');
    out['failing check'] = await push(...ONLY_PR_TEXT);
    writePrText(w.project);
    const file = path.join(w.checkout, 'README.md');
    writeFileSync(file, 'mine\n');
    out['edits in the checkout'] = await push('--skip-checks');
    rmSync(file);
    git(w.fork, 'branch', 'taken', w.upstream.sha);
    out['never pushed by the tool'] = await push('--branch', 'taken', '--skip-checks');
    return out;
  });

  it('usage errors (2): no --push, no --fork, an unknown option; before apply (1, NOT_APPLIED); an invalid config (7)', async () => {
    await world();
    const fresh = makeProject(w.upstream.sha);
    const broken = makeProject(w.upstream.sha);
    editConfig(broken, (c) => ((c['upstream'] as Record<string, unknown>)['commit'] = 'abc'));
    const out = {
      'no --push': await run('--fork', w.fork),
      'no --fork': await run('--push'),
      '--no-such-option': await run('--push', '--no-such-option'),
      'before apply': await runJson(['pr', '--push', '--fork', w.fork], { cwd: fresh, env: w.env, names: names() }),
      'invalid config': await runJson(['pr', '--push', '--fork', w.fork], { cwd: broken, env: w.env, names: names() }),
    };
    expect(codes(out)).toMatchSnapshot();
    expect(
      byOutcome({ 'no --push': out['no --push'], 'no --fork': out['no --fork'], 'before apply': out['before apply'] }),
    ).toMatchSnapshot();
  });

  it('created, then unchanged (0)', async () => {
    expect(await created()).toMatchSnapshot();
  });

  it('refused before pushing: the upstream repository (2), placeholders (1), edits in the checkout (3), a failing check (1), a branch never pushed by the tool (3)', async () => {
    expect(await refused()).toMatchSnapshot();
  });

  it('a commit pushed by hand: refused (3) naming it; --force (0) keeps it under a backup ref', async () => {
    await refused();
    const file = path.join(w.project, 'templates/mlx/backend/metal/storage_view.cpp');
    writeFileSync(file, `${readFileSync(file, 'utf8')}// v2\n`);
    expect((await runJson(['apply'], { cwd: w.project, env: w.env })).code).toBe(0);
    const hand = pushByHand(w.fork, 'A change made by hand');
    const withHand = (...args: string[]) =>
      runJson(['pr', '--push', '--fork', w.fork, ...args], {
        cwd: w.project,
        env: w.env,
        names: { ...names(), shas: { pinned: w.upstream.sha, hand } },
      });
    expect({
      refused: await withHand('--skip-checks'),
      forced: await withHand('--skip-checks', '--force'),
    }).toMatchSnapshot();
  });
});

// The test fixture's series gains an implementation and a test of it (addMulImplementation, MUL_TEST),
// so that verify's "new tests fail without the implementation" can pass.
describe.skipIf(!hasBuildTools)(
  withReason('test and verify on the CMake + doctest fixture', hasBuildTools, buildToolsReason),
  () => {
    let upstream: { dir: string; sha: string };
    let project: string;
    let env: Record<string, string>;
    const names = (): Names => ({
      paths: { project, upstream: upstream.dir, cache: env['MLX_STORAGE_PR_CACHE'] as string },
      shas: { pinned: upstream.sha },
      vary: ['buildSeconds', 'buildSteps', 'pid', 'errors', 'compiler.version'],
    });
    const run = (...args: string[]) => runJson(args, { cwd: project, env, names: names() });
    const write = (file: string, text: string) => {
      mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
      writeFileSync(path.join(project, file), text);
    };

    beforeAll(async () => {
      // With MLX's .clang-format and pre-commit pins, so that the formatting checks of verify can pass.
      upstream = makeUpstream('cmake-project/upstream', (dir) => {
        for (const file of ['.clang-format', '.pre-commit-config.yaml'])
          copyFileSync(path.join(FIXTURES, 'format', 'upstream', file), path.join(dir, file));
      });
      project = makeProject(upstream.sha, 'cmake-project/project');
      env = { MLX_STORAGE_PR_CACHE: tempDir('msp-cache-'), MLX_REPO: upstream.dir };
      addMulImplementation(project);
      write('templates/tests/new_tests.cpp', MUL_TEST);
      expect((await run('apply')).code).toBe(0);
    });
    // Each case starts from the state it names (a stage), made once: applied, built, or built with a failing test.
    // The run's ccache is not part of a state: it only makes builds faster.
    const folders = () => [project, env['MLX_STORAGE_PR_CACHE'] as string];
    const applied = stage(folders, () => undefined);
    const built = stage(folders, async () => {
      await applied();
      return run('test', '--offline');
    });
    const failing = stage(folders, async () => {
      await built();
      write('templates/tests/new_tests.cpp', MUL_TEST.replace('42', '43'));
      expect((await run('apply')).code).toBe(0);
      return run('test', '--offline');
    });

    it('test without --offline: the download hosts cannot be reached (1, DOWNLOADS_UNREACHABLE, before CMake runs)', async () => {
      await applied();
      expect(await run('test')).toMatchSnapshot();
    });

    it('test --offline: builds, runs and classifies every case against the baseline (0)', async () => {
      expect(await built()).toMatchSnapshot();
    });

    it('test --tests runs a subset (0); a filter that matches nothing is a usage error (2, USAGE, close names); --no-baseline counts the known failure as new (8)', async () => {
      await built();
      const out = {
        '--tests': await run('test', '--offline', '--tests', '*mul*'),
        '--tests (no match)': await run('test', '--offline', '--tests', 'no such case*'),
        '--no-baseline': await run('test', '--offline', '--no-baseline'),
      };
      expect(out).toMatchSnapshot();
    });

    it('test while another run holds the workdir (6, LOCKED)', async () => {
      await built();
      const lock = path.join(project, '.work', '.lock');
      writeFileSync(lock, JSON.stringify({ pid: process.pid, command: 'test' }));
      const out = await run('test', '--offline');
      rmSync(lock);
      expect(out).toMatchSnapshot();
    });

    it('test with no build tools on PATH (9, TOOL_MISSING)', async () => {
      await built();
      expect(
        await spawnJson(['test', '--offline'], { cwd: project, env: { ...env, PATH: gitOnlyPath() }, names: names() }),
      ).toMatchSnapshot();
    });

    it.skipIf(!cmakeFormat)(
      withReason('verify --offline --skip pr-text: every check passes (0, ready)', cmakeFormat, cmakeFormatReason),
      async () => {
        await built();
        expect(await run('verify', '--offline', '--skip', 'pr-text')).toMatchSnapshot();
      },
    );

    it('a failing new test: test exits 8 (new-test-failed)', async () => {
      expect(await failing()).toMatchSnapshot();
    });

    it.skipIf(!cmakeFormat)(
      withReason('a failing new test: verify is not ready (1, linux-build fails)', cmakeFormat, cmakeFormatReason),
      async () => {
        await failing();
        expect(await run('verify', '--offline', '--skip', 'pr-text')).toMatchSnapshot();
      },
    );

    it('a compile error: test exits 1 (BUILD_FAILED)', async () => {
      await failing();
      write('templates/tests/new_tests.cpp', `${MUL_TEST}\nint broken( {\n`);
      expect((await run('apply')).code).toBe(0);
      expect(await run('test', '--offline')).toMatchSnapshot();
    });

    // verify takes --upstream-ci as pr does: its build items then build as MLX's Linux CI does.
    it("verify --upstream-ci: the build items build as MLX's Linux CI (0); with --sanitize it is a usage error (2, USAGE)", async () => {
      await built();
      const skip = ['--skip', 'format', 'metal-typecheck', 'docs', 'pr-text', 'mutants'];
      expect({
        'verify --upstream-ci': await run('verify', '--offline', '--upstream-ci', ...skip),
        'with --sanitize': await run('verify', '--offline', '--upstream-ci', '--sanitize', 'asan', ...skip),
      }).toMatchSnapshot();
      // The build item's tree is the Debug one MLX's Linux CI builds, not the Release one of `test`.
      expect(readdirSync(path.join(project, '.work')).filter((f) => /^build-debug-/.test(f))).toHaveLength(1);
    });
  },
);

// The twin also needs binutils' nm and objcopy (it weakens the stub's symbols in a copy of the library).
const hasTwinTools = hasBuildTools && ['/usr/bin/nm', '/usr/bin/objcopy'].every(existsSync);
const twinToolsReason = `${buildToolsReason}, and binutils (sudo apt-get install binutils)`;

describe.skipIf(!hasTwinTools)(
  withReason('test --metal-twin on the twin fixture', hasTwinTools, twinToolsReason),
  () => {
    let upstream: { dir: string; sha: string };
    let project: string;
    let env: Record<string, string>;
    const names = (): Names => ({
      paths: { project, upstream: upstream.dir, cache: env['MLX_STORAGE_PR_CACHE'] as string },
      shas: { pinned: upstream.sha },
      vary: ['buildSeconds', 'buildSteps', 'pid', 'errors', 'compiler.version'],
    });
    const run = (...args: string[]) => runJson(args, { cwd: project, env, names: names() });

    beforeAll(async () => {
      upstream = makeUpstream('twin/upstream');
      project = makeProject(upstream.sha, 'twin/project');
      env = { MLX_STORAGE_PR_CACHE: tempDir('msp-cache-'), MLX_REPO: upstream.dir };
      expect((await run('apply')).code).toBe(0);
    });

    it('test --offline --metal-twin: the suite against the baseline, and the Metal-only cases on the twin (0)', async () => {
      expect(await run('test', '--offline', '--metal-twin')).toMatchSnapshot();
    });

    it('test --metal-twin -- -DBUILD_SHARED_LIBS=ON: refused (2, USAGE)', async () => {
      expect(await run('test', '--offline', '--metal-twin', '--', '-DBUILD_SHARED_LIBS=ON')).toMatchSnapshot();
    });
  },
);

describe.skipIf(!cmakeFormat)(
  withReason('format and verify on the mis-formatted fixture', cmakeFormat, cmakeFormatReason),
  () => {
    let upstream: { dir: string; sha: string };
    let project: string;
    // Only git on this PATH, in the cases that use it: sphinx-build, clang and cmake-format are missing.
    let bare: { PATH: string };
    const run = (args: string[], env: Record<string, string | undefined> = {}) =>
      runJson(args, {
        cwd: project,
        env,
        names: { paths: { project, upstream: upstream.dir }, shas: { pinned: upstream.sha }, vary: ['diff', 'pid'] },
      });

    beforeAll(async () => {
      upstream = makeFormatUpstream();
      project = makeFormatProject(upstream.sha);
      bare = { PATH: gitOnlyPath() };
      expect((await run(['apply', '--mlx-repo', upstream.dir])).code).toBe(0);
    });
    // Each case starts from the state it names (a stage), made once: applied, or after format --fix.
    const applied = stage(
      () => [project],
      () => undefined,
    );
    const fixed = stage(
      () => [project],
      async () => {
        await applied();
        return {
          '--fix': await run(['format', '--fix']),
          again: await run(['format']),
          'no cmake-format': await run(['format'], bare),
        };
      },
    );

    it('format finds files to fix (1, CHECK_FAILED); without cmake-format the CMake file is not-checked', async () => {
      await applied();
      expect({ format: await run(['format']), 'no cmake-format': await run(['format'], bare) }).toMatchSnapshot();
    });

    it('verify reports every check and is not ready (1); --require-metal makes the Metal type-check required', async () => {
      await applied();
      expect({
        verify: await run(['verify'], bare),
        '--require-metal': await run(['verify', '--require-metal'], bare),
      }).toMatchSnapshot();
    });

    it('format --fix writes the fixes (0); then format is clean (0), and still exits 0 when cmake-format is missing', async () => {
      expect(await fixed()).toMatchSnapshot();
    });

    it('verify --skip leaves checks out and is ready when the rest pass (0)', async () => {
      await fixed();
      expect(await run(['verify', '--skip', 'build', 'pr-text', 'docs', 'format-cmake'], bare)).toMatchSnapshot();
    });

    it('format --fix while another run holds the workdir (6, LOCKED), leaving templates/ as they were', async () => {
      await fixed();
      const header = path.join(project, 'templates', '{{header_path}}');
      writeFileSync(header, readFileSync(header, 'utf8').replace('class', 'class   '));
      const before = readFileSync(header, 'utf8');
      const lock = path.join(project, '.work', '.lock');
      writeFileSync(lock, JSON.stringify({ pid: process.pid, command: 'test' }));
      const out = await run(['format', '--fix']);
      rmSync(lock);
      expect(readFileSync(header, 'utf8')).toBe(before);
      expect(out).toMatchSnapshot();
    });
  },
);

/** metal-cpp as far as the fixture TUs use it: enough for them to type-check, nothing more. */
const METAL_HPP = `#pragma once
namespace NS {
using UInteger = unsigned long;
class String {
 public:
  UInteger length() const;
};
template <class T>
class SharedPtr {
 public:
  T* operator->() const;
};
template <class T>
SharedPtr<T> TransferPtr(T* object);
} // namespace NS
namespace MTL {
enum : NS::UInteger { ResourceStorageModeShared = 0, ResourceHazardTrackingModeUntracked = 1 << 8 };
class Buffer {
 public:
  void* contents();
  NS::UInteger length() const;
};
class Device {
 public:
  NS::String* name() const;
  Buffer* newBuffer(NS::UInteger length, NS::UInteger options);
};
} // namespace MTL
`;

describe('check-metal without clang >= 19', () => {
  it('exits 9 with TOOL_MISSING and the toolchain checks', async () => {
    const upstream = makeMetalUpstream('http://127.0.0.1:9/metal-cpp_26.zip');
    const project = makeMetalProject(upstream.sha);
    const names = { paths: { project, upstream: upstream.dir }, shas: { pinned: upstream.sha } };
    const out = await runTable(
      { 'check-metal': ['check-metal'], 'check-metal --self-test': ['check-metal', '--self-test'] },
      (args) => runJson(args, { cwd: project, env: { PATH: gitOnlyPath() }, names }),
    );
    expect(byOutcome(out)).toMatchSnapshot();
  });
});

describe.skipIf(lane.toolchain === null)(skipName('check-metal with clang >= 19 and libc++', [lane.reason]), () => {
  let upstream: { dir: string; sha: string };
  let project: string;
  let metalCpp: string;
  const names = (): Names => ({
    paths: { project, upstream: upstream.dir, metalCpp, repo: REPO_ROOT },
    literals: { clang: lane.toolchain?.command ?? 'clang++' },
    shas: { pinned: upstream.sha },
    vary: ['seconds', 'errors', 'errorCount', 'clang.version', 'clang.major', 'clang.libcxx', 'pid'],
  });
  const run = (...args: string[]) => runJson(args, { cwd: project, names: names() });

  beforeAll(() => {
    upstream = makeMetalUpstream('http://127.0.0.1:9/metal-cpp_26.zip');
    project = makeMetalProject(upstream.sha);
    metalCpp = tempDir('msp-metal-cpp-');
    mkdirSync(path.join(metalCpp, 'Metal'));
    writeFileSync(path.join(metalCpp, 'Metal', 'Metal.hpp'), METAL_HPP);
  });
  // Each case starts from the state it names (a stage), made once: before or after apply.
  const fresh = stage(
    () => [project],
    () => undefined,
  );
  const applied = stage(
    () => [project],
    async () => {
      await fresh();
      return run('apply', '--mlx-repo', upstream.dir);
    },
  );

  it('before apply (1, NOT_APPLIED)', async () => {
    await fresh();
    expect(await run('check-metal', '--metal-cpp', metalCpp)).toMatchSnapshot();
  });

  it('metal-cpp that cannot be downloaded, or a folder that is not metal-cpp (9, TOOL_MISSING)', async () => {
    expect((await applied()).code).toBe(0);
    expect({
      download: await run('check-metal'),
      '--metal-cpp': await run('check-metal', '--metal-cpp', FIXTURES),
    }).toMatchSnapshot();
  });

  it('the PR TUs type-check against a stand-in metal-cpp (0)', async () => {
    await applied();
    expect(await run('check-metal', '--metal-cpp', metalCpp, '--jobs', '2')).toMatchSnapshot();
  });

  it('a PR TU that does not type-check (1, CHECK_FAILED)', async () => {
    await applied();
    const template = path.join(project, 'templates', '{{metal_test_file}}');
    const original = readFileSync(template, 'utf8');
    const broken = original.replace('name->length()', 'name->size()');
    expect(broken).not.toBe(original);
    writeFileSync(template, broken);
    expect((await run('apply')).code).toBe(0);
    expect(await run('check-metal', '--metal-cpp', metalCpp, '--jobs', '2')).toMatchSnapshot();
    writeFileSync(template, original);
    expect((await run('apply')).code).toBe(0);
  });

  it('--self-test fails on the fixture, which is not MLX and has only a stand-in metal-cpp (1, CHECK_FAILED); while locked (6, LOCKED)', async () => {
    await applied();
    const selfTest = await run('check-metal', '--self-test', '--metal-cpp', metalCpp, '--jobs', '2');
    const lock = path.join(project, '.work', '.lock');
    writeFileSync(lock, JSON.stringify({ pid: process.pid, command: 'test' }));
    const locked = await run('check-metal', '--self-test', '--metal-cpp', metalCpp);
    rmSync(lock);
    expect({ '--self-test': selfTest, locked }).toMatchSnapshot();
  });
});

describe.skipIf(!doctorReady)(withReason('doctor', doctorReady, doctorReason), () => {
  let project: string;
  let deps: string;

  beforeAll(() => {
    project = makeProject(makeUpstream().sha);
    deps = tempDir('msp-deps-');
    for (const dep of ['json', 'doctest', 'fmt', 'gguflib']) mkdirSync(path.join(deps, dep));
  });

  it('with no tools on PATH: every required tool fails (9); --deps-dir provides the offline dependencies', async () => {
    const out = await spawnJson(['doctor', '--deps-dir', deps], {
      cwd: project,
      // A proxy on a closed port: metal-cpp cannot be downloaded, whatever this machine's network.
      env: { PATH: gitOnlyPath(), HTTPS_PROXY: 'http://127.0.0.1:9', https_proxy: 'http://127.0.0.1:9' },
      names: { paths: { project, deps } },
    });
    // BLAS is found by its files, not on PATH: its status is this machine's.
    const json = out.json as { checks: string[] };
    const blas = json.checks.findIndex((c) => c.startsWith('blas: '));
    expect(json.checks[blas]).toBe(`blas: ${hasBlas ? 'pass' : 'fail'}, required, fix`);
    json.checks[blas] = 'blas: <this machine>, required, fix';
    expect(out).toMatchSnapshot();
  });
});

describe.skipIf(!machineReady)(withReason('doctor on a machine with every tool', machineReady, machineReason), () => {
  it('every check passes (0), --offline with the system packages too', async () => {
    const project = makeProject(makeUpstream().sha);
    // metal-cpp as check-metal leaves it in the workdir: no download needed.
    const metalCpp = path.join(project, '.work', 'metal-cpp', 'metal-cpp_26', 'metal-cpp', 'Metal');
    mkdirSync(metalCpp, { recursive: true });
    writeFileSync(path.join(metalCpp, 'Metal.hpp'), '// stand-in\n');
    const out = await runTable({ doctor: ['doctor'], '--offline': ['doctor', '--offline'] }, (args) =>
      runJson(args, {
        cwd: project,
        env: { MLX_STORAGE_PR_CACHE: tempDir('msp-cache-') },
        names: { paths: { project } },
      }),
    );
    expect(out).toMatchSnapshot();
  });
});

describe('check', () => {
  let upstream: { dir: string; sha: string };
  let project: string;
  const commits: Record<string, string> = {};
  const names = (): Names => ({
    paths: { project, upstream: upstream.dir },
    shas: { pinned: upstream.sha, ...commits },
  });
  const run = (...args: string[]) =>
    runJson(['check', '--mlx-repo', upstream.dir, ...args], { cwd: project, names: names() });

  beforeAll(() => {
    upstream = makeUpstream();
    project = makeProject(upstream.sha);
    const on = (branch: string, file: string, from: string, to: string) => {
      git(upstream.dir, 'checkout', '--quiet', '-B', branch, upstream.sha);
      const full = path.join(upstream.dir, file);
      writeFileSync(full, readFileSync(full, 'utf8').replace(from, to));
      git(upstream.dir, 'commit', '--quiet', '-am', branch);
      commits[branch] = git(upstream.dir, 'rev-parse', 'HEAD').trim();
    };
    on('context', 'mlx/backend/metal/CMakeLists.txt', '/allocator.cpp', '/allocators.cpp');
    on('clash', 'docs/src/dev/extensions.rst', 'Text about operations.\n\n', 'Text about operations.\n\nMore.\n\n');
  });

  it('check --against: a three-way merge is reported and exits 0; a conflict exits 4 with the report', async () => {
    const out = {
      'three-way': await run('--against', 'context'),
      conflict: await run('--against', 'clash'),
    };
    expect(out).toMatchSnapshot();
  });

  it("check --open-prs from the source's merge refs: a conflict with one exits 4 with the per-pull-request report; --limit 0 (2)", async () => {
    // Pull requests 6 and 7 as GitHub keeps them: their heads and their merges into main (here the pin).
    for (const [number, branch] of [
      [6, 'context'],
      [7, 'clash'],
    ] as const) {
      const head = commits[branch] as string;
      git(upstream.dir, 'update-ref', `refs/pull/${number}/head`, head);
      const merge = git(upstream.dir, 'commit-tree', `${head}^{tree}`, '-p', upstream.sha, '-p', head, '-m', 'merge');
      git(upstream.dir, 'update-ref', `refs/pull/${number}/merge`, merge.trim());
      commits[`merge${number}`] = merge.trim();
    }
    const out = {
      conflict: await run('--open-prs', '--open-prs-from', 'source'),
      '--limit 0': await run('--open-prs', '--limit', '0'),
    };
    expect(out).toMatchSnapshot();
  });

  it('check: an unknown ref (5, REF_NOT_FOUND); no --against, build options without --build, --jobs 0 (2)', async () => {
    const out = {
      'unknown ref': await run('--against', 'no-such-ref'),
      'no --against': await run(),
      '--offline without --build': await run('--against', 'context', '--offline'),
      '--jobs 0': await run('--against', 'context', '--jobs', '0'),
    };
    expect(out).toMatchSnapshot();
  });
});

describe('export and bump through edits and a pin move', () => {
  let upstream: { dir: string; sha: string };
  let project: string;
  let checkout: string;
  let target = '';
  const names = (): Names => ({
    paths: { project, upstream: upstream.dir },
    shas: { pinned: upstream.sha, target },
  });
  const run = (...args: string[]) => runJson([...args, '--mlx-repo', upstream.dir], { cwd: project, names: names() });
  const edit = (dir: string, file: string, change: (text: string) => string) =>
    writeFileSync(path.join(dir, file), change(readFileSync(path.join(dir, file), 'utf8')));

  beforeAll(() => {
    upstream = makeExportUpstream();
    project = makeExportProject(upstream.sha);
    checkout = path.join(project, '.work', 'mlx');
  });
  // Each case starts from the state the case before it leaves (the stage of that name), made once.
  const folders = () => [project, upstream.dir];
  const fresh = stage(folders, () => undefined);
  const exported = stage(folders, async () => {
    await fresh();
    expect((await run('apply')).code).toBe(0);
    const out: Record<string, Outcome> = {};
    out['no edits'] = await run('export');
    edit(checkout, 'mlx/backend/metal/storage_view.cpp', (t) => t.replace('  return 0;', '  return 1;'));
    out['--dry-run'] = await run('export', '--dry-run');
    out['export'] = await run('export');
    edit(checkout, 'mlx/backend/metal/storage_view.h', (t) =>
      t.replace('  int size() const;', '  int size() const;\n  MetalStorageView copy() const;'),
    );
    out['ambiguous value'] = await run('export');
    git(checkout, 'checkout', '--', 'mlx/backend/metal/storage_view.h');
    return out;
  });
  const aborted = stage(folders, async () => {
    await exported();
    edit(upstream.dir, 'mlx/version.h', (t) => t.replace('MLX_VERSION_MINOR 32', 'MLX_VERSION_MINOR 33'));
    edit(upstream.dir, 'mlx/backend/metal/no_metal.cpp', (t) =>
      t.replace('without metal backend");\n}\n\n', 'without metal backend");\n}\n\nvoid reset_peak_memory() {}\n\n'),
    );
    git(upstream.dir, 'commit', '--quiet', '-am', 'upstream change');
    target = git(upstream.dir, 'rev-parse', 'HEAD').trim();
    const out: Record<string, Outcome> = {};
    out['bump --to main'] = await run('bump', '--to', 'main');
    out['status'] = await run('status');
    out['apply'] = await run('apply');
    out['bump --to main again'] = await run('bump', '--to', 'main');
    out['bump --continue before export'] = await run('bump', '--continue');
    out['bump --abort'] = await run('bump', '--abort');
    return { out, target };
  });

  it('usage errors (2), an invalid config (7), and export before apply (1, NOT_APPLIED)', async () => {
    await fresh();
    const broken = makeExportProject(upstream.sha);
    editConfig(broken, (c) => ((c['upstream'] as Record<string, unknown>)['commit'] = 'abc'));
    const rows = {
      'export --no-such-option': ['export', '--no-such-option'],
      'bump --no-such-option': ['bump', '--no-such-option'],
      bump: ['bump'],
      'bump --to x --continue': ['bump', '--to', 'x', '--continue'],
      'bump --continue': ['bump', '--continue'],
      'bump --abort': ['bump', '--abort'],
      export: ['export'],
    };
    const out = await runTable(rows, (args) => run(...args));
    out['export (invalid config)'] = await runJson(['export'], { cwd: broken, names: { paths: { project: broken } } });
    out['bump --to x (invalid config)'] = await runJson(['bump', '--to', 'x'], {
      cwd: broken,
      names: { paths: { project: broken } },
    });
    expect(byOutcome(out)).toMatchSnapshot();
  });

  it('export: nothing to export (0); --dry-run with edits (0, would-export); export (0, exported); an edit it cannot place (1, EXPORT_REFUSED)', async () => {
    expect(await exported()).toMatchSnapshot();
  });

  it('bump: a conflict (4, BUMP_CONFLICT) shows in status; apply and another bump wait (3); --abort (0, aborted)', async () => {
    const { out } = await aborted();
    expect(out).toMatchSnapshot();
  });

  it('bump: after resolving, export (0, exported, bump) and --continue (0, continued); a bump to the pinned commit (0, already-pinned); an unknown ref (5)', async () => {
    target = (await aborted()).target;
    expect((await run('bump', '--to', 'main')).code).toBe(4);
    const worktree = path.join(project, '.work', 'bump', 'mlx');
    edit(worktree, 'mlx/backend/metal/no_metal.cpp', (t) =>
      t.replace(/<<<<<<< .*\n([\s\S]*?)=======\n([\s\S]*?)>>>>>>> .*\n/, '$1\n$2'),
    );
    const out: Record<string, Outcome> = {};
    out['export'] = await run('export');
    out['bump --continue'] = await run('bump', '--continue');
    out['bump --to main'] = await run('bump', '--to', 'main');
    out['bump --to no-such-ref'] = await run('bump', '--to', 'no-such-ref');
    expect(out).toMatchSnapshot();
  });
});
