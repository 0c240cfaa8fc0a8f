import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { BLAS_SEARCH, inspectBlas } from '../../src/suite/build-tools.js';
import { FIXTURES, pathWith, REPO_ROOT, runCli, tempDir } from '../support/repos.js';

const byId = (json: { checks: Array<{ id: string; status: string }> }) =>
  Object.fromEntries(json.checks.map((c) => [c.id, c]));
const readiness = (json: {
  commands: Array<{ command: string; ready: boolean; missing: string[]; optionalMissing: string[] }>;
}) => Object.fromEntries(json.commands.map((c) => [c.command, c]));
const doctor = (args: string[], PATH: string) => runCli(['doctor', ...args], { cwd: FIXTURES, env: { PATH } });

describe('doctor', () => {
  it('marks what a command can do without as optional, not FAIL, and calls the command ready', async () => {
    // Only git: no cmake-format, uvx or pipx; clang-format is bundled.
    const PATH = pathWith('git');
    const human = await doctor(['format'], PATH);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('format: ready\n');
    expect(human.stdout).toMatch(
      /^ {2}opt {2}cmake-format 0\.6\.13: cmake-format 0\.6\.13 not found .*\(optional: without it, CMake files are reported as not checked\)$/m,
    );
    expect(human.stdout).not.toContain('FAIL');
    expect(human.stdout).toContain('Ready: format.');
    const json = (await doctor(['format', '--json'], PATH)).json;
    expect(json).toMatchObject({ ok: true, ready: true, asked: ['format'] });
    expect(readiness(json)['format']).toMatchObject({ ready: true, missing: [], optionalMissing: ['cmake-format'] });
  });

  it('says verify is not ready without cmake-format and Sphinx, names the fixes and exits 9', async () => {
    const PATH = pathWith('git');
    const result = await doctor(['verify', '--json'], PATH);
    expect(result.code).toBe(9);
    expect(result.json).toMatchObject({ ok: false, ready: false, asked: ['verify'] });
    expect(readiness(result.json)['verify']?.missing).toEqual(
      expect.arrayContaining(['cmake', 'cmake-format', 'sphinx']),
    );
    const checks = byId(result.json);
    expect(checks['sphinx']).toMatchObject({
      status: 'fail',
      required: true,
      fix: process.platform === 'darwin' ? 'pip install sphinx' : 'sudo apt-get install python3-sphinx',
    });
    expect(checks['cmake-format']).toMatchObject({ status: 'fail', required: true });
    // The Metal type-check is optional for verify unless asked for.
    expect(checks['metal-clang']).toMatchObject({ required: false });
    const human = await doctor(['verify'], PATH);
    expect(human.code).toBe(9);
    expect(human.stdout).toContain('verify: NOT READY\n');
    expect(human.stdout).toMatch(/^ {2}FAIL Sphinx \(sphinx-build\): sphinx-build not found$/m);
    expect(human.stdout).toMatch(/^Not ready: verify \(needs .*cmake-format 0\.6\.13.*Sphinx \(sphinx-build\).*\)\.$/m);
    expect(human.stdout).not.toContain('Ready: ');
  });

  it('checks only what the named commands need, and every command when none is named', async () => {
    const PATH = pathWith('git');
    const apply = await doctor(['apply', '--json'], PATH);
    expect(apply.code).toBe(0);
    expect(apply.json.checks.map((c: { id: string }) => c.id)).toEqual(['git']);
    const all = await doctor(['--json'], PATH);
    expect(all.code).toBe(9);
    expect(all.json.asked).toEqual(['apply', 'test', 'format', 'check-metal', 'verify']);
    expect(readiness(all.json)['apply']).toMatchObject({ ready: true });
    expect(readiness(all.json)['check-metal']).toMatchObject({ ready: false });
    // metal-cpp too, unless this machine has it cached or can download it.
    expect(readiness(all.json)['check-metal']?.missing).toEqual(
      expect.arrayContaining(['metal-clang', 'metal-libcxx']),
    );
  });

  it('fails a command whose required tool is missing: apply without git', async () => {
    const result = await doctor(['apply'], path.join(tempDir(), 'empty-bin'));
    expect(result.code).toBe(9);
    expect(result.stdout).toContain('apply: NOT READY\n  FAIL git: git not found\n');
  });

  it('requires the offline dependencies only when asked for --offline', async () => {
    const PATH = pathWith('git');
    const plain = await runCli(['doctor', 'test', '--json'], { cwd: FIXTURES, env: { PATH } });
    const offline = await runCli(['doctor', 'test', '--offline', '--json'], { cwd: FIXTURES, env: { PATH } });
    const offlineChecks = (json: { checks: Array<{ id: string; required: boolean }> }) =>
      json.checks.filter((c) => c.id.startsWith('offline-'));
    expect(offlineChecks(plain.json).length).toBeGreaterThan(0);
    expect(offlineChecks(plain.json).every((c) => !c.required)).toBe(true);
    expect(offlineChecks(offline.json).every((c) => c.required)).toBe(true);
  });

  it('rejects a command it does not know as a usage error', async () => {
    const result = await doctor(['tset', '--json'], pathWith('git'));
    expect(result.code).toBe(2);
    expect(result.json.error).toMatchObject({ code: 'USAGE' });
    expect(result.json.error.message).toContain('"tset"');
    expect(result.json.error.hint).toContain('apply, test, format, check-metal, verify');
  });
});

const blasInstalled =
  process.platform === 'linux' &&
  ['/usr/include/x86_64-linux-gnu/cblas.h', '/usr/include/aarch64-linux-gnu/cblas.h', '/usr/include/cblas.h'].some(
    existsSync,
  ) &&
  existsSync('/usr/include/lapacke.h');
const blasReason = 'skipped: needs Linux with libopenblas-dev and liblapacke-dev installed';
if (!blasInstalled) console.warn(`doctor BLAS/LAPACK: ${blasReason}`);

describe.skipIf(!blasInstalled)(
  blasInstalled ? 'doctor on Linux with BLAS/LAPACK installed' : `doctor BLAS/LAPACK (${blasReason})`,
  () => {
    it('finds the libraries on a user PATH without /sbin, where ldconfig lives', async () => {
      const result = await runCli(['doctor', 'test', '--json'], {
        cwd: FIXTURES,
        env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
      });
      expect(byId(result.json)['blas']).toMatchObject({
        status: 'pass',
        detail: 'cblas.h, lapacke.h, libblas, liblapack',
      });
    });

    it("reads ldconfig's cache by its full path when the library folders are not the usual ones", async () => {
      const check = await inspectBlas({ PATH: '/usr/local/bin:/usr/bin:/bin' }, 'linux', {
        ...BLAS_SEARCH,
        libDirs: [],
      });
      expect(check).toMatchObject({ status: 'pass', detail: 'cblas.h, lapacke.h, libblas, liblapack' });
    });
  },
);

describe.skipIf(process.platform !== 'linux')(
  process.platform === 'linux'
    ? 'doctor BLAS/LAPACK check'
    : 'doctor BLAS/LAPACK check (skipped: Linux only; macOS uses Accelerate)',
  () => {
    it('names what is missing and the packages that provide it', async () => {
      const empty = tempDir();
      const check = await inspectBlas({ PATH: '/usr/bin:/bin' }, 'linux', {
        headerDirs: [empty],
        libDirs: [empty],
        ldconfig: [path.join(empty, 'ldconfig')],
      });
      expect(check).toMatchObject({
        status: 'fail',
        detail: 'missing cblas.h, lapacke.h, libblas, liblapack',
        fix: 'sudo apt-get install libopenblas-dev liblapacke-dev',
        required: true,
      });
    });
  },
);

describe('doctor checks what docs/commands.md says it checks', () => {
  // A proxy on a closed local port: the metal-cpp host cannot be reached, whatever this machine's network.
  const NO_NETWORK = { HTTPS_PROXY: 'http://127.0.0.1:9', https_proxy: 'http://127.0.0.1:9' };
  const run = (args: string[], env: Record<string, string>) =>
    runCli(['doctor', ...args], { cwd: FIXTURES, env: { ...NO_NETWORK, ...env } });

  it.skipIf(process.platform === 'darwin')(
    "lists binutils' nm and objcopy for the twin and the mutants: optional for test, required for verify",
    async () => {
      const PATH = pathWith('git');
      const test = await run(['test', '--json', '--workdir', tempDir()], { PATH });
      expect(byId(test.json)['twin']).toMatchObject({
        status: 'warn',
        required: false,
        fix: 'sudo apt-get install binutils',
      });
      expect(readiness(test.json)['test']?.optionalMissing).toContain('twin');
      const verify = await run(['verify', '--json', '--workdir', tempDir()], { PATH });
      expect(byId(verify.json)['twin']).toMatchObject({ required: true });
      expect(readiness(verify.json)['verify']?.missing).toContain('twin');
      const human = await run(['test', '--workdir', tempDir()], { PATH });
      expect(human.stdout).toMatch(/^ {2}opt {2}Metal twin tools \(nm, objcopy\): nm not found/m);
    },
  );

  it('check-metal needs metal-cpp: not cached and its host unreachable is FAIL naming --metal-cpp; cached is ok', async () => {
    const workdir = tempDir();
    const PATH = pathWith('git');
    const missing = await run(['check-metal', '--json', '--workdir', workdir], { PATH });
    expect(byId(missing.json)['metal-cpp']).toMatchObject({ status: 'fail', required: true });
    expect((byId(missing.json)['metal-cpp'] as unknown as { detail: string }).detail).toContain('cannot be reached');
    expect((byId(missing.json)['metal-cpp'] as unknown as { fix: string }).fix).toContain('--metal-cpp');
    expect(readiness(missing.json)['check-metal']?.missing).toContain('metal-cpp');

    const cached = path.join(workdir, 'metal-cpp', 'metal-cpp_26', 'metal-cpp', 'Metal');
    mkdirSync(cached, { recursive: true });
    writeFileSync(path.join(cached, 'Metal.hpp'), '// stand-in\n');
    const present = await run(['check-metal', '--json', '--workdir', workdir], { PATH });
    expect(byId(present.json)['metal-cpp']).toMatchObject({ status: 'pass' });
    expect((byId(present.json)['metal-cpp'] as unknown as { detail: string }).detail).toContain(path.dirname(cached));
  });

  it('offline, metal-cpp set once (MLX_STORAGE_PR_METAL_CPP) is ok without a probe; unset, FAIL naming the variable', async () => {
    const workdir = tempDir();
    const PATH = pathWith('git');
    const given = path.join(tempDir(), 'metal-cpp');
    mkdirSync(path.join(given, 'Metal'), { recursive: true });
    writeFileSync(path.join(given, 'Metal', 'Metal.hpp'), '// stand-in\n');
    const set = await run(['check-metal', '--offline', '--json', '--workdir', workdir], {
      PATH,
      MLX_STORAGE_PR_METAL_CPP: given,
    });
    expect(byId(set.json)['metal-cpp']).toMatchObject({ status: 'pass' });
    expect((byId(set.json)['metal-cpp'] as unknown as { detail: string }).detail).toContain(given);
    const unset = await run(['check-metal', '--offline', '--json', '--workdir', workdir], { PATH });
    expect(byId(unset.json)['metal-cpp']).toMatchObject({ status: 'fail' });
    expect((byId(unset.json)['metal-cpp'] as unknown as { fix: string }).fix).toContain('MLX_STORAGE_PR_METAL_CPP');
  });
});

describe('the doctor table of docs/commands.md', () => {
  /** Per command: the required and optional check ids of the table (`offline-*` for the family). */
  function readmeTable(): Record<string, { required: string[]; optional: string[] }> {
    const page = readFileSync(path.join(REPO_ROOT, 'docs', 'commands.md'), 'utf8');
    const section = page.slice(page.indexOf('## `doctor`'), page.indexOf('The check ids'));
    const ids = (cell: string) =>
      [...cell.matchAll(/`([a-z0-9*+-]+)`( \(macOS\))?/g)]
        .filter((m) => m[2] === undefined || process.platform === 'darwin')
        .map((m) => m[1] as string);
    const rows = section.split('\n').filter((l) => /^\| `[a-z-]+` \|/.test(l));
    return Object.fromEntries(
      rows.map((row) => {
        const [, command, required, optional] = row.split('|').map((c) => c.trim());
        return [command!.replace(/`/g, ''), { required: ids(required!), optional: ids(optional!) }];
      }),
    );
  }

  it('lists, per command, exactly the check ids `doctor <command> --json` reports as required and optional', async () => {
    const table = readmeTable();
    expect(Object.keys(table)).toEqual(['apply', 'test', 'format', 'check-metal', 'verify']);
    const workdir = tempDir();
    for (const [command, want] of Object.entries(table)) {
      const result = await runCli(['doctor', command, '--json', '--workdir', workdir], {
        cwd: FIXTURES,
        env: { PATH: process.env['PATH'], HTTPS_PROXY: 'http://127.0.0.1:9', https_proxy: 'http://127.0.0.1:9' },
      });
      const checks = result.json.checks as Array<{ id: string; required: boolean }>;
      const family = (id: string) => (id.startsWith('offline-') ? 'offline-*' : id);
      const got = (required: boolean) => [
        ...new Set(checks.filter((c) => c.required === required).map((c) => family(c.id))),
      ];
      expect({ command, required: got(true), optional: got(false) }).toEqual({ command, ...want });
    }
  });
});
