import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { makeExportProject, makeExportUpstream } from '../support/export-fixtures.js';
import { git, makeProject, makeUpstream, runCli, snapshot, tempDir, ccacheDir } from '../support/repos.js';

/**
 * `check --against` on a synthetic upstream history: one commit per case,
 * each reached through a different kind of ref (branch, annotated tag, full
 * and short commit id).
 */

let upstream: { dir: string; sha: string };
let project: string;
const commits: Record<string, string> = {};

const CMAKE = 'mlx/backend/metal/CMakeLists.txt';
const DOCS = 'docs/src/dev/extensions.rst';
const PLANNED = ['mlx/backend/metal/storage_view.h', 'mlx/backend/metal/storage_view.cpp', CMAKE, DOCS] as const;

/** A new upstream commit on `branch` (from the pinned commit) made by `edit`. */
function commitOn(branch: string, edit: (dir: string) => void): string {
  git(upstream.dir, 'checkout', '--quiet', '-B', branch, upstream.sha);
  edit(upstream.dir);
  git(upstream.dir, 'add', '-A');
  git(upstream.dir, 'commit', '--quiet', '-m', branch);
  const sha = git(upstream.dir, 'rev-parse', 'HEAD').trim();
  git(upstream.dir, 'checkout', '--quiet', 'main');
  return sha;
}

function edit(dir: string, file: string, from: string, to: string): void {
  const full = path.join(dir, file);
  const text = readFileSync(full, 'utf8');
  if (!text.includes(from)) throw new Error(`${file} has no "${from}"`);
  writeFileSync(full, text.replace(from, to));
}

const check = (...args: string[]) => runCli(['check', '--mlx-repo', upstream.dir, ...args, '--json'], { cwd: project });

type Step = {
  name: string;
  files: string[];
  status: string;
  reasons: Array<{ file: string; hunk?: number; reason: string }>;
};
type Ref = {
  ref: string;
  commit: string;
  status: string;
  upstreamChanged: string[];
  templates: Step[];
  patches: Step[];
};
const statuses = (ref: Ref) => Object.fromEntries([...ref.templates, ...ref.patches].map((s) => [s.name, s.status]));
const reasons = (ref: Ref) =>
  [...ref.templates, ...ref.patches].flatMap((s) =>
    s.reasons.map((r) => `${s.name}: ${r.file}${r.hunk ? ` hunk ${r.hunk}` : ''}: ${r.reason}`),
  );

beforeAll(async () => {
  upstream = makeUpstream();
  project = makeProject(upstream.sha);
  // Upstream moved on, but not in any file the series writes.
  commits['unrelated'] = commitOn('unrelated', (dir) => writeFileSync(path.join(dir, 'NEWS.md'), 'news\n'));
  // Context of 0001's hunk changed; its own lines did not: a three-way merge takes it.
  commits['context'] = commitOn('context', (dir) => edit(dir, CMAKE, '/allocator.cpp', '/allocators.cpp'));
  // Upstream added its own lines where 0002 adds its section: no merge can take both.
  commits['clash'] = commitOn('clash', (dir) =>
    edit(dir, DOCS, 'Text about operations.\n\n', 'Text about operations.\n\nUpstream words.\n\n'),
  );
  git(upstream.dir, 'tag', '--annotate', 'v2.0', '--message', 'release', commits['clash']);
  // Upstream already holds the whole change: the tree that apply makes.
  const workdir = tempDir('msp-check-scratch-');
  const applied = await runCli(['apply', '--mlx-repo', upstream.dir, '--workdir', workdir], { cwd: project });
  expect(applied.code, applied.stderr).toBe(0);
  commits['merged'] = commitOn('merged', (dir) => {
    for (const file of PLANNED) cpSync(path.join(workdir, 'mlx', file), path.join(dir, file));
  });
});

describe('check --against', () => {
  it('reports clean, three-way, conflicting and already-upstream commits per template and patch, and exits 4 for the conflict', async () => {
    const result = await check(
      '--against',
      'unrelated', // a branch
      commits['context'] as string, // a full commit id
      'v2.0', // an annotated tag
      (commits['merged'] as string).slice(0, 10), // a short id: the source is on this machine
    );
    expect(result.code, result.stderr).toBe(4);
    expect(result.json.ok).toBe(false);
    const [unrelated, context, clash, merged] = result.json.refs as Ref[];
    expect(result.json.refs.map((r: Ref) => [r.ref, r.commit, r.status])).toEqual([
      ['unrelated', commits['unrelated'], 'clean'],
      [commits['context'], commits['context'], 'three-way'],
      ['v2.0', commits['clash'], 'conflict'],
      [(commits['merged'] as string).slice(0, 10), commits['merged'], 'already-upstream'],
    ]);

    const templates = ['templates/mlx/backend/metal/storage_view.cpp', 'templates/{{header_path}}'];
    const allOf = (status: string, patches: Record<string, string>) => ({
      ...Object.fromEntries(templates.map((t) => [t, status])),
      ...patches,
    });
    expect(statuses(unrelated!)).toEqual(
      allOf('clean', { '0001-metal-cmake.patch': 'clean', '0002-docs.patch': 'clean' }),
    );
    expect(unrelated!.upstreamChanged).toEqual([]);
    expect(reasons(unrelated!)).toEqual([]);

    expect(statuses(context!)).toEqual(
      allOf('clean', { '0001-metal-cmake.patch': 'three-way', '0002-docs.patch': 'clean' }),
    );
    expect(reasons(context!)).toEqual([`0001-metal-cmake.patch: ${CMAKE} hunk 1: upstream_changed`]);
    expect(context!.upstreamChanged).toEqual([CMAKE]);

    expect(statuses(clash!)).toEqual(
      allOf('clean', { '0001-metal-cmake.patch': 'clean', '0002-docs.patch': 'conflict' }),
    );
    expect(reasons(clash!)).toEqual([`0002-docs.patch: ${DOCS} hunk 1: upstream_changed`]);

    expect(statuses(merged!)).toEqual(
      allOf('already-upstream', {
        '0001-metal-cmake.patch': 'already-upstream',
        '0002-docs.patch': 'already-upstream',
      }),
    );
    expect(reasons(merged!)).toEqual([
      'templates/mlx/backend/metal/storage_view.cpp: mlx/backend/metal/storage_view.cpp: already_applied',
      'templates/{{header_path}}: mlx/backend/metal/storage_view.h: already_applied',
      `0001-metal-cmake.patch: ${CMAKE}: already_applied`,
      `0002-docs.patch: ${DOCS}: already_applied`,
    ]);
  });

  it('exits 0 when every patch applies, also when one needs a three-way merge, and says which', async () => {
    const result = await runCli(['check', '--mlx-repo', upstream.dir, '--against', 'unrelated', 'context'], {
      cwd: project,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('patch 0001-metal-cmake.patch: three-way');
    expect(result.stdout).toContain('The series applies to all 2 (with a three-way merge on context).');
  });

  it('tells "our patch changed" from "upstream changed": a patch that does not apply to an unchanged file is patch_changed', async () => {
    const other = makeProject(upstream.sha);
    edit(other, 'patches/0002-docs.patch', ' Text about operations.', ' Text about something else.');
    const result = await runCli(['check', '--mlx-repo', upstream.dir, '--against', 'unrelated', 'v2.0', '--json'], {
      cwd: other,
    });
    expect(result.code, result.stderr).toBe(4);
    const [unrelated, clash] = result.json.refs as Ref[];
    expect(reasons(unrelated!)).toEqual([`0002-docs.patch: ${DOCS} hunk 1: patch_changed`]);
    expect(reasons(clash!)).toEqual([`0002-docs.patch: ${DOCS} hunk 1: upstream_changed`]);
  });

  it('never touches the pinned checkout: HEAD, index, files, refs and objects stay as they were', async () => {
    const applied = await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project });
    expect(applied.code, applied.stderr).toBe(0);
    const checkout = path.join(project, '.work', 'mlx');
    writeFileSync(path.join(checkout, DOCS), 'an edit of mine\n');
    const objects = () => git(checkout, 'count-objects', '-v');
    const refs = () => git(checkout, 'for-each-ref');
    const shallow = () => readFileSync(path.join(checkout, '.git', 'shallow'), 'utf8');
    const before = [snapshot(checkout), objects(), refs(), shallow()];

    const result = await check('--against', 'v2.0', 'context', 'merged');
    expect(result.code, result.stderr).toBe(4);
    expect([snapshot(checkout), objects(), refs(), shallow()]).toEqual(before);
    expect(readdirSync(path.join(project, '.work')).sort()).toEqual(['check', 'mlx', 'source.json']);
  });

  it('fetches only what is missing: a second run of the same commit ids needs no source at all', async () => {
    const workdir = tempDir('msp-check-');
    const ids = [commits['unrelated'] as string, commits['context'] as string];
    const first = await check('--workdir', workdir, '--against', ...ids);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain('Fetching');
    const gone = path.join(upstream.dir, 'no-such-folder');
    const again = await runCli(['check', '--mlx-repo', gone, '--workdir', workdir, '--against', ...ids, '--json'], {
      cwd: project,
    });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).not.toContain('Fetching');
    expect(again.json.refs).toEqual(first.json.refs);
  });

  it('gives the same report one commit at a time (--jobs 1) as several at once', async () => {
    const refs = ['unrelated', 'context', 'v2.0', 'merged'];
    const serial = await check('--against', ...refs, '--jobs', '1');
    const parallel = await check('--against', ...refs, '--jobs', '4');
    expect(serial.code).toBe(4);
    expect(parallel.json).toEqual(serial.json);
  });

  it('an unknown ref: exit 5 with REF_NOT_FOUND and how to list the refs; nothing is checked', async () => {
    const workdir = tempDir('msp-check-');
    const result = await check('--workdir', workdir, '--against', 'unrelated', 'no-such-branch');
    expect(result.code).toBe(5);
    expect(result.json.error.code).toBe('REF_NOT_FOUND');
    expect(result.json.error.message).toContain('"no-such-branch"');
    expect(result.json.error.hint).toContain(`git ls-remote ${upstream.dir}`);
    expect(result.json.refs).toBeUndefined();
    const missing = await check('--workdir', workdir, '--against', '0123456789abcdef0123456789abcdef01234567');
    expect(missing.code).toBe(5);
    expect(missing.json.error.code).toBe('REF_NOT_FOUND');
    expect(missing.json.error.message).toContain('the source does not have that commit');
  });

  it('prints a Markdown report for a CI job summary with --markdown', async () => {
    const result = await runCli(['check', '--mlx-repo', upstream.dir, '--against', 'v2.0', '--markdown'], {
      cwd: project,
    });
    expect(result.code).toBe(4);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('## Drift check: the series against other MLX commits');
    expect(lines).toContain('| ref | commit | date | series | build |');
    expect(lines).toContain(
      `| \`v2.0\` | \`${(commits['clash'] as string).slice(0, 12)}\` | 2025-01-01 | conflict | not asked (--build) |`,
    );
    expect(result.stdout).toContain(
      `| patch | \`0002-docs.patch\` | conflict | \`${DOCS}\` hunk 1 \`@@ -6,6 +6,11 @@\`: \`upstream_changed\``,
    );
  });

  it('clean removes check/ (its repository and trees), and leaves the checkout', async () => {
    const workdir = tempDir('msp-check-');
    expect((await check('--workdir', workdir, '--against', 'unrelated')).code).toBe(0);
    expect((await runCli(['apply', '--mlx-repo', upstream.dir, '--workdir', workdir], { cwd: project })).code).toBe(0);
    const cleaned = await runCli(['clean', '--workdir', workdir, '--json'], { cwd: project });
    expect(cleaned.code, cleaned.stderr).toBe(0);
    expect(existsSync(path.join(workdir, 'check'))).toBe(false);
    expect(existsSync(path.join(workdir, 'mlx'))).toBe(true);
  });

  it('a source that does not exist: exit 5 (SOURCE_UNREACHABLE)', async () => {
    const result = await runCli(
      ['check', '--mlx-repo', path.join(upstream.dir, 'gone'), '--against', 'main', '--json'],
      { cwd: project },
    );
    expect(result.code).toBe(5);
    expect(result.json.error.code).toBe('SOURCE_UNREACHABLE');
  });

  it('merges a later patch of a file three-way (exit 0): the pre-image it needs is the file as the earlier patch leaves it at the pin', async () => {
    // fixtures/export: 0001 and 0002 both change no_metal.cpp; upstream then changes a context line of 0002's hunk.
    const twoPatches = makeExportUpstream();
    const NO_METAL = 'mlx/backend/metal/no_metal.cpp';
    const file = path.join(twoPatches.dir, NO_METAL);
    const text = readFileSync(file, 'utf8');
    const from = 'device_info() {\n  throw std::runtime_error(';
    expect(text).toContain(from);
    writeFileSync(file, text.replace(from, 'device_info() {\n  throw std::logic_error('));
    git(twoPatches.dir, 'commit', '--quiet', '-am', 'logic_error');
    const moved = git(twoPatches.dir, 'rev-parse', 'HEAD').trim();

    const result = await runCli(['check', '--mlx-repo', twoPatches.dir, '--against', moved, '--json'], {
      cwd: makeExportProject(twoPatches.sha),
    });
    expect(result.code, result.stderr).toBe(0);
    const [ref] = result.json.refs as Ref[];
    expect(ref!.status).toBe('three-way');
    expect(statuses(ref!)).toMatchObject({
      '0001-no-metal-include.patch': 'clean',
      '0002-no-metal-stub.patch': 'three-way',
      '0003-docs.patch': 'clean',
    });
    expect(reasons(ref!)).toEqual([`0002-no-metal-stub.patch: ${NO_METAL} hunk 1: upstream_changed`]);
  });

  it('refuses build options without --build (exit 2)', async () => {
    const result = await check('--against', 'main', '--tests', '*x*');
    expect(result.code).toBe(2);
    expect(result.json.error.code).toBe('USAGE');
    expect(result.json.error.message).toContain('--tests');
  });
});

const hasBuildTools = [
  '/usr/bin/cmake',
  '/usr/include/doctest/doctest.h',
  '/usr/lib/cmake/doctest/doctest.cmake',
].every(existsSync);
const buildReason = 'skipped: needs cmake, a C++ compiler and doctest-dev (sudo apt-get install cmake g++ doctest-dev)';
if (!hasBuildTools) console.warn(`check --build: ${buildReason}`);

describe.skipIf(!hasBuildTools)(
  hasBuildTools ? 'check --build on a CMake + doctest fixture' : `check --build (${buildReason})`,
  () => {
    let cmakeUpstream: { dir: string; sha: string };
    let cmakeProject: string;
    let env: Record<string, string>;
    const ids: Record<string, string> = {};

    beforeAll(() => {
      cmakeUpstream = makeUpstream('cmake-project/upstream');
      cmakeProject = makeProject(cmakeUpstream.sha, 'cmake-project/project');
      env = { MLX_STORAGE_PR_CACHE: tempDir('msp-cache-'), CCACHE_DIR: ccacheDir() };
      const on = (branch: string, file: string, from: string, to: string) => {
        git(cmakeUpstream.dir, 'checkout', '--quiet', '-B', branch, cmakeUpstream.sha);
        edit(cmakeUpstream.dir, file, from, to);
        git(cmakeUpstream.dir, 'commit', '--quiet', '-am', branch);
        ids[branch] = git(cmakeUpstream.dir, 'rev-parse', 'HEAD').trim();
      };
      // Upstream moved on; the series applies and its test passes.
      on('fine', 'src/lib.cpp', 'int add(int a, int b) {', '// Adds.\nint add(int a, int b) {');
      // Upstream broke what the series' new test relies on; MLX's own cases still behave as before.
      on('broken', 'src/lib.cpp', 'return a + b;', 'return a + b + (a == 20 ? 1 : 0);');
      // Upstream changed the line the patch changes.
      on('clash', 'tests/CMakeLists.txt', 'PRIVATE lib_tests.cpp)', 'PRIVATE lib_tests.cpp more_tests.cpp)');
    });

    const run = (...args: string[]) =>
      runCli(['check', '--mlx-repo', cmakeUpstream.dir, '--build', '--offline', ...args, '--json'], {
        cwd: cmakeProject,
        env,
      });
    const classes = (ref: { build: { test: { cases: Array<{ name: string; classification: string }> } } }) =>
      Object.fromEntries(ref.build.test.cases.map((c) => [c.name, c.classification]));

    it('builds and runs the suite on each commit the series applies to, against that commit unpatched; failing tests exit 8', async () => {
      const result = await run('--against', 'fine', 'broken');
      expect(result.code, result.stderr).toBe(8);
      const [fine, broken] = result.json.refs;
      expect(fine.status).toBe('clean');
      expect(fine.build.status).toBe('passed');
      expect(classes(fine)).toEqual({
        'test add': 'passed',
        'test known failure': 'pre-existing-failure',
        'test MetalStorageView adds': 'new-test-passed',
      });
      expect(broken.build.status).toBe('failed');
      expect(broken.build.blocking).toBe(1);
      expect(classes(broken)).toEqual({
        'test add': 'passed',
        'test known failure': 'pre-existing-failure',
        'test MetalStorageView adds': 'new-test-failed',
      });
      // Each commit is built in its own tree under check/, beside its unpatched baseline.
      const root = path.join(cmakeProject, '.work', 'check', ids['fine']!.slice(0, 12));
      expect(fine.build.test.buildDir.startsWith(path.join(root, 'build-'))).toBe(true);
      expect(existsSync(path.join(root, 'mlx', 'tests', 'new_tests.cpp'))).toBe(true);
      expect(existsSync(path.join(root, 'baseline', 'mlx', 'tests', 'new_tests.cpp'))).toBe(false);
      // No checkout was needed, and none was made.
      expect(existsSync(path.join(cmakeProject, '.work', 'mlx'))).toBe(false);
    });

    it('does not build a commit the series does not apply to; the conflict decides the exit code (4)', async () => {
      const result = await run('--against', 'clash', 'fine');
      expect(result.code, result.stderr).toBe(4);
      const [clash, fine] = result.json.refs;
      expect(clash.status).toBe('conflict');
      expect(clash.build).toEqual({ status: 'not-run' });
      expect(fine.build.status).toBe('passed');
    });
  },
);
