import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { git, makeProject, makeUpstream, runCli, tempDir } from '../support/repos.js';

let upstream: { dir: string; sha: string };
let project: string;

beforeEach(() => {
  upstream = makeUpstream();
  project = makeProject(upstream.sha);
});

const apply = (...extra: string[]) => runCli(['apply', '--mlx-repo', upstream.dir, ...extra], { cwd: project });

describe('bad inputs', () => {
  it('apply --dry-run does not create the workdir', async () => {
    const workdir = path.join(tempDir(), 'not-yet');
    const result = await apply('--dry-run', '--workdir', workdir, '--json');
    expect(result.code).toBe(0);
    expect(result.json.status).toBe('would-clone');
    expect(existsSync(workdir)).toBe(false);
  });

  it('a template error leaves no workdir, and nothing in a workdir that was there', async () => {
    writeFileSync(path.join(project, 'templates', 'broken.h'), '{{no_such_var}}\n');
    const workdir = path.join(tempDir(), 'not-yet');
    const result = await apply('--workdir', workdir, '--json');
    expect(result.code).toBe(7);
    expect(existsSync(workdir)).toBe(false);

    const kept = tempDir();
    writeFileSync(path.join(kept, 'notes.txt'), 'mine\n');
    expect((await apply('--workdir', kept)).code).toBe(7);
    expect(readdirSync(kept)).toEqual(['notes.txt']);
  });

  it('names the line and column of invalid JSON in the config', async () => {
    const file = path.join(project, 'mlx-storage-pr.config.json');
    const lines = readFileSync(file, 'utf8').split('\n');
    lines[2] = `${lines[2]},`;
    writeFileSync(file, lines.join('\n'));
    const result = await runCli(['status', '--json'], { cwd: project });
    expect(result.code).toBe(7);
    expect(result.json.error.message).toMatch(
      new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:\\d+:\\d+: invalid JSON`),
    );
    expect(result.json.error.details).toMatchObject({ file, line: expect.any(Number), column: expect.any(Number) });
  });

  it('names the template file and line of an unknown variable', async () => {
    writeFileSync(
      path.join(project, 'templates/mlx/backend/metal/storage_view.cpp'),
      '// Copyright\n\n#include "{{header_file}}"\n',
    );
    const result = await apply('--json');
    expect(result.code).toBe(7);
    expect(result.json.error.message).toContain(
      'templates/mlx/backend/metal/storage_view.cpp:3: unknown template variable "header_file"',
    );
  });

  it('a first apply whose series does not apply leaves the pinned files to refresh the patch against', async () => {
    const file = path.join(project, 'patches', '0002-docs.patch');
    writeFileSync(file, readFileSync(file, 'utf8').replace(' Text about operations.', ' Text about something else.'));
    const result = await apply('--json');
    expect(result.code).toBe(4);
    const checkout = path.join(project, '.work', 'mlx');
    expect(git(checkout, 'rev-parse', 'HEAD').trim()).toBe(upstream.sha);
    expect(git(checkout, 'status', '--porcelain')).toBe('');
    expect(readFileSync(path.join(checkout, 'docs/src/dev/extensions.rst'), 'utf8')).toContain(
      'Text about operations.',
    );
  });

  it('after --3way fails, does not suggest --3way again', async () => {
    const file = path.join(project, 'patches', '0002-docs.patch');
    writeFileSync(file, readFileSync(file, 'utf8').replace(' Text about operations.', ' Text about something else.'));
    const exact = await apply('--json');
    expect(exact.code).toBe(4);
    expect(exact.json.error.hint).toContain('--3way');
    const merged = await apply('--3way', '--json');
    expect(merged.code).toBe(4);
    expect(merged.json.error.hint).not.toContain('--3way');
    expect(merged.json.error.hint).toContain('three-way merge');
  });
});
