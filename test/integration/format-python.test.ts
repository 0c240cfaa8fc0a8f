/** `format` lists MLX's pre-commit hooks for the series' files; Python needs MLX's exact black and isort (issue 24, item 3). */
import { chmodSync, cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { makeFormatUpstream } from '../support/format-fixtures.js';
import { FIXTURES, makeProject, pathWith, runCli } from '../support/repos.js';

const PY = 'python/mlx/helpers.py';
const PATCH = 'patches/0001-python-helpers.patch';
const NEEDS = 'not checked (needs black 26.1.0 and isort 7.0.0)';

let project: string;

beforeEach(async () => {
  const upstream = makeFormatUpstream();
  // The config of format/project, with a series of its own: one patch to a Python file.
  project = makeProject(upstream.sha, 'format/project');
  rmSync(path.join(project, 'templates'), { recursive: true });
  rmSync(path.join(project, 'patches'), { recursive: true });
  cpSync(path.join(FIXTURES, 'format/python-project/patches'), path.join(project, 'patches'), { recursive: true });
  expect((await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project })).code).toBe(0);
});

/**
 * A PATH with git and stand-ins for black and isort: each prints `version`
 * when asked and otherwise passes stdin through `edit` (a sed expression),
 * writing what it was called with to a log next to it.
 */
function pathWithPython(versions: { black?: string; isort?: string }, edit = ''): string {
  const bin = pathWith('git');
  const standIn = (name: string, versionFlag: string, version: string) => {
    const file = path.join(bin, name);
    writeFileSync(
      file,
      [
        '#!/bin/sh',
        `if [ "$1" = "${versionFlag}" ]; then echo "${version}"; exit 0; fi`,
        `echo "${name} $*" >> "${bin}/calls.log"`,
        edit && name === 'black' ? `exec /bin/sed -e '${edit}'` : 'exec /bin/cat',
        '',
      ].join('\n'),
    );
    chmodSync(file, 0o755);
  };
  if (versions.black) standIn('black', '--version', `black, ${versions.black} (compiled: yes)`);
  if (versions.isort) standIn('isort', '--version-number', versions.isort);
  return bin;
}

describe('format with a Python file in the series', () => {
  it("lists MLX's hooks with the files each applies to, and reports the Python file not checked, never clean, without black and isort", async () => {
    const env = { PATH: pathWith('git') };
    const json = await runCli(['format', '--json'], { cwd: project, env });
    // Nothing differs, so format does not fail; but a file not checked is never reported clean.
    expect(json.code).toBe(0);
    expect(json.json).toMatchObject({ ok: true, clean: false, notChecked: 1 });
    expect(json.json.files).toEqual([
      { path: PY, origin: PATCH, tool: 'black+isort', status: 'not-checked', diff: null, detail: NEEDS },
    ]);
    expect(json.json.hooks).toEqual([
      { id: 'check-yaml', rev: '6.0.0', files: [], run: false },
      { id: 'clang-format', rev: '21.1.8', files: [], run: true },
      { id: 'black', rev: '26.1.0', files: [PY], run: true },
      { id: 'isort', rev: '7.0.0', files: [PY], run: true },
      { id: 'cmake-format', rev: '0.6.13', files: [], run: true },
    ]);
    expect(json.json.black).toEqual({ version: null, pinned: '26.1.0', reason: NEEDS });

    const human = await runCli(['format'], { cwd: project, env });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(
      [
        "MLX's pre-commit hooks at the pinned commit, and the files of this PR each applies to:",
        '  check-yaml 6.0.0: no files of this PR',
        '  clang-format 21.1.8: no files of this PR',
        `  black 26.1.0: ${PY}`,
        `  isort 7.0.0: ${PY}`,
        '  cmake-format 0.6.13: no files of this PR',
      ].join('\n'),
    );
    expect(human.stdout).toContain(`n/c   black+isort: ${PY} (${PATCH}): ${NEEDS}`);
    expect(human.stdout).toContain('but not clean: 1 file(s) not checked');
    expect(human.stdout).not.toContain('Formatting clean');
  });

  it('does not check the Python file with another black version on PATH, and says which one it saw', async () => {
    const env = { PATH: pathWithPython({ black: '25.1.0', isort: '7.0.0' }) };
    const result = await runCli(['format', '--json'], { cwd: project, env });
    expect(result.json).toMatchObject({ clean: false, notChecked: 1 });
    expect(result.json.files[0]).toMatchObject({
      status: 'not-checked',
      detail: 'not checked (needs black 26.1.0 and isort 7.0.0; black 25.1.0 is on PATH)',
    });
  });

  it("checks the Python file with black 26.1.0 and isort 7.0.0 on PATH: in MLX's hook order, isort with the hook's args", async () => {
    const bin = pathWithPython({ black: '26.1.0', isort: '7.0.0' });
    const clean = await runCli(['format', '--json'], { cwd: project, env: { PATH: bin } });
    expect(clean.code, clean.stdout).toBe(0);
    expect(clean.json).toMatchObject({ ok: true, clean: true, notChecked: 0 });
    expect(clean.json.files).toEqual([
      { path: PY, origin: PATCH, tool: 'black+isort', status: 'clean', diff: null, detail: null },
    ]);
    expect(readFileSync(path.join(bin, 'calls.log'), 'utf8')).toBe(
      `black --quiet --stdin-filename ${PY} -\nisort --profile=black --filename ${PY} -\n`,
    );

    const reformatting = pathWithPython(
      { black: '26.1.0', isort: '7.0.0' },
      's/values\\[-1\\]/values[len(values) - 1]/',
    );
    const differs = await runCli(['format', '--json'], { cwd: project, env: { PATH: reformatting } });
    expect(differs.code).toBe(1);
    expect(differs.json.files[0]).toMatchObject({ status: 'differs' });
    expect(differs.json.files[0].diff).toContain('+    return values[len(values) - 1]');
    const fix = await runCli(['format', '--fix', '--json'], { cwd: project, env: { PATH: reformatting } });
    expect(fix.code).toBe(1);
    expect(fix.json.error.message).toContain('format --fix does not rewrite Python files');
  });
});
