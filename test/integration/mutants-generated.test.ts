import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { makeProject, makeUpstream, runCli, tempDir, ccacheDir } from '../support/repos.js';

const hasTools = [
  '/usr/bin/cmake',
  '/usr/bin/nm',
  '/usr/bin/objcopy',
  '/usr/include/doctest/doctest.h',
  '/usr/lib/cmake/doctest/doctest.cmake',
].every(existsSync);
const reason =
  'skipped: needs cmake, a C++ compiler, binutils and doctest-dev (sudo apt-get install cmake g++ binutils doctest-dev)';

const STUB_TEST = 'templates/{{stub_test_file}}';
/** The stub's `return -1;` (patches/0001-no-metal-stub.patch) with 1 made 2: `return -2;`. */
const MINUS_TWO = 'src/no_metal.cpp:6:11:scalar_value_mutator:plus_one';

/** Builds of the fixture, its twin and the mutants' trees; minutes on a busy machine. */
const TIMEOUT = 20 * 60_000;

let project: string;
let env: Record<string, string>;

const read = (file: string) => readFileSync(path.join(project, file), 'utf8');
const write = (file: string, text: string) => writeFileSync(path.join(project, file), text);
const generated = ['--mutants', 'generated', '--skip', 'format', '--skip', 'metal-typecheck', '--skip', 'docs'];
const onlyMutants = [...generated, '--skip', 'pr-text', '--skip', 'tests-fail-without-implementation'];

async function verifyMutants() {
  const result = await runCli(['verify', '--offline', ...onlyMutants, '--json'], { cwd: project, env });
  // A run that stopped with an error has no checks: show why.
  expect(result.json.checks, `${result.stdout}\n${result.stderr}`).toBeDefined();
  const item = (result.json.checks as Array<{ id: string; status: string; detail: string; fix?: string }>).find(
    (c) => c.id === 'mutants',
  )!;
  return { ...result, item };
}

async function apply(): Promise<void> {
  const applied = await runCli(['apply', '--json'], { cwd: project, env });
  expect(applied.code, applied.stderr).toBe(0);
}

// One project for the whole file: the cases run in order and share its builds and saved results.
describe.skipIf(!hasTools)(
  hasTools ? 'generated mutants on a CMake + doctest fixture' : `generated mutants (${reason})`,
  () => {
    beforeAll(async () => {
      const upstream = makeUpstream('twin/upstream');
      project = makeProject(upstream.sha, 'twin/project');
      env = { MLX_STORAGE_PR_CACHE: tempDir('msp-cache-'), CCACHE_DIR: ccacheDir() };
      // A weak stub test: any negative length passes it.
      write(
        STUB_TEST,
        read(STUB_TEST).replace(
          'CHECK_EQ(buffer_length(new_buffer(8)), -1);',
          'CHECK(buffer_length(new_buffer(8)) < 0);',
        ),
      );
      const applied = await runCli(['apply', '--mlx-repo', upstream.dir, '--json'], { cwd: project, env });
      expect(applied.code, applied.stderr).toBe(0);
    }, TIMEOUT);

    it(
      'fails verify on a mutant that a weak test lets survive, naming it, its lines and its patch line',
      async () => {
        const { code, item } = await verifyMutants();
        expect(code).toBe(1);
        expect(item.status).toBe('fail');
        expect(item.detail).toMatch(/^2 generated, 0 not viable, 1 killed, 1 survived, 0 equivalent: score 50\.0%/);
        expect(item.detail).toContain(`survived ${MINUS_TWO}: 1 -> 2 (from patches/0001-no-metal-stub.patch:`);
        expect(item.detail).toContain('  - return -1;\n  + return -2;');
        expect(item.fix).toContain('mutants-equivalent.json');
      },
      TIMEOUT,
    );

    it(
      'passes with an equivalent-mutant entry, showing its reason, and reports a stale entry',
      async () => {
        const entry = { id: MINUS_TWO, mutated: 'return -2;', reason: 'Callers only test the sign of the length.' };
        write('mutants-equivalent.json', JSON.stringify({ equivalent: [entry] }, null, 2));
        const passing = await verifyMutants();
        expect(passing.item.status, passing.item.detail).toBe('pass');
        expect(passing.item.detail).toMatch(/1 killed, 0 survived, 1 equivalent: score 100\.0%/);
        expect(passing.item.detail).toContain(`equivalent ${MINUS_TWO}: Callers only test the sign of the length.`);
        // Judged outcomes are kept: nothing is built again.
        expect(passing.item.detail).toContain('(0 run now, 1 saved;');

        const moved = {
          id: 'src/no_metal.cpp:7:11:scalar_value_mutator:plus_one',
          mutated: 'return -2;',
          reason: 'Code that moved.',
        };
        write('mutants-equivalent.json', JSON.stringify({ equivalent: [entry, moved] }, null, 2));
        const stale = await verifyMutants();
        expect(stale.code).toBe(1);
        expect(stale.item.detail).toContain(`stale mutants-equivalent.json entry ${moved.id}: no such mutant`);
        expect(stale.item.fix).toContain('Remove or update the stale entries');
        rmSync(path.join(project, 'mutants-equivalent.json'));
      },
      TIMEOUT,
    );

    it(
      'passes once a stronger test kills the mutant',
      async () => {
        write(
          STUB_TEST,
          read(STUB_TEST).replace(
            'CHECK(buffer_length(new_buffer(8)) < 0);',
            'CHECK_EQ(buffer_length(new_buffer(8)), -1);',
          ),
        );
        await apply();
        const { code, item, stderr } = await verifyMutants();
        expect(item.detail).toMatch(/^2 generated, 0 not viable, 2 killed, 0 survived, 0 equivalent: score 100\.0%/);
        expect(code, stderr.slice(-2000)).toBe(0);
        expect(stderr).toContain(`mutant ${MINUS_TWO}`);
      },
      TIMEOUT,
    );

    it(
      'runs no mutant again when nothing changed',
      async () => {
        const { code, item, stderr } = await verifyMutants();
        expect(code).toBe(0);
        expect(item.detail).toContain('(0 run now, 2 saved;');
        expect(stderr).not.toContain('mutant src/');
      },
      TIMEOUT,
    );
  },
);
