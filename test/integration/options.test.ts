import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { makeProject, makeUpstream, runCli, tempDir } from '../support/repos.js';

let project: string;

beforeAll(() => {
  project = makeProject(makeUpstream().sha);
});

const run = (...args: string[]) => runCli(args, { cwd: project });

describe('option values are checked before anything runs', () => {
  // What each command needs besides the option under test, so that the option is what stops it.
  const needs: Record<string, string[]> = {
    check: ['--against', 'v0', '--build'],
    pr: ['--push', '--fork', path.join(tempDir(), 'fork.git')],
  };
  for (const command of ['check-metal', 'verify', 'check', 'pr']) {
    for (const jobs of ['abc', '0', '-3', '1.5']) {
      it(`${command} --jobs ${jobs} is a usage error`, async () => {
        const result = await run(command, ...(needs[command] ?? []), '--jobs', jobs);
        expect(result.code).toBe(2);
        expect(result.stderr).toContain(`--jobs must be a whole number of at least 1 (got "${jobs}")`);
      });
    }
  }

  it('-j 2 and --jobs=3 are accepted', async () => {
    // Without a checkout both stop later, with NOT_APPLIED, not with a usage error.
    expect((await run('check-metal', '-j', '2', '--json')).json.error?.code).not.toBe('USAGE');
    expect((await run('verify', '--jobs=3', '--json')).code).not.toBe(2);
  });

  it('a CMake argument before -- says to put it after --', async () => {
    const result = await run('test', '-DMLX_BUILD_METAL=OFF', '--offline');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      '-DMLX_BUILD_METAL=OFF: put CMake arguments after --, e.g. `mlx-storage-pr test --offline -- -DMLX_BUILD_METAL=OFF`',
    );
    expect(result.stderr).not.toContain('Unknown arguments');
  });

  for (const command of ['test', 'verify', 'doctor', 'check', 'pr']) {
    it(`${command} --deps-dir naming no folder is a usage error`, async () => {
      const missing = path.join(tempDir(), 'deps');
      const result = await run(command, ...(needs[command] ?? []), '--deps-dir', missing, '--json');
      expect(result.code).toBe(2);
      expect(result.json.error).toMatchObject({ code: 'USAGE', message: `--deps-dir ${missing}: no such folder.` });
    });
  }

  it('--deps-dir at a folder with none of the dependencies is a usage error naming the layout', async () => {
    const empty = tempDir();
    const result = await run('test', '--deps-dir', empty, '--json');
    expect(result.code).toBe(2);
    expect(result.json.error.message).toBe(`--deps-dir ${empty} holds none of json, doctest, fmt, gguflib, metal_cpp.`);
  });

  it('an option that takes one value, given twice, is a usage error naming both values', async () => {
    const first = path.join(tempDir(), 'a');
    const second = path.join(tempDir(), 'b');
    const result = await run('status', '--workdir', first, '--workdir', second, '--json');
    expect(result.code).toBe(2);
    expect(result.json.error).toMatchObject({
      code: 'USAGE',
      message: `--workdir was given 2 times (${first}, ${second}); give it once.`,
    });
  });

  it('an option that takes several values may be repeated', async () => {
    const result = await run('check', '--against', 'v0', '--against', 'v1', '--json');
    expect(result.json.error?.code).not.toBe('USAGE');
  });

  it('an unknown command is a usage error that names a near command, and none when no command is near', async () => {
    const typo = await run('aply', '--json');
    expect(typo.code).toBe(2);
    expect(typo.json.error).toMatchObject({ code: 'USAGE', message: 'Unknown command: aply. Did you mean apply?' });
    expect((await run('zzz-nothing', '--json')).json.error.message).toBe('Unknown command: zzz-nothing');
    expect((await run('--json')).json.error.message).toBe('Name a command.');
  });

  it('a usage error under --json prints one JSON object', async () => {
    const result = await run('apply', '--bogus-flag', '--json');
    expect(result.code).toBe(2);
    expect(Object.keys(result.json)).toEqual(['ok', 'command', 'error']);
    expect(result.json.error).toMatchObject({
      code: 'USAGE',
      hint: 'Run `mlx-storage-pr --help` for usage.',
      details: null,
    });
    expect(result.json.error.message).toMatch(/^Unknown arguments?: bogus-flag/);
  });
});
