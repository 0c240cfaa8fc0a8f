import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import type { ReportItem } from '../../src/core/report-items.js';
import { addMulImplementation, MUL_TEST } from '../support/mul-fixture.js';
import { makeProject, makeUpstream, runCli, tempDir, ccacheDir } from '../support/repos.js';

const hasTools = ['/usr/bin/cmake', '/usr/include/doctest/doctest.h', '/usr/lib/cmake/doctest/doctest.cmake'].every(
  existsSync,
);
const reason = 'skipped: needs cmake, a C++ compiler and doctest-dev (sudo apt-get install cmake g++ doctest-dev)';
if (!hasTools) console.warn(`verify build checks: ${reason}`);

// The fixture series gains an implementation and a test of it (addMulImplementation,
// MUL_TEST); the test-only part of the series must then fail.
const ADD_TEST =
  '#include "doctest/doctest.h"\n#include "src/lib.h"\n\nTEST_CASE("test add again") {\n  CHECK_EQ(add(6, 7), 13);\n}\n';

let project: string;
let env: Record<string, string>;
const write = (file: string, text: string) => {
  mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
  writeFileSync(path.join(project, file), text);
};

async function buildItems() {
  expect((await runCli(['apply'], { cwd: project, env })).code).toBe(0);
  const result = await runCli(['verify', '--offline', '--json'], { cwd: project, env });
  const checks = result.json.checks as ReportItem[];
  const find = (id: string) => {
    const check = checks.find((c) => c.id === id);
    if (!check) throw new Error(`verify reported no ${id} check`);
    return check;
  };
  return { linux: find('linux-build'), without: find('tests-fail-without-implementation'), code: result.code };
}

describe.skipIf(!hasTools)(
  hasTools ? 'verify: build checks on a CMake + doctest fixture' : `verify build checks (${reason})`,
  () => {
    beforeAll(() => {
      const upstream = makeUpstream('cmake-project/upstream');
      project = makeProject(upstream.sha, 'cmake-project/project');
      env = { MLX_STORAGE_PR_CACHE: tempDir('msp-cache-'), CCACHE_DIR: ccacheDir(), MLX_REPO: upstream.dir };
      addMulImplementation(project);
    });

    it('without --offline and without network, the build check gives the whole reason and names --offline', async () => {
      expect((await runCli(['apply'], { cwd: project, env })).code).toBe(0);
      const result = await runCli(['verify', '--json'], { cwd: project, env });
      const linux = (result.json.checks as ReportItem[]).find((c) => c.id === 'linux-build');
      expect(linux).toMatchObject({ status: 'fail', required: true });
      expect(linux?.detail).toContain('127.0.0.1:9 (http://127.0.0.1:9/doctest.git in tests/CMakeLists.txt)');
      expect(linux?.fix).toContain('--offline');
      const human = await runCli(['verify'], { cwd: project, env });
      expect(human.stdout).toMatch(/FAIL Linux build and test suite against the baseline: .*\n {5}.*127\.0\.0\.1:9/);
    });

    it('passes when the new test does not compile without the implementation', async () => {
      write('templates/tests/new_tests.cpp', MUL_TEST);
      const { linux, without } = await buildItems();
      expect(linux).toMatchObject({ status: 'pass' });
      expect(linux.detail).toContain('1 new test(s) passing');
      expect(without).toMatchObject({ status: 'pass' });
      expect(without.detail).toContain('do not compile');
      // verify's tree carries the mark the tool writes into what it makes: clean may remove it.
      expect(existsSync(path.join(project, '.work', 'without-implementation', '.mlx-storage-pr'))).toBe(true);
    });

    it('reuses the saved suite results and the saved result without the implementation while nothing changed', async () => {
      const tree = path.join(project, '.work', 'without-implementation', 'mlx');
      rmSync(tree, { recursive: true, force: true });
      const { linux, without } = await buildItems();
      expect(linux.detail).toContain('saved results');
      expect(without).toMatchObject({ status: 'pass' });
      expect(without.detail).toContain('do not compile');
      expect(without.detail).toContain('(saved result; the series and build options are unchanged)');
      // Nothing was built again: the tree without the implementation was not even made.
      expect(existsSync(tree)).toBe(false);
    });

    it('fails when a new test passes without the implementation', async () => {
      write('templates/tests/new_tests.cpp', ADD_TEST);
      const { linux, without, code } = await buildItems();
      expect(linux).toMatchObject({ status: 'pass' });
      expect(without).toMatchObject({
        status: 'fail',
        detail: 'these cases pass without the implementation: test add again',
      });
      expect(code).toBe(1);
    });

    it('fails the build check on a new failure', async () => {
      write('templates/tests/new_tests.cpp', MUL_TEST.replace('42', '43'));
      const { linux } = await buildItems();
      expect(linux.status).toBe('fail');
      expect(linux.detail).toContain('1 failing new test(s)');
    });
  },
);
