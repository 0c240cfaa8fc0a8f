import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { TWIN_DIR } from '../../src/suite/twin-run.js';
import { git, makeProject, makeUpstream, runCli, snapshot, tempDir, ccacheDir } from '../support/repos.js';

const hasTools = [
  '/usr/bin/cmake',
  '/usr/bin/nm',
  '/usr/bin/objcopy',
  '/usr/include/doctest/doctest.h',
  '/usr/lib/cmake/doctest/doctest.cmake',
].every(existsSync);
const reason =
  'skipped: needs cmake, a C++ compiler, binutils and doctest-dev (sudo apt-get install cmake g++ binutils doctest-dev)';
if (!hasTools) console.warn(`Metal twin integration: ${reason}`);

const SOURCE = 'templates/{{source_path}}';

let project: string;
let upstream: { dir: string; sha: string };
let env: Record<string, string>;
let checkout: string;

const run = (...args: string[]) => runCli([...args, '--json'], { cwd: project, env });
const names = (cases: Array<{ name: string }>) => cases.map((c) => c.name);
const read = (file: string) => readFileSync(path.join(project, file), 'utf8');
const write = (file: string, text: string) => writeFileSync(path.join(project, file), text);
const mutantsFile = () => JSON.parse(read('mutants.json')) as { mutants: Array<Record<string, string>> };
const onlyMutants = ['--skip', 'format', '--skip', 'metal-typecheck', '--skip', 'docs', '--skip', 'pr-text'];

/** Runs `body` with a file of the project changed, then puts the file back. */
async function withEdit(file: string, text: string, body: () => Promise<void>): Promise<void> {
  const before = read(file);
  write(file, text);
  try {
    await body();
  } finally {
    write(file, before);
  }
}

/** Runs `test --offline --tests <filter>` with the user's own CMAKE_PROJECT_INCLUDE, which keeps the twin from running. */
async function withOwnInclude(filter: string) {
  const mine = path.join(tempDir(), 'mine.cmake');
  writeFileSync(mine, "# the user's own\n");
  const result = await runCli(
    ['test', '--offline', '--tests', filter, '--json', '--', `-DCMAKE_PROJECT_INCLUDE=${mine}`],
    { cwd: project, env },
  );
  return { mine, result };
}

// One project for the whole file: cases run in order and reuse its build folder, as a user's runs would.
describe.skipIf(!hasTools)(hasTools ? 'Metal twin on a CMake + doctest fixture' : `Metal twin (${reason})`, () => {
  beforeAll(async () => {
    upstream = makeUpstream('twin/upstream');
    project = makeProject(upstream.sha, 'twin/project');
    env = { MLX_STORAGE_PR_CACHE: tempDir('msp-cache-'), CCACHE_DIR: ccacheDir() };
    const applied = await runCli(['apply', '--mlx-repo', upstream.dir, '--json'], { cwd: project, env });
    expect(applied.code, applied.stderr).toBe(0);
    checkout = applied.json.checkout as string;
  });

  it('runs the Metal-only cases against the twin, with the PR source in place of the stub', async () => {
    const result = await run('test', '--offline', '--metal-twin');
    expect(result.code, result.stderr).toBe(0);
    // The suite builds and runs the stub case; the twin runs the Metal-only cases.
    expect(result.json.cases.map((c: { name: string }) => c.name)).toContain('test stub length');
    expect(result.json.twin.summary).toMatchObject({ cases: 2, passed: 2, failed: 0 });
    expect(
      result.json.twin.cases.map((c: { name: string; classification: string }) => [c.name, c.classification]),
    ).toEqual([
      ['test twin length', 'new-test-passed'],
      ['test twin contents', 'new-test-passed'],
    ]);
    // Only the two stub definitions are weak in the copy; metal_available() in the same file is not.
    expect(result.json.twin.weakened).toEqual([
      { member: 'no_metal.cpp.o', symbol: '_Z13buffer_lengthPv' },
      { member: 'no_metal.cpp.o', symbol: '_Z15buffer_contentsPv' },
    ]);
    // The same build folder as the suite.
    expect(result.json.twin.binary.startsWith(result.json.buildDir)).toBe(true);
    expect(result.json.twin.chosenBy).toBe('metal-twin');
    const human = await runCli(['test', '--offline', '--metal-twin'], { cwd: project, env });
    expect(human.stdout).toContain('Metal twin (host stand-in for metal-cpp on a Linux build, not a Metal run)');
    expect(human.stdout).toContain('cannot show (only a Mac can)');
  });

  it('runs the twin alone with --no-suite, and --tests filters its cases', async () => {
    const result = await run('test', '--offline', '--metal-twin', '--no-suite', '--tests', '*length*');
    expect(result.code, result.stderr).toBe(0);
    expect(result.json.suiteRan).toBe(false);
    expect(result.json.cases).toEqual([]);
    expect(result.json.twin.cases.map((c: { name: string }) => c.name)).toEqual(['test twin length']);
  });

  it('--tests without --metal-twin runs the twin too when the filter matches a Metal-only case, and says so', async () => {
    const result = await run('test', '--offline', '--tests', '*LENGTH*');
    expect(result.code, result.stderr).toBe(0);
    expect(names(result.json.cases)).toEqual(['test buffer bytes follow the length', 'test stub length']);
    expect(result.json.twin.chosenBy).toBe('tests');
    expect(names(result.json.twin.cases)).toEqual(['test twin length']);
    expect(result.stderr).toContain(
      'Metal twin: the filter matches 1 Metal-only case(s); running them on the host twin (--no-metal-twin leaves it out)',
    );
    // A filter that matches only Metal-only cases: the suite runs none, and that is no usage error.
    const only = await run('test', '--offline', '--tests', 'test twin *,*nothing*');
    expect(only.code, only.stderr).toBe(0);
    expect(only.json.cases).toEqual([]);
    expect(names(only.json.twin.cases)).toEqual(['test twin length', 'test twin contents']);
    expect(only.stderr).toContain('Metal twin: the filter matches 2 Metal-only case(s)');
  });

  it('--no-metal-twin leaves the twin out, and a filter that matches no Metal-only case does not run it', async () => {
    const left = await run('test', '--offline', '--tests', '*length*', '--no-metal-twin');
    expect(left.code, left.stderr).toBe(0);
    expect(names(left.json.cases)).toEqual(['test buffer bytes follow the length', 'test stub length']);
    expect(left.json.twin).toBeNull();
    expect(left.stderr).not.toContain('Metal twin:');
    const stub = await run('test', '--offline', '--tests', '*stub*');
    expect(stub.code, stub.stderr).toBe(0);
    expect(names(stub.json.cases)).toEqual(['test stub length']);
    expect(stub.json.twin).toBeNull();
    expect(stub.stderr).not.toContain('Metal twin:');
  });

  it('--tests matching a Metal-only case where the twin cannot run: the suite runs, and one line says why', async () => {
    const { mine, result } = await withOwnInclude('*length*');
    expect(result.code, result.stderr).toBe(0);
    expect(names(result.json.cases)).toEqual(['test buffer bytes follow the length', 'test stub length']);
    expect(result.json.twin).toBeNull();
    const said = result.stderr.split('\n').filter((l) => l.startsWith('Metal twin:'));
    expect(said).toEqual([
      `Metal twin: the filter matches 1 Metal-only case(s), but the twin cannot run here: -DCMAKE_PROJECT_INCLUDE=${mine}: the Metal twin loads its CMake module (${path.join(TWIN_DIR, 'metal-twin.cmake')}) through CMAKE_PROJECT_INCLUDE, and this argument would replace it.`,
    ]);
  });

  it('a filter that matches only Metal-only cases where the twin cannot run: the error names the twin, not "matches none"', async () => {
    const { result } = await withOwnInclude('test twin length');
    expect(result.code, result.stderr).toBe(2);
    expect(result.json.error.code).toBe('USAGE');
    expect(result.json.error.message).toContain('matches 1 Metal-only case(s) and no other');
    expect(result.json.error.message).toContain('the twin cannot run here');
    expect(result.json.error.message).not.toContain('matches none');
    // The twin's own fix for what keeps it from running.
    expect(result.json.error.hint).toContain('CMAKE_PROJECT_TOP_LEVEL_INCLUDES');
  });

  it('reports a failing Metal-only case as a failure, with the template line', async () => {
    const broken = read(SOURCE).replace('->length())', '->length() - 1)');
    await withEdit(SOURCE, broken, async () => {
      expect((await run('apply')).code).toBe(0);
      const result = await run('test', '--offline', '--metal-twin', '--no-suite');
      expect(result.code).toBe(8);
      const failed = result.json.twin.cases.find((c: { name: string }) => c.name === 'test twin length');
      expect(failed.classification).toBe('new-test-failed');
      expect(failed.failures[0].origin).toContain('{{metal_test_file}}');
      const human = await runCli(['test', '--offline', '--metal-twin', '--no-suite'], { cwd: project, env });
      expect(human.stdout).toContain('twin-failed: test twin length');
    });
    expect((await run('apply')).code).toBe(0);
  });

  it('fails to build, naming the call, when the Metal source calls what the twin lacks', async () => {
    const calling = read(SOURCE).replace(
      '->contents();',
      '->contents();\n  (void)static_cast<MTL::Buffer*>(buffer)->gpuAddress();',
    );
    await withEdit(SOURCE, calling, async () => {
      expect((await run('apply')).code).toBe(0);
      const result = await run('test', '--offline', '--metal-twin', '--no-suite');
      expect(result.code).toBe(1);
      expect(result.json.error.code).toBe('BUILD_FAILED');
      expect(result.json.error.message).toContain('MTL::Buffer::gpuAddress');
      expect(result.json.error.hint).toContain('twin/Metal/Metal.hpp');
    });
    expect((await run('apply')).code).toBe(0);
  });

  it("names the call in a UTF-8 locale too (Debian's default LANG=C.UTF-8): the compiler runs with LC_ALL=C", async () => {
    const calling = read(SOURCE).replace(
      '->contents();',
      '->contents();\n  (void)static_cast<MTL::Buffer*>(buffer)->gpuAddress();',
    );
    await withEdit(SOURCE, calling, async () => {
      expect((await run('apply')).code).toBe(0);
      const result = await runCli(['test', '--offline', '--metal-twin', '--no-suite', '--json'], {
        cwd: project,
        env: { ...env, LANG: 'C.UTF-8' },
      });
      expect(result.code).toBe(1);
      expect(result.json.error.message).toContain('MTL::Buffer::gpuAddress, which the Metal twin');
      // In C.UTF-8, g++ would quote with ‘’; the C locale keeps its messages ASCII and untranslated.
      expect(result.json.error.message).toMatch(/'(class|struct) MTL::Buffer' has no member named 'gpuAddress'/);
    });
    expect((await run('apply')).code).toBe(0);
  });

  it('refuses a shared-library build, saying the twin is static-only', async () => {
    const result = await runCli(['test', '--offline', '--metal-twin', '--json', '--', '-DBUILD_SHARED_LIBS=ON'], {
      cwd: project,
      env,
    });
    expect(result.code).toBe(2);
    expect(result.json.error.message).toContain('static fixture library');
  });

  it('refuses a CMAKE_PROJECT_INCLUDE of the user, which would replace the module that defines the twin', async () => {
    const mine = path.join(tempDir(), 'mine.cmake');
    writeFileSync(mine, "# the user's own\n");
    const result = await runCli(
      ['test', '--offline', '--metal-twin', '--json', '--', `-DCMAKE_PROJECT_INCLUDE=${mine}`],
      { cwd: project, env },
    );
    expect(result.code).toBe(2);
    expect(result.json.error.code).toBe('USAGE');
    expect(result.json.error.message).toContain(`-DCMAKE_PROJECT_INCLUDE=${mine}`);
    expect(result.json.error.hint).toContain('CMAKE_PROJECT_TOP_LEVEL_INCLUDES');
  });

  it("check --build --metal-twin runs the Metal-only cases on the twin, built in check's tree for that commit, and says it is not a Metal run", async () => {
    // Upstream moved on in a file the series does not touch.
    git(upstream.dir, 'checkout', '--quiet', '-b', 'moved', upstream.sha);
    writeFileSync(path.join(upstream.dir, 'NEWS.md'), 'news\n');
    git(upstream.dir, 'add', 'NEWS.md');
    git(upstream.dir, 'commit', '--quiet', '-m', 'news');
    const moved = git(upstream.dir, 'rev-parse', 'HEAD').trim();
    git(upstream.dir, 'checkout', '--quiet', 'main');

    const args = ['check', '--mlx-repo', upstream.dir, '--against', moved, '--build', '--offline', '--metal-twin'];
    const result = await run(...args);
    expect(result.code, result.stderr).toBe(0);
    const [ref] = result.json.refs;
    expect([ref.commit, ref.status, ref.build.status]).toEqual([moved, 'clean', 'passed']);
    expect(ref.build.test.twin.summary).toMatchObject({ cases: 2, passed: 2, failed: 0 });
    expect(
      ref.build.test.twin.cases.map((c: { name: string; classification: string }) => [c.name, c.classification]),
    ).toEqual([
      ['test twin length', 'new-test-passed'],
      ['test twin contents', 'new-test-passed'],
    ]);
    // Built in check's own tree for that commit, not in the checkout's build folder.
    expect(ref.build.test.twin.binary.startsWith(path.join(project, '.work', 'check', moved.slice(0, 12)))).toBe(true);
    const human = await runCli(args, { cwd: project, env });
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain('Metal twin (not a Metal run): 2 case(s), 0 failed');
  });

  it('verify kills every mutant, in a scratch tree, leaving the checkout as it was', async () => {
    const before = snapshot(checkout);
    const result = await run('verify', '--offline', ...onlyMutants);
    const mutants = result.json.checks.find((c: { id: string }) => c.id === 'mutants');
    expect(mutants.status, mutants.detail).toBe('pass');
    expect(mutants.detail).toContain('all 2 mutants killed');
    // The Metal source's mutant is judged by the twin, the stub's by the suite's stub case.
    expect(mutants.detail).toMatch(/killed {3}"length off by one" \(twin, /);
    expect(mutants.detail).toMatch(/killed {3}"stub reports a length" \(suite, .*"test stub length"/);
    expect(result.json.checks.find((c: { id: string }) => c.id === 'metal-twin').status).toBe('pass');
    expect(result.code, result.stderr).toBe(0);
    expect(snapshot(checkout)).toBe(before);
  });

  it('verify keeps a passing mutant result for exactly this series, mutants.json and build, and runs them again after a change', async () => {
    expect((await run('verify', '--offline', ...onlyMutants)).code).toBe(0);
    const mutantsOf = (result: { json: { checks: Array<{ id: string; detail: string }> } }) =>
      result.json.checks.find((c) => c.id === 'mutants')!;
    const again = await run('verify', '--offline', ...onlyMutants);
    expect(again.code, again.stderr).toBe(0);
    expect(mutantsOf(again).detail).toContain(
      '(saved result; the series, mutants.json and build options are unchanged)',
    );
    expect(again.stderr).not.toContain('mutant "length off by one"');

    const list = mutantsFile();
    list.mutants[0]!['why'] = 'The reported length must be exact (reworded).';
    await withEdit('mutants.json', JSON.stringify(list, null, 2), async () => {
      const changed = await run('verify', '--offline', ...onlyMutants);
      expect(changed.code, changed.stderr).toBe(0);
      expect(mutantsOf(changed).detail).not.toContain('saved result');
      expect(changed.stderr).toContain('mutant "length off by one"');
    });
  });

  it('verify names a mutant that no case kills', async () => {
    const list = mutantsFile();
    list.mutants.push({
      name: 'same value, other spelling',
      file: '{{source_path}}',
      find: 'return static_cast<long>(',
      replace: 'return (long)(',
      why: 'An equivalent mutant: nothing can tell it apart.',
      judge: 'twin',
    });
    await withEdit('mutants.json', JSON.stringify(list, null, 2), async () => {
      const result = await run('verify', '--offline', ...onlyMutants);
      const mutants = result.json.checks.find((c: { id: string }) => c.id === 'mutants');
      expect(mutants.status).toBe('fail');
      expect(mutants.detail).toContain('1 of 3 mutant(s) survive: "same value, other spelling"');
      expect(mutants.fix).toContain('surviving mutant');
      expect(result.code).toBe(1);
    });
  });

  it('verify names a mutant whose text is no longer in the source, before building anything', async () => {
    const list = mutantsFile();
    list.mutants[0]!['find'] = '->size())';
    await withEdit('mutants.json', JSON.stringify(list, null, 2), async () => {
      const result = await run('verify', '--offline', ...onlyMutants);
      const mutants = result.json.checks.find((c: { id: string }) => c.id === 'mutants');
      expect(mutants.status).toBe('fail');
      expect(mutants.detail).toContain('"length off by one": its text is no longer in src/metal/view.cpp');
      expect(result.stderr).not.toContain('mutant "');
    });
  });
});
