import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { git, makeProject, makeUpstream, runCli, spawnCli, tempDir, ccacheDir } from '../support/repos.js';

const hasTools = ['/usr/bin/cmake', '/usr/include/doctest/doctest.h', '/usr/lib/cmake/doctest/doctest.cmake'].every(
  existsSync,
);
const reason = 'skipped: needs cmake, a C++ compiler and doctest-dev (sudo apt-get install cmake g++ doctest-dev)';
if (!hasTools) console.warn(`test command integration: ${reason}`);

let project: string;
let upstream: { dir: string; sha: string };
let env: Record<string, string>;

const run = (...args: string[]) => runCli([...args, '--json'], { cwd: project, env });
const write = (file: string, text: string) => writeFileSync(path.join(project, file), text);
const byName = (json: { cases: Array<{ name: string; classification: string }> }) =>
  Object.fromEntries(json.cases.map((c) => [c.name, c.classification]));

// Adds a failing case to MLX's own test file: line 13 of the file, line 10 of the patch.
const LIB_TEST_PATCH = `diff --git a/tests/lib_tests.cpp b/tests/lib_tests.cpp
--- a/tests/lib_tests.cpp
+++ b/tests/lib_tests.cpp
@@ -8,3 +8,7 @@
 TEST_CASE("test known failure") {
   CHECK_EQ(add(1, 1), 3);
 }
+
+TEST_CASE("test patched") {
+  CHECK_EQ(add(2, 2), 5);
+}
`;

const NEW_TEST =
  '#include "doctest/doctest.h"\n#include "src/lib.h"\n\nTEST_CASE("test {{class_name}} adds") {\n  CHECK_EQ(add(20, 22), 42);\n}\n';

// One project for the whole file: cases run in order and reuse its build folders, as a user's runs would.
describe.skipIf(!hasTools)(hasTools ? 'test command on a CMake + doctest fixture' : `test command (${reason})`, () => {
  beforeAll(async () => {
    upstream = makeUpstream('cmake-project/upstream');
    project = makeProject(upstream.sha, 'cmake-project/project');
    env = { MLX_STORAGE_PR_CACHE: tempDir('msp-cache-'), CCACHE_DIR: ccacheDir() };
    const applied = await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project, env });
    expect(applied.code, applied.stderr).toBe(0);
  });

  it('refuses to run before apply, naming the fix', async () => {
    const other = makeProject(upstream.sha, 'cmake-project/project');
    const result = await runCli(['test', '--offline', '--json'], { cwd: other, env });
    expect(result.code).toBe(1);
    expect(result.json.error.code).toBe('NOT_APPLIED');
    expect(result.json.error.hint).toContain('apply');
  });

  it('without --offline, stops before CMake when its download hosts cannot be reached, naming them and --offline', async () => {
    const result = await run('test');
    expect(result.code).toBe(1);
    expect(result.json.error.code).toBe('DOWNLOADS_UNREACHABLE');
    expect(result.json.error.message).toContain('127.0.0.1:9 (http://127.0.0.1:9/doctest.git in tests/CMakeLists.txt)');
    expect(result.json.error.hint).toContain('--offline');
    // Failing fast means CMake never ran, so it never sat in its download retries.
    expect(result.stderr).not.toContain('Running `cmake');
    expect(existsSync(path.join(result.json.error.details.buildDir, 'mlx-storage-pr-configure.log'))).toBe(false);
  });

  it('configures, builds, runs and classifies against the baseline', async () => {
    const result = await run('test', '--offline');
    expect(result.code, result.stderr).toBe(0);
    expect(result.json.dependencies).toContainEqual({
      dep: 'doctest',
      source: 'system doctest-dev (/usr/include/doctest)',
    });
    expect(byName(result.json)).toEqual({
      'test add': 'passed',
      'test known failure': 'pre-existing-failure',
      'test MetalStorageView adds': 'new-test-passed',
    });
    expect(result.json.summary).toMatchObject({ cases: 3, passed: 2, failed: 1, skipped: 0 });
    const known = result.json.cases.find((c: { name: string }) => c.name === 'test known failure');
    expect(known.failures[0]).toMatchObject({ line: 9, message: 'CHECK_EQ( add(1, 1), 3 ) with values 2, 3' });
    expect(known.failures[0].file).toMatch(/lib_tests\.cpp$/);
    expect(result.json.baseline).toMatchObject({ used: true, cached: false });
    expect(result.stderr).toMatch(/patched: \d+\/\d+ \(100%\)/);
    // The build folder and the baseline carry the mark the tool writes into what it makes: clean may remove them.
    const workdir = path.join(project, '.work');
    const made = readdirSync(workdir).filter((e) => e.startsWith('build-') || e === 'baseline');
    expect(made).toContain('baseline');
    expect(made.length).toBeGreaterThanOrEqual(2);
    for (const item of made) expect(existsSync(path.join(workdir, item, '.mlx-storage-pr')), item).toBe(true);
    // Builds happen beside the checkout: they leave no ignored file in it, which clean --all would count as yours.
    expect(git(path.join(workdir, 'mlx'), 'status', '--porcelain', '--ignored')).toBe('');
  });

  it('MLX_STORAGE_PR_OFFLINE=1 makes `test` build offline without --offline, and status names it', async () => {
    const offlineEnv = { ...env, MLX_STORAGE_PR_OFFLINE: '1' };
    // The same run without it stops at the download hosts, as above.
    const online = await runCli(['test', '--json'], { cwd: project, env: { ...env, MLX_STORAGE_PR_OFFLINE: '0' } });
    expect(online.json.error.code).toBe('DOWNLOADS_UNREACHABLE');
    const result = await runCli(['test', '--json'], { cwd: project, env: offlineEnv });
    expect(result.code, result.stderr).toBe(0);
    expect(result.json.dependencies).toContainEqual({
      dep: 'doctest',
      source: 'system doctest-dev (/usr/include/doctest)',
    });
    const status = await runCli(['status', '--json'], { cwd: project, env: offlineEnv });
    expect(status.json.settings).toEqual({ offline: true, metalCpp: null });
    const human = await runCli(['status'], { cwd: project, env: offlineEnv });
    expect(human.stdout + human.stderr).toMatch(/^offline: +on \(MLX_STORAGE_PR_OFFLINE\)$/m);
  });

  it('reuses the build and the saved baseline on the next run', async () => {
    const result = await run('test', '--offline');
    expect(result.code).toBe(0);
    expect(result.json.patched.configured).toBe(false);
    expect(result.json.patched.buildSteps).toBe(0);
    expect(result.json.baseline.cached).toBe(true);
    expect(result.stderr).toContain('configuration unchanged');
  });

  it('stops before building when a required tool is missing, naming the fix', async () => {
    const bin = tempDir('msp-bin-');
    symlinkSync('/usr/bin/git', path.join(bin, 'git'));
    const result = await spawnCli(['test', '--offline', '--json'], { cwd: project, env: { ...env, PATH: bin } });
    expect(result.code).toBe(9);
    expect(result.json.error.code).toBe('TOOL_MISSING');
    expect(result.json.error.message).toContain('CMake >= 3.25: cmake not found');
    expect(result.json.error.message).toContain('fix: sudo apt-get install cmake');
  });

  it('-j/--jobs runs that many compilers at once (cmake --build --parallel), in the same build folder', async () => {
    const result = await run('test', '--offline', '-j', '1');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/Running `cmake --build \S+ --target \S+ --parallel 1`/);
  });

  it('passes arguments after -- to CMake, in a build folder of their own', async () => {
    const plain = await run('test', '--offline');
    const extra = await runCli(['test', '--offline', '--json', '--', '-DFIXTURE_EXTRA=ON'], { cwd: project, env });
    expect(extra.code, extra.stderr).toBe(0);
    expect(extra.json.buildDir).not.toBe(plain.json.buildDir);
    expect(readFileSync(extra.json.logs.configure, 'utf8')).toContain('-DFIXTURE_EXTRA=ON');
  });

  it('runs a subset with --tests', async () => {
    const result = await run('test', '--offline', '--tests', '*adds*');
    expect(result.code).toBe(0);
    expect(Object.keys(byName(result.json))).toEqual(['test MetalStorageView adds']);
  });

  it('a --tests filter that matches no case is a usage error that lists close names', async () => {
    const result = await run('test', '--offline', '--tests', '*storge view*');
    expect(result.code).toBe(2);
    expect(result.json.error).toMatchObject({
      code: 'USAGE',
      message: '--tests "*storge view*" matches none of the 3 test cases.',
    });
    expect(result.json.error.details.close).toEqual(['test MetalStorageView adds']);
    expect(result.json.error.hint).toContain('Close names: "test MetalStorageView adds".');
  });

  it('fails on a failing new test', async () => {
    write('templates/tests/new_tests.cpp', NEW_TEST.replace('42);', '41);'));
    expect((await runCli(['apply'], { cwd: project, env })).code).toBe(0);
    const result = await run('test', '--offline');
    expect(result.code).toBe(8);
    expect(byName(result.json)['test MetalStorageView adds']).toBe('new-test-failed');
    // Only the edited test file is compiled again, then the binary is linked.
    expect(result.json.patched.buildSteps).toBe(2);
  });

  it('fails on a new failure of an existing test', async () => {
    write('templates/tests/new_tests.cpp', NEW_TEST);
    // A patch that breaks add() makes the existing "test add" fail.
    write(
      'patches/0002-break-add.patch',
      'diff --git a/src/lib.cpp b/src/lib.cpp\n--- a/src/lib.cpp\n+++ b/src/lib.cpp\n@@ -1,5 +1,5 @@\n #include "src/lib.h"\n \n int add(int a, int b) {\n-  return a + b;\n+  return a - b;\n }\n',
    );
    write('patches/series', '0001-tests-cmake.patch\n0002-break-add.patch\n');
    expect((await runCli(['apply'], { cwd: project, env })).code).toBe(0);
    const result = await run('test', '--offline');
    expect(result.code).toBe(8);
    expect(byName(result.json)).toMatchObject({
      'test add': 'new-failure',
      'test known failure': 'pre-existing-failure',
    });
  });

  it('reports a crash of the test binary and still runs the other cases', async () => {
    write('patches/series', '0001-tests-cmake.patch\n');
    rmSync(path.join(project, 'patches/0002-break-add.patch'));
    write(
      'templates/tests/new_tests.cpp',
      `${NEW_TEST}\nTEST_CASE("test crash") {\n  volatile int* p = nullptr;\n  *p = 1;\n}\n\nTEST_CASE("test after crash") {\n  CHECK(true);\n}\n`,
    );
    expect((await runCli(['apply'], { cwd: project, env })).code).toBe(0);
    const result = await run('test', '--offline');
    expect(result.code).toBe(8);
    expect(result.json.patched.crashes).toEqual(['test crash']);
    const cases = byName(result.json);
    expect(cases['test crash']).toBe('new-test-failed');
    expect(cases['test after crash']).toBe('new-test-passed');
    expect(cases['test add']).toBe('passed');
  });

  it('reports a compile error with the error line and the log', async () => {
    write('templates/tests/new_tests.cpp', `${NEW_TEST}\nint broken( {\n`);
    expect((await runCli(['apply'], { cwd: project, env })).code).toBe(0);
    const result = await run('test', '--offline');
    expect(result.code).toBe(1);
    expect(result.json.error.code).toBe('BUILD_FAILED');
    expect(result.json.error.message).toMatch(/new_tests\.cpp:\d+:\d+: error/);
    expect(result.json.error.hint).toContain('mlx-storage-pr-build.log');
  });

  it('lists each failing case with the template or patch line its failure comes from', async () => {
    write('templates/tests/new_tests.cpp', NEW_TEST.replace('42);', '41);'));
    write('patches/0002-lib-test.patch', LIB_TEST_PATCH);
    write('patches/series', '0001-tests-cmake.patch\n0002-lib-test.patch\n');
    expect((await runCli(['apply'], { cwd: project, env })).code).toBe(0);
    const human = await runCli(['test', '--offline'], { cwd: project, env });
    expect(human.code, human.stderr).toBe(8);
    expect(human.stdout).toMatch(
      /^new-test-failed: test MetalStorageView adds\n {4}\S*tests\/new_tests\.cpp:5: CHECK_EQ\( add\(20, 22\), 41 \) with values 42, 41 \(from templates\/tests\/new_tests\.cpp:5\)$/m,
    );
    expect(human.stdout).toMatch(
      /^new-test-failed: test patched\n {4}\S*tests\/lib_tests\.cpp:13: CHECK_EQ\( add\(2, 2\), 5 \) with values 4, 5 \(from patches\/0002-lib-test\.patch:10\)$/m,
    );
    // MLX's own line: no origin in the series.
    expect(human.stdout).toMatch(
      /^pre-existing-failure: test known failure\n {4}\S*tests\/lib_tests\.cpp:9: CHECK_EQ\( add\(1, 1\), 3 \) with values 2, 3$/m,
    );
    expect(human.stdout).toMatch(/^test cases: 4 run, 1 passed, 3 failed, 0 skipped/m);
    expect(human.stdout).not.toContain('note: the checkout has edits');
    const json = await run('test', '--offline');
    const patched = json.json.cases.find((c: { name: string }) => c.name === 'test patched');
    expect(patched.failures[0]).toMatchObject({ line: 13, origin: 'patches/0002-lib-test.patch:10' });
    expect(json.json.localEdits).toEqual([]);
  });

  it('says when the checkout has edits that are not in templates/ or patches/', async () => {
    appendFileSync(path.join(project, '.work', 'mlx', 'src', 'lib.cpp'), '// tried here first\n');
    const result = await runCli(['test', '--offline'], { cwd: project, env });
    expect(result.stdout).toContain(
      'note: the checkout has edits that are not in templates/ or patches/ (this build includes them, but the PR is made from templates/ and patches/ only: `mlx-storage-pr export` writes them there): src/lib.cpp',
    );
    expect(result.stderr).toContain('warning: the checkout has edits that are not in templates/ or patches/');
    expect((await run('test', '--offline')).json.localEdits).toEqual(['src/lib.cpp']);
  });
});
