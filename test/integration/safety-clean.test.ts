/** `clean --all --dry-run` and the labels of saved work (issue 23, item 18). */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { makeExportProject, makeExportUpstream } from '../support/export-fixtures.js';
import { git, runCli } from '../support/repos.js';

let upstream: { dir: string; sha: string };
let project: string;
let checkout: string;
const cli = (...args: string[]) => runCli([...args, '--mlx-repo', upstream.dir], { cwd: project, env: {} });
const SOURCE = 'mlx/backend/metal/storage_view.cpp';

beforeEach(async () => {
  upstream = makeExportUpstream();
  project = makeExportProject(upstream.sha);
  checkout = path.join(project, '.work', 'mlx');
  expect((await cli('apply')).code).toBe(0);
});

describe('clean --all --dry-run', () => {
  it('with no work in the checkout: lists what --all would remove, the checkout included, and exits 0', async () => {
    const result = await cli('clean', '--all', '--dry-run', '--json');
    expect(result.code, result.stdout).toBe(0);
    expect(result.json.remove.map((r: { name: string }) => r.name)).toContain('mlx');
    expect(existsSync(checkout)).toBe(true);
  });

  it('while the checkout holds work: lists what --all would remove and the work that makes it refuse, exits 3, removes nothing', async () => {
    writeFileSync(path.join(checkout, SOURCE), `${readFileSync(path.join(checkout, SOURCE), 'utf8')}// mine\n`);
    const result = await cli('clean', '--all', '--dry-run');
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`uncommitted changes: ${SOURCE}`);
    expect(result.stderr).toMatch(/would remove[\s\S]*mlx\//);
    const json = await cli('clean', '--all', '--dry-run', '--json');
    expect(json.code).toBe(3);
    expect(json.json.error.details.remove.map((r: { name: string }) => r.name)).toContain('mlx');
    expect(existsSync(path.join(checkout, SOURCE))).toBe(true);
  });
});

describe('clean --all: the label of saved work', () => {
  it('a backup ref made by export is named as export\'s, not as "saved work from apply --force or reset"', async () => {
    writeFileSync(path.join(checkout, SOURCE), `${readFileSync(path.join(checkout, SOURCE), 'utf8')}// exported\n`);
    git(checkout, 'commit', '--quiet', '-am', 'my change', '--author', 'A <a@example.invalid>');
    const exported = await cli('export', '--json');
    expect(exported.code, exported.stdout).toBe(0);
    expect(exported.json.savedHead.ref).toMatch(/^refs\/mlx-storage-pr\/backup\//);
    const result = await cli('clean', '--all', '--json');
    expect(result.code).toBe(3);
    expect(result.json.error.message).toContain(exported.json.savedHead.ref);
    expect(result.json.error.message).toMatch(/kept by export/);
    expect(result.json.error.message).not.toContain('apply --force or reset');
  });
});
