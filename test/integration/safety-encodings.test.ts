/**
 * Text that is not UTF-8: refused with the file and the byte offset, never
 * written with its bytes replaced (issue 37).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { makeExportProject, makeExportUpstream, projectFiles } from '../support/export-fixtures.js';
import { makeWorld, ONLY_PR_TEXT } from '../support/fork.js';
import { runCli } from '../support/repos.js';

const SOURCE = 'mlx/backend/metal/storage_view.cpp';
/** "// café\n" in Latin-1: the é (0xE9) is at byte 6 of the line. */
const LATIN1_LINE = Buffer.from([0x2f, 0x2f, 0x20, 0x63, 0x61, 0x66, 0xe9, 0x0a]);

function fresh() {
  const upstream = makeExportUpstream();
  const project = makeExportProject(upstream.sha);
  const cli = (...args: string[]) => runCli([...args, '--json', '--mlx-repo', upstream.dir], { cwd: project, env: {} });
  return { upstream, project, cli, checkout: path.join(project, '.work', 'mlx') };
}

describe('apply and a template that is not UTF-8', () => {
  it('a Latin-1 template: exit 7 naming the template, the byte offset and the line; no checkout is made', async () => {
    const { project, cli, checkout } = fresh();
    const template = path.join(project, 'templates', SOURCE);
    const text = readFileSync(template);
    writeFileSync(template, Buffer.concat([text, LATIN1_LINE]));
    const result = await cli('apply');
    expect(result.code, result.stdout).toBe(7);
    expect(result.json.error.code).toBe('TEMPLATE_SYNTAX');
    expect(result.json.error.message).toContain(`templates/${SOURCE}`);
    expect(result.json.error.message).toContain(`byte ${text.length + 6}`);
    expect(result.json.error.message).toContain(`line ${text.toString('utf8').split('\n').length}`);
    expect(existsSync(checkout)).toBe(false);
  });

  it('a binary template: exit 7, naming it', async () => {
    const { project, cli, checkout } = fresh();
    writeFileSync(path.join(project, 'templates', 'mlx', 'blob.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0xff]));
    const result = await cli('apply');
    expect(result.code, result.stdout).toBe(7);
    expect(result.json.error.message).toContain('templates/mlx/blob.bin');
    expect(result.json.error.message).toContain('byte 0');
    expect(existsSync(checkout)).toBe(false);
  });

  it('a Latin-1 patch: exit 7 naming the patch and the byte offset', async () => {
    const { project, cli } = fresh();
    const patch = path.join(project, 'patches', '0001-no-metal-include.patch');
    const text = readFileSync(patch, 'utf8');
    const at = text.indexOf('+#include');
    writeFileSync(
      patch,
      Buffer.concat([
        Buffer.from(text.slice(0, at)),
        Buffer.from('+// caf\xe9\n', 'latin1'),
        Buffer.from(text.slice(at)),
      ]),
    );
    const result = await cli('apply');
    expect(result.code, result.stdout).toBe(7);
    expect(result.json.error.code).toBe('SERIES_INVALID');
    expect(result.json.error.message).toContain('patches/0001-no-metal-include.patch');
    expect(result.json.error.message).toContain(`byte ${at + 7}`);
  });
});

describe('export and an edit that is not UTF-8', () => {
  it('a Latin-1 edit in a file made from a template: exit 1 naming the file and the byte offset; nothing written', async () => {
    const { project, cli, checkout } = fresh();
    expect((await cli('apply')).code).toBe(0);
    const before = projectFiles(project);
    const file = path.join(checkout, SOURCE);
    const text = readFileSync(file);
    writeFileSync(file, Buffer.concat([text, LATIN1_LINE]));
    const result = await cli('export');
    expect(result.code, result.stdout).toBe(1);
    expect(result.json.error.code).toBe('EXPORT_REFUSED');
    expect(result.json.error.message).toContain(SOURCE);
    expect(result.json.error.message).toContain(`byte ${text.length + 6}`);
    expect(projectFiles(project)).toEqual(before);
  });

  it('a Latin-1 new file with --include-new is refused; without it, it is listed as not exported', async () => {
    const { project, cli, checkout } = fresh();
    expect((await cli('apply')).code).toBe(0);
    const before = projectFiles(project);
    writeFileSync(path.join(checkout, 'mlx', 'latin1.h'), LATIN1_LINE);
    const listed = await cli('export');
    expect(listed.code, listed.stdout).toBe(0);
    expect(listed.json.notExported).toEqual([{ path: 'mlx/latin1.h', reason: 'new-file' }]);
    const result = await cli('export', '--include-new');
    expect(result.code, result.stdout).toBe(1);
    expect(result.json.error.code).toBe('EXPORT_REFUSED');
    expect(result.json.error.message).toContain('mlx/latin1.h');
    expect(result.json.error.message).toContain('byte 6');
    expect(projectFiles(project)).toEqual(before);
  });
});

describe('pr and a commit message that is not UTF-8', () => {
  it('is refused with the file and the byte offset before anything is pushed', async () => {
    const w = await makeWorld();
    const before = w.forkRefs();
    writeFileSync(
      path.join(w.project, 'pr', 'commit-message.txt'),
      Buffer.concat([
        Buffer.from('Add a read-only Metal storage view\n\nWorks with caf'),
        Buffer.from([0xe9]),
        Buffer.from('.\n'),
      ]),
    );
    const result = await w.pr(...ONLY_PR_TEXT);
    expect(result.code, result.stdout).toBe(1);
    expect(result.json.error.code).toBe('PR_TEXT_INCOMPLETE');
    expect(result.json.error.message).toContain('pr/commit-message.txt');
    expect(result.json.error.message).toContain('byte 50');
    expect(w.forkRefs()).toEqual(before);
  });
});
