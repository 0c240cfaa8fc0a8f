import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { editConfig, makeProject, makeUpstream, pathWith, runCli } from '../support/repos.js';

// A series without a Metal role: the fixture project with roles.metal removed. Only git on PATH, so a
// Metal lane that ran anyway could not pass.
const bare = { PATH: pathWith('git') };
let upstream: { dir: string; sha: string };

function projectWithoutMetal(): string {
  const project = makeProject(upstream.sha);
  editConfig(project, (c) => {
    c['roles'] = { tests: ['tests/'] };
  });
  return project;
}

beforeAll(() => {
  upstream = makeUpstream();
});

describe('a series without a Metal role', () => {
  let project: string;
  beforeAll(async () => {
    project = projectWithoutMetal();
    expect((await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project, env: bare })).code).toBe(0);
  });

  it('check-metal reports "not applicable" and exits 0 without looking for clang', async () => {
    const result = await runCli(['check-metal', '--json'], { cwd: project, env: bare });
    expect(result.code).toBe(0);
    expect(result.json).toMatchObject({ ok: true, command: 'check-metal' });
    expect(result.json.notApplicable).toMatch(/^not applicable: the series has no Metal role/);
  });

  it('test --metal-twin --no-suite reports "not applicable" and exits 0 without building', async () => {
    const result = await runCli(['test', '--metal-twin', '--no-suite'], { cwd: project, env: bare });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Metal twin: not applicable: the series has no Metal role');
  });

  it('test --metal-only and verify --require-metal are usage errors (2)', async () => {
    const only = await runCli(['test', '--metal-only', '--json'], { cwd: project, env: bare });
    expect(only.code).toBe(2);
    expect(only.json.error.code).toBe('NO_METAL_ROLE');
    const verify = await runCli(['verify', '--require-metal', '--json'], { cwd: project, env: bare });
    expect(verify.code).toBe(2);
    expect(verify.json.error).toMatchObject({ code: 'NO_METAL_ROLE' });
    expect(verify.json.error.hint).toContain('roles.metal');
  });

  it('verify lists the Metal type-check as not applicable, and it does not fail verify', async () => {
    const result = await runCli(['verify', '--json', '--skip', 'build', 'format', 'docs', 'pr-text'], {
      cwd: project,
      env: bare,
    });
    expect(result.json.notApplicable).toEqual(['metal-typecheck']);
    expect(result.json.checks).toEqual([
      expect.objectContaining({ id: 'metal-typecheck', status: 'not-checked', required: false }),
    ]);
    expect(result.code).toBe(0);
    const human = await runCli(['verify', '--skip', 'build', 'format', 'docs', 'pr-text'], { cwd: project, env: bare });
    expect(human.stdout).toContain('Lanes for this series: ; not applicable: metal-typecheck');
  });
});

describe('an empty series', () => {
  let project: string;
  beforeAll(async () => {
    project = projectWithoutMetal();
    rmSync(path.join(project, 'templates'), { recursive: true, force: true });
    rmSync(path.join(project, 'patches'), { recursive: true, force: true });
    writeFileSync(path.join(project, 'mutants.json'), '{"mutants": []}\n');
    expect((await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project, env: bare })).code).toBe(0);
  });

  it('verify refuses it (2, SERIES_EMPTY) and names init', async () => {
    const result = await runCli(['verify', '--json'], { cwd: project, env: bare });
    expect(result.code).toBe(2);
    expect(result.json.error.code).toBe('SERIES_EMPTY');
    expect(result.json.error.hint).toContain('mlx-storage-pr init --from');
  });

  it('pr refuses it (2, SERIES_EMPTY) before it looks at the fork', async () => {
    const result = await runCli(['pr', '--push', '--fork', '/nonexistent/fork.git', '--json'], {
      cwd: project,
      env: bare,
    });
    expect(result.code).toBe(2);
    expect(result.json.error.code).toBe('SERIES_EMPTY');
  });
});
