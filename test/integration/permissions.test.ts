import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { execa } from 'execa';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { makeProject, makeUpstream, spawnCliAs, tempDir, unprivilegedRunner } from '../support/repos.js';

const runner = await unprivilegedRunner();
const locked: string[] = [];

let upstream: { dir: string; sha: string };
let project: string;
let home: string;

/** Runs the CLI as a user that file permissions apply to. */
function run(args: string[]) {
  if ('skip' in runner) throw new Error(runner.skip);
  return spawnCliAs(runner.prefix, [...args, '--mlx-repo', upstream.dir, '--json'], {
    cwd: project,
    env: { HOME: home },
  });
}

async function readOnly(dir: string) {
  await execa('chmod', ['-R', 'a-w', dir]);
  locked.push(dir);
}

/**
 * A workdir with the series applied, then made read-only after a template changed, so that the next
 * command needs to write there (new objects in the checkout's object store, the lock).
 */
async function readOnlyAppliedWorkdir(): Promise<string> {
  const workdir = tempDir('msp-ro-');
  if (!('skip' in runner)) await runner.own(workdir);
  expect((await run(['apply', '--workdir', workdir])).code).toBe(0);
  const template = path.join(project, 'templates/mlx/backend/metal/storage_view.cpp');
  writeFileSync(template, `${readFileSync(template, 'utf8')}// changed\n`);
  await readOnly(workdir);
  return workdir;
}

beforeEach(async () => {
  if ('skip' in runner) return;
  upstream = makeUpstream();
  project = makeProject(upstream.sha);
  home = tempDir('msp-home-');
  for (const dir of [upstream.dir, project, home]) await runner.own(dir);
});

afterEach(async () => {
  for (const dir of locked.splice(0)) await execa('chmod', ['-R', 'u+w', dir]);
});

describe.skipIf('skip' in runner)(`permission errors${'skip' in runner ? ` (skipped: ${runner.skip})` : ''}`, () => {
  it('a read-only workdir is reported as a permission problem with its path, not as a held lock', async () => {
    const workdir = await readOnlyAppliedWorkdir();

    const result = await run(['apply', '--workdir', workdir]);
    expect(result.code, result.stderr).toBe(10);
    expect(result.json.error.code).toBe('PERMISSION_DENIED');
    expect(result.json.error.message).toContain(workdir);
    expect(result.json.error.message).toBe(`Cannot write ${workdir}: permission denied (open).`);
    expect(result.stderr).not.toMatch(/another run/i);
    expect(result.stderr).not.toContain('internal error');
  });

  it('status in a read-only workdir names the folder it cannot write', async () => {
    const workdir = await readOnlyAppliedWorkdir();
    const result = await run(['status', '--workdir', workdir]);
    expect(result.code, result.stderr).toBe(10);
    expect(result.json.error.code).toBe('PERMISSION_DENIED');
    expect(result.json.error.message).toContain(path.join(workdir, 'mlx'));
  });

  it('a new workdir in a read-only folder is reported with its path', async () => {
    const parent = tempDir('msp-ro-parent-');
    if (!('skip' in runner)) await runner.own(parent);
    chmodSync(parent, 0o555);
    locked.push(parent);
    const workdir = path.join(parent, 'work');
    const result = await run(['apply', '--workdir', workdir]);
    expect(result.code, result.stderr).toBe(10);
    expect(result.json.error.code).toBe('PERMISSION_DENIED');
    expect(result.json.error.message).toContain(workdir);
    expect(result.json.error.hint).toContain('--workdir');
    expect(existsSync(workdir)).toBe(false);
  });
});
