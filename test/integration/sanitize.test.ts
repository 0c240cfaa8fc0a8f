import { appendFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { makeProject, makeUpstream, runCli, tempDir, ccacheDir } from '../support/repos.js';
import { addSanitizerOptions, heapOverflowCase, signedOverflowCase } from '../support/sanitizer-fixture.js';

const hasTools = [
  '/usr/bin/cmake',
  '/usr/bin/nm',
  '/usr/bin/objcopy',
  '/usr/include/doctest/doctest.h',
  '/usr/lib/cmake/doctest/doctest.cmake',
].every(existsSync);
const reason =
  'skipped: needs cmake, g++ with its sanitizer runtimes, binutils and doctest-dev (sudo apt-get install cmake g++ binutils doctest-dev)';
if (!hasTools) console.warn(`sanitizer lane integration: ${reason}`);

interface Solo {
  name: string;
  where: string;
  reports: Array<{ message: string; frames: string[] }>;
}
const byName = (json: { cases: Array<{ name: string; classification: string }> }) =>
  Object.fromEntries(json.cases.map((c) => [c.name, c.classification]));
// Two Debug builds with a sanitizer each: slow on a busy machine.
const BUILD_TIMEOUT = 300_000;
const alone = (json: { sanitizer: { alone: Solo[] } }) =>
  Object.fromEntries(json.sanitizer.alone.map((c) => [c.name, c]));

describe('--sanitize with --upstream-ci', () => {
  it('is a usage error (exit 2) naming both options, before anything runs', async () => {
    const project = makeProject('0'.repeat(40), 'cmake-project/project');
    const result = await runCli(['test', '--sanitize', 'asan', '--upstream-ci'], { cwd: project });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--sanitize and --upstream-ci');
    expect(result.stderr).not.toContain('Running `cmake');
  });
});

// One project for the suite cases: the ASAN and UBSAN builds have folders of their own and run in turn.
describe.skipIf(!hasTools)(
  hasTools ? 'test --sanitize on a CMake + doctest fixture' : `test --sanitize (${reason})`,
  () => {
    let project: string;
    let upstreamSha: string;
    let env: Record<string, string>;
    const run = (...args: string[]) => runCli([...args, '--json'], { cwd: project, env });

    beforeAll(async () => {
      // The unpatched tree has one case with a heap overflow and one with a signed overflow: both are pre-existing.
      const upstream = makeUpstream('cmake-project/upstream', (dir) => {
        addSanitizerOptions(dir);
        appendFileSync(
          path.join(dir, 'tests/lib_tests.cpp'),
          heapOverflowCase('test known overflow', 'known_read') + signedOverflowCase('test known ub', 'known_add'),
        );
      });
      upstreamSha = upstream.sha;
      project = makeProject(upstream.sha, 'cmake-project/project');
      env = { MLX_STORAGE_PR_CACHE: tempDir('msp-cache-'), CCACHE_DIR: ccacheDir(), MLX_REPO: upstream.dir };
      const file = path.join(project, 'templates/tests/new_tests.cpp');
      writeFileSync(
        file,
        readFileSync(file, 'utf8') +
          heapOverflowCase('test new overflow', 'new_read') +
          signedOverflowCase('test new ub', 'new_add'),
      );
      const applied = await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project, env });
      expect(applied.code, applied.stderr).toBe(0);
    });

    it(
      "asan: builds both trees as MLX's job does, fails on the new case's report with its frames, and an abort the baseline has too is pre-existing",
      async () => {
        const result = await run('test', '--offline', '--sanitize', 'asan');
        expect(result.code, result.stderr).toBe(8);
        for (const dir of [result.json.buildDir, result.json.baseline.buildDir]) {
          const cache = readFileSync(path.join(dir, 'CMakeCache.txt'), 'utf8');
          expect(cache).toMatch(/^CMAKE_BUILD_TYPE:\w+=Debug$/m);
          expect(cache).toMatch(/^CMAKE_COMPILE_WARNING_AS_ERROR:\w+=ON$/m);
          expect(cache).toMatch(/^USE_ASAN:\w+=ON$/m);
        }
        const cases = alone(result.json);
        // The new cases ran alone; only the one with the overflow has a report, and it is that case's failure.
        expect(Object.keys(cases).sort()).toEqual(['test MetalStorageView adds', 'test new overflow', 'test new ub']);
        expect(cases['test new overflow']?.reports[0]?.message).toMatch(/^heap-buffer-overflow on address/);
        expect(cases['test new overflow']?.reports[0]?.frames[0]).toMatch(/^#0 new_read\(\) .*new_tests\.cpp:\d+/);
        expect(cases['test new ub']?.reports).toEqual([]);
        expect(byName(result.json)).toMatchObject({
          'test new overflow': 'new-test-failed',
          'test new ub': 'new-test-passed',
          'test MetalStorageView adds': 'new-test-passed',
          // ASAN stopped the binary in this case on both trees.
          'test known overflow': 'pre-existing-failure',
          'test add': 'passed',
        });
        expect(result.json.sanitizer.rest).toMatchObject({ patched: 1, baseline: 1, extra: 0, compared: true });

        const human = await runCli(['test', '--offline', '--sanitize', 'asan'], { cwd: project, env });
        expect(human.stdout).toContain("stricter than MLX's sanitizer job");
        expect(human.stdout).toMatch(
          /^sanitizer-report: test new overflow\n {4}heap-buffer-overflow on address .*\n {6}#0 new_read\(\) /m,
        );
      },
      BUILD_TIMEOUT,
    );

    it(
      'ubsan: a report in a new case fails although its checks pass; the same number of reports as the baseline in the existing cases is pre-existing',
      async () => {
        const result = await run('test', '--offline', '--sanitize', 'ubsan');
        expect(result.code, result.stderr).toBe(8);
        expect(path.basename(result.json.buildDir)).toMatch(/^build-debug-ubsan-/);
        const cases = alone(result.json);
        expect(cases['test new ub']?.reports[0]?.message).toMatch(/new_tests\.cpp:\d+:\d+: signed integer overflow/);
        expect(cases['test new ub']?.reports[0]?.frames[0]).toMatch(/^#0 new_add\(int\) /);
        expect(cases['test new overflow']?.reports).toEqual([]);
        expect(byName(result.json)).toMatchObject({
          'test new ub': 'new-test-failed',
          'test new overflow': 'new-test-passed',
          'test known ub': 'passed',
        });
        expect(result.json.sanitizer.rest).toMatchObject({ patched: 1, baseline: 1, extra: 0 });
      },
      BUILD_TIMEOUT,
    );

    it(
      'verify --sanitize: one sanitizer item that fails naming the new case; the other build items build as without it',
      async () => {
        const skip = ['--skip', 'format', 'metal-typecheck', 'docs', 'pr-text', 'mutants'];
        const result = await run('verify', '--offline', '--sanitize', 'asan', ...skip);
        expect(result.code, result.stderr).toBe(1);
        const items = Object.fromEntries(
          result.json.checks.map((c: { id: string; status: string; detail: string }) => [c.id, c]),
        );
        expect(Object.keys(items)).toEqual([
          'linux-build',
          'tests-fail-without-implementation',
          'metal-twin',
          'sanitizer',
        ]);
        // The fixture has no Metal role: the twin is not checked, and the sanitizer item covers the suite only.
        expect(items['metal-twin'].status).toBe('not-checked');
        expect(items['sanitizer'].title).not.toContain('Metal twin');
        expect(items['sanitizer']).toMatchObject({ status: 'fail', required: true });
        expect(items['sanitizer'].detail).toMatch(/test new overflow: heap-buffer-overflow/);
        expect(items['sanitizer'].detail).toContain("stricter than MLX's sanitizer job");
        // The plain build is the Release build `test` makes, not the sanitizer's Debug one.
        expect(items['linux-build'].status).toBe('pass');
        expect(existsSync(path.join(project, '.work'))).toBe(true);
        const folders = readdirSync(path.join(project, '.work'));
        expect(folders.some((f) => /^build-release-/.test(f))).toBe(true);
        expect(folders.some((f) => /^build-debug-asan-/.test(f))).toBe(true);
      },
      2 * BUILD_TIMEOUT,
    );

    it(
      'check --build --sanitize: the report on the pinned commit fails by the sanitizer, with the case named',
      async () => {
        const result = await run('check', '--against', upstreamSha, '--build', '--offline', '--sanitize', 'ubsan');
        expect(result.code, result.stderr).toBe(8);
        const build = result.json.refs[0].build;
        expect(build.status).toBe('failed');
        const solo = Object.fromEntries(build.test.sanitizer.alone.map((c: Solo) => [c.name, c.reports.length]));
        expect(solo).toMatchObject({ 'test new ub': 1, 'test new overflow': 0 });
        expect(path.basename(build.test.buildDir)).toMatch(/^build-debug-ubsan-/);
      },
      BUILD_TIMEOUT,
    );
  },
);

describe.skipIf(!hasTools)(hasTools ? 'test --sanitize on the Metal twin' : `test --sanitize twin (${reason})`, () => {
  it(
    'fails on a twin case with a report, naming the case and its frames',
    async () => {
      const upstream = makeUpstream('twin/upstream', addSanitizerOptions);
      const project = makeProject(upstream.sha, 'twin/project');
      const env = { MLX_STORAGE_PR_CACHE: tempDir('msp-cache-'), CCACHE_DIR: ccacheDir() };
      appendFileSync(
        path.join(project, 'templates/{{metal_test_file}}'),
        heapOverflowCase('test twin overflow', 'twin_read'),
      );
      expect((await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project, env })).code).toBe(0);
      const args = ['test', '--offline', '--metal-twin', '--no-suite', '--sanitize', 'asan'];
      const result = await runCli([...args, '--json'], { cwd: project, env });
      expect(result.code, result.stderr).toBe(8);
      const twin = Object.fromEntries(
        result.json.twin.cases.map((c: { name: string; classification: string }) => [c.name, c.classification]),
      );
      expect(twin).toEqual({
        'test twin length': 'new-test-passed',
        'test twin contents': 'new-test-passed',
        'test twin overflow': 'new-test-failed',
      });
      const solo = alone(result.json)['test twin overflow'];
      expect(solo?.where).toBe('twin');
      expect(solo?.reports[0]?.frames[0]).toMatch(/^#0 twin_read\(\) /);
      const human = await runCli(args, { cwd: project, env });
      expect(human.stdout).toMatch(/^sanitizer-report: test twin overflow \(Metal twin\)\n {4}heap-buffer-overflow/m);
    },
    BUILD_TIMEOUT,
  );
});

describe.skipIf(!hasTools)(
  hasTools ? 'test --sanitize when the baseline does not build' : `test --sanitize not applicable (${reason})`,
  () => {
    it(
      'is "not applicable" with the unpatched tree\'s first error, and builds nothing of the patched tree',
      async () => {
        // A warning in the unpatched tree fails its build with warnings as errors, as MLX's sanitizer job builds.
        const upstream = makeUpstream('cmake-project/upstream', (dir) => {
          addSanitizerOptions(dir);
          appendFileSync(path.join(dir, 'src/lib.cpp'), '\n#warning "an old warning"\n');
        });
        const project = makeProject(upstream.sha, 'cmake-project/project');
        const env = { MLX_STORAGE_PR_CACHE: tempDir('msp-cache-'), CCACHE_DIR: ccacheDir() };
        expect((await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project, env })).code).toBe(0);
        const result = await runCli(['test', '--offline', '--sanitize', 'ubsan', '--json'], { cwd: project, env });
        expect(result.code, result.stderr).toBe(0);
        expect(result.json.sanitizer).toMatchObject({ status: 'not-applicable', name: 'UndefinedBehaviorSanitizer' });
        expect(result.json.sanitizer.reason).toMatch(/lib\.cpp:\d+:\d+: error: #warning "an old warning"/);
        expect(existsSync(path.join(result.json.buildDir, 'CMakeCache.txt'))).toBe(false);
        const human = await runCli(['test', '--offline', '--sanitize', 'ubsan'], { cwd: project, env });
        expect(human.stdout).toMatch(
          /^sanitizer: UndefinedBehaviorSanitizer \(--sanitize ubsan\): not applicable: the unpatched tree does not build with it: /m,
        );
      },
      BUILD_TIMEOUT,
    );
  },
);
