import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { makeProject, makeUpstream, runCli, tempDir, ccacheDir } from '../support/repos.js';

const hasTools = ['/usr/bin/cmake', '/usr/include/doctest/doctest.h', '/usr/lib/cmake/doctest/doctest.cmake'].every(
  existsSync,
);
const reason = 'skipped: needs cmake, a C++ compiler and doctest-dev (sudo apt-get install cmake g++ doctest-dev)';

let project: string;
let env: Record<string, string>;

const run = (...args: string[]) => runCli([...args, '--json'], { cwd: project, env });
const cache = (buildDir: string) => readFileSync(path.join(buildDir, 'CMakeCache.txt'), 'utf8');

describe.skipIf(!hasTools)(
  hasTools ? "test --upstream-ci: MLX's Linux CI leg" : `test --upstream-ci (${reason})`,
  () => {
    beforeAll(async () => {
      const upstream = makeUpstream('cmake-project/upstream');
      project = makeProject(upstream.sha, 'cmake-project/project');
      env = { MLX_STORAGE_PR_CACHE: tempDir('msp-cache-'), CCACHE_DIR: ccacheDir() };
      const applied = await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project, env });
      expect(applied.code, applied.stderr).toBe(0);
    });

    it('builds the patched tree and the baseline in Debug, with shared libraries and warnings as errors', async () => {
      const result = await run('test', '--offline', '--upstream-ci');
      expect(result.code, result.stderr).toBe(0);
      expect(path.basename(result.json.buildDir)).toMatch(/^build-debug-/);
      expect(result.json.baseline.used).toBe(true);
      for (const dir of [result.json.buildDir, result.json.baseline.buildDir]) {
        const text = cache(dir);
        expect(text).toMatch(/^CMAKE_BUILD_TYPE:\w+=Debug$/m);
        expect(text).toMatch(/^BUILD_SHARED_LIBS:\w+=ON$/m);
        expect(text).toMatch(/^CMAKE_COMPILE_WARNING_AS_ERROR:\w+=ON$/m);
      }
    });

    it.skipIf(!existsSync('/usr/bin/g++-11'))(
      "builds both trees with g++-11, MLX's Linux CI compiler, when it is on PATH, and names it in the report",
      async () => {
        const result = await run('test', '--offline', '--upstream-ci');
        expect(result.code, result.stderr).toBe(0);
        expect(result.json.compiler).toMatchObject({ command: 'g++-11', chosenBy: 'upstream-ci' });
        expect(result.json.compiler.version).toMatch(/^g\+\+-11 .* 11\.\d+\.\d+/);
        for (const dir of [result.json.buildDir, result.json.baseline.buildDir])
          expect(cache(dir)).toMatch(/^CMAKE_CXX_COMPILER:\w+=\S*g\+\+-11$/m);
        const human = await runCli(['test', '--offline', '--upstream-ci'], { cwd: project, env });
        expect(human.stdout).toMatch(/^compiler: g\+\+-11 .*\(--upstream-ci: g\+\+-11, MLX's Linux CI compiler\)$/m);
        // Another compiler is another build folder: the key holds the compiler's --version.
        const other = await run('test', '--offline', '--upstream-ci', '--cxx', 'g++');
        expect(other.code, other.stderr).toBe(0);
        expect(other.json.compiler).toMatchObject({ command: 'g++', chosenBy: 'cxx' });
        expect(other.json.buildDir).not.toBe(result.json.buildDir);
      },
    );

    it('fails on a warning in the series that the default build lets through', async () => {
      appendFileSync(path.join(project, 'templates/tests/new_tests.cpp'), '\n#warning "a new warning"\n');
      expect((await run('apply')).code).toBe(0);

      const plain = await run('test', '--offline');
      expect(plain.code, plain.stderr).toBe(0);

      const ci = await run('test', '--offline', '--upstream-ci');
      expect(ci.code).toBe(1);
      expect(ci.json.error.code).toBe('BUILD_FAILED');
      expect(ci.json.error.message).toContain('a new warning');
    });
  },
);
