/**
 * Symbolic links: `export` never reads or writes through a link out of the
 * checkout or the project, and `apply` never makes one (issue 37).
 */
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

import { execa } from 'execa';
import { beforeEach, describe, expect, it } from 'vitest';

import { makeExportProject, makeExportUpstream, projectFiles } from '../support/export-fixtures.js';
import { runCli, snapshot, tempDir } from '../support/repos.js';

let upstream: { dir: string; sha: string };
let project: string;
let checkout: string;
let outside: string;
const cli = (...args: string[]) => runCli([...args, '--mlx-repo', upstream.dir], { cwd: project, env: {} });
const SOURCE = 'mlx/backend/metal/storage_view.cpp';
const SECRET = 'SECRET FROM OUTSIDE THE CHECKOUT\n';

/** Every byte of the project's files, in one string: the secret must not be in it. */
const projectText = () =>
  Object.values(projectFiles(project))
    .map((b) => Buffer.from(b, 'base64').toString('utf8'))
    .join('\n');

beforeEach(async () => {
  upstream = makeExportUpstream();
  project = makeExportProject(upstream.sha);
  checkout = path.join(project, '.work', 'mlx');
  outside = tempDir('msp-outside-');
  writeFileSync(path.join(outside, 'secret.cpp'), SECRET);
  expect((await cli('apply')).code).toBe(0);
});

describe('export and a symbolic link in the checkout', () => {
  it('refuses a file the series writes that is a link out of the checkout (exit 1, naming it); reads nothing through it', async () => {
    const before = projectFiles(project);
    rmSync(path.join(checkout, SOURCE));
    symlinkSync(path.join(outside, 'secret.cpp'), path.join(checkout, SOURCE));
    const result = await cli('export', '--json');
    expect(result.code, result.stdout).toBe(1);
    expect(result.json.error.code).toBe('EXPORT_REFUSED');
    expect(result.json.error.message).toContain(SOURCE);
    expect(result.json.error.message).toMatch(/symbolic link/);
    expect(projectFiles(project)).toEqual(before);
  });

  it('refuses a patched file under a folder that is a link out of the checkout, naming the folder', async () => {
    const before = projectFiles(project);
    const folder = path.join(checkout, 'mlx/backend/metal');
    const moved = path.join(outside, 'metal');
    renameSync(folder, moved);
    writeFileSync(path.join(moved, 'no_metal.cpp'), SECRET);
    symlinkSync(moved, folder);
    const result = await cli('export', '--json');
    expect(result.code, result.stdout).toBe(1);
    expect(result.json.error.code).toBe('EXPORT_REFUSED');
    expect(result.json.error.message).toContain('mlx/backend/metal');
    expect(projectFiles(project)).toEqual(before);
  });

  it('with --include-new refuses a new link to a file outside (exit 1, naming it); the secret reaches no project file', async () => {
    const before = projectFiles(project);
    symlinkSync(path.join(outside, 'secret.cpp'), path.join(checkout, 'mlx/new_link.h'));
    const result = await cli('export', '--include-new', '--json');
    expect(result.code, result.stdout).toBe(1);
    expect(result.json.error.code).toBe('EXPORT_REFUSED');
    expect(result.json.error.message).toContain('mlx/new_link.h');
    expect(projectFiles(project)).toEqual(before);
    expect(projectText()).not.toContain('SECRET');
  });

  it('with --include-new refuses a new link to a folder (exit 1, not 70)', async () => {
    symlinkSync(outside, path.join(checkout, 'mlx/outside_dir'));
    const result = await cli('export', '--include-new', '--json');
    expect(result.code, result.stdout).toBe(1);
    expect(result.json.error.code).toBe('EXPORT_REFUSED');
    expect(result.json.error.message).toContain('mlx/outside_dir');
  });

  it('without --include-new lists a new link as not exported and exits 0', async () => {
    symlinkSync(outside, path.join(checkout, 'mlx/outside_dir'));
    symlinkSync(path.join(outside, 'secret.cpp'), path.join(checkout, 'mlx/new_link.h'));
    const result = await cli('export', '--json');
    expect(result.code, result.stdout).toBe(0);
    expect(result.json.notExported.map((n: { path: string }) => n.path).sort()).toEqual([
      'mlx/new_link.h',
      'mlx/outside_dir',
    ]);
  });
});

describe('export and a FIFO in the checkout', () => {
  it('refuses a FIFO where the series writes a file (exit 1, naming it) instead of waiting on it', async () => {
    const before = projectFiles(project);
    rmSync(path.join(checkout, SOURCE));
    await execa('mkfifo', [path.join(checkout, SOURCE)]);
    const result = await cli('export', '--json');
    expect(result.code, result.stdout).toBe(1);
    expect(result.json.error.code).toBe('EXPORT_REFUSED');
    expect(result.json.error.message).toContain(SOURCE);
    expect(projectFiles(project)).toEqual(before);
  });
});

describe('a symbolic link in templates/', () => {
  it('templates/ itself a link to a folder elsewhere: apply refuses it (exit 7)', async () => {
    const elsewhere = tempDir('msp-elsewhere-');
    renameSync(path.join(project, 'templates'), path.join(elsewhere, 'templates'));
    symlinkSync(path.join(elsewhere, 'templates'), path.join(project, 'templates'));
    const result = await cli('apply', '--json');
    expect(result.code, result.stdout).toBe(7);
    expect(result.json.error.message).toContain('templates/ is a symbolic link');
  });

  it('a link to a folder outside: export --include-new writes nothing there, and apply refuses it (exit 7, naming it)', async () => {
    const extra = tempDir('msp-outside-templates-');
    symlinkSync(extra, path.join(project, 'templates', 'mlx', 'extra'));
    mkdirSync(path.join(checkout, 'mlx', 'extra'));
    writeFileSync(path.join(checkout, 'mlx', 'extra', 'new.h'), '// new\n');
    const exported = await cli('export', '--include-new', '--json');
    expect(exported.code, exported.stdout).toBe(7);
    expect(exported.json.error.message).toContain('templates/mlx/extra');
    expect(readdirSync(extra)).toEqual([]);
    const before = snapshot(checkout);
    const applied = await cli('apply', '--json');
    expect(applied.code, applied.stdout).toBe(7);
    expect(applied.json.error.message).toContain('templates/mlx/extra');
    expect(snapshot(checkout)).toBe(before);
    expect(readFileSync(path.join(checkout, 'mlx', 'extra', 'new.h'), 'utf8')).toBe('// new\n');
  });

  it('a template file that is a link is refused by apply (exit 7, naming it), not ignored', async () => {
    symlinkSync(path.join(outside, 'secret.cpp'), path.join(project, 'templates', 'mlx', 'linked.h'));
    const result = await cli('apply', '--json');
    expect(result.code, result.stdout).toBe(7);
    expect(result.json.error.message).toContain('templates/mlx/linked.h');
    expect(result.json.error.message).toMatch(/symbolic link/);
  });
});

describe('a patch that makes a symbolic link', () => {
  it('is refused by apply before the checkout changes (exit 7, naming the patch and the file)', async () => {
    writeFileSync(
      path.join(project, 'patches', '0004-link.patch'),
      [
        'diff --git a/mlx/outside b/mlx/outside',
        'new file mode 120000',
        'index 0000000..2a3f0a5',
        '--- /dev/null',
        '+++ b/mlx/outside',
        '@@ -0,0 +1 @@',
        `+${outside}`,
        '\\ No newline at end of file',
        '',
      ].join('\n'),
    );
    writeFileSync(
      path.join(project, 'patches', 'series'),
      `${readFileSync(path.join(project, 'patches', 'series'), 'utf8')}0004-link.patch\n`,
    );
    const before = snapshot(checkout);
    const result = await cli('apply', '--json');
    expect(result.code, result.stdout).toBe(7);
    expect(result.json.error.code).toBe('SERIES_INVALID');
    expect(result.json.error.message).toContain('patches/0004-link.patch');
    expect(result.json.error.message).toContain('mlx/outside');
    expect(snapshot(checkout)).toBe(before);
    expect(existsSync(path.join(checkout, 'mlx', 'outside'))).toBe(false);
  });
});
