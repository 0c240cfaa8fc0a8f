/** `export` onto a template it cannot replace (issue 23, item 13). */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { makeExportProject, makeExportUpstream } from '../support/export-fixtures.js';
import { runCli } from '../support/repos.js';

let upstream: { dir: string; sha: string };
let project: string;
let template: string;
const cli = (...args: string[]) => runCli([...args, '--mlx-repo', upstream.dir], { cwd: project, env: {} });
const SOURCE = 'mlx/backend/metal/storage_view.cpp';

/** Whether this machine can make a file that even root cannot replace (chattr +i on ext4 and the like). */
async function canMakeImmutable(): Promise<boolean> {
  if (process.getuid?.() !== 0) return false;
  try {
    const probe = path.join(project, 'immutable-probe');
    writeFileSync(probe, '');
    await execa('chattr', ['+i', probe]);
    await execa('chattr', ['-i', probe]);
    return true;
  } catch {
    return false;
  }
}

const listed = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)));

beforeEach(async () => {
  upstream = makeExportUpstream();
  project = makeExportProject(upstream.sha);
  template = path.join(project, 'templates', SOURCE);
  expect((await cli('apply')).code).toBe(0);
});
afterEach(async () => {
  try {
    await execa('chattr', ['-i', template]);
  } catch {
    // Not made immutable.
  }
});

describe('export onto a template that cannot be replaced', () => {
  it('exits 10 naming the template and the permission, and leaves no temporary file in templates/', async (t) => {
    if (!(await canMakeImmutable())) t.skip();
    const checkoutFile = path.join(project, '.work', 'mlx', SOURCE);
    writeFileSync(checkoutFile, `${readFileSync(checkoutFile, 'utf8')}// an edit\n`);
    const before = listed(path.join(project, 'templates'));
    await execa('chattr', ['+i', template]);
    const result = await cli('export', '--json');
    expect(result.code, result.stdout).toBe(10);
    expect(result.json.error.message).toContain(template);
    expect(result.json.error.message).toMatch(/permission|not permitted|read-only/i);
    expect(result.json.error.hint).not.toContain('--workdir');
    expect(listed(path.join(project, 'templates'))).toEqual(before);
  });
});
