import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { VERIFY_CHECK_IDS } from '../../src/readiness/skip.js';
import { makeFormatProject, makeFormatUpstream } from '../support/format-fixtures.js';
import { pathWith, runCli, tempDir } from '../support/repos.js';

let project: string;
// Only git on this PATH: no cmake, compiler or cmake-format, so a build check that ran could not pass.
const bare = { PATH: pathWith('git') };
const verify = (...extra: string[]) => runCli(['verify', ...extra], { cwd: project, env: bare });
const ids = (json: { checks: Array<{ id: string }> }) => json.checks.map((c) => c.id);

beforeEach(async () => {
  const upstream = makeFormatUpstream();
  project = makeFormatProject(upstream.sha);
  expect((await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project })).code).toBe(0);
  // Formatting passes, so only the checks under test decide the result.
  expect((await runCli(['format', '--fix'], { cwd: project })).code).toBe(0);
});

describe('verify --skip', () => {
  it('leaves the PR text checks out of the report and of the result, and says so', async () => {
    // No pr/ folder: the PR text checks fail when they run.
    const full = await verify('--json', '--skip', 'build', 'format-cmake', 'docs');
    expect(full.code).toBe(1);
    expect(ids(full.json)).toEqual([
      'format-cpp',
      'metal-typecheck',
      'pr-files',
      'pr-placeholders',
      'pr-ai-disclosure',
    ]);
    expect(full.json.checks.find((c: { id: string }) => c.id === 'pr-files')?.status).toBe('fail');

    const skipped = await verify('--json', '--skip', 'build', 'format-cmake', 'docs', '--skip', 'pr-text');
    expect(skipped.code, JSON.stringify(skipped.json.checks, null, 2)).toBe(0);
    expect(skipped.json.ready).toBe(true);
    expect(ids(skipped.json)).toEqual(['format-cpp', 'metal-typecheck']);
    expect(skipped.json.skipped).toEqual([
      'format-cmake',
      'docs',
      'pr-files',
      'pr-placeholders',
      'pr-ai-disclosure',
      'linux-build',
      'tests-fail-without-implementation',
      'metal-twin',
      'mutants',
      'sanitizer',
    ]);

    const human = await verify('--skip', 'build', 'format-cmake', 'docs', 'pr-text');
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(
      'left out (--skip): format-cmake, docs, pr-files, pr-placeholders, pr-ai-disclosure, linux-build, tests-fail-without-implementation',
    );
    expect(human.stdout).not.toContain('PR description and commit message');
  });

  it('does not start the build checks it was asked to leave out', async () => {
    // A compiler (CXX) that only records that the build checks asked it for its version.
    const bin = tempDir('msp-skip-bin-');
    const marker = path.join(bin, 'compiler-ran');
    const cxx = path.join(bin, 'c++');
    writeFileSync(cxx, `#!/bin/sh\n: > '${marker}'\nexit 1\n`, { mode: 0o755 });
    const run = (...extra: string[]) =>
      runCli(['verify', '--json', '--skip', 'pr-text', 'format-cmake', ...extra], {
        cwd: project,
        env: { ...bare, CXX: cxx },
      });

    const skipped = await run('--skip', 'build');
    expect(existsSync(marker)).toBe(false);
    expect(skipped.code).toBe(0);

    const withBuild = await run();
    expect(existsSync(marker)).toBe(true);
    expect(withBuild.json.checks.find((c: { id: string }) => c.id === 'linux-build')?.status).toBe('fail');
    expect(withBuild.code).toBe(1);
  });

  it('knows every check verify reports', async () => {
    const result = await verify('--json');
    // The sanitizer item is reported only with --sanitize.
    expect(ids(result.json)).toEqual(VERIFY_CHECK_IDS.filter((id) => id !== 'sanitizer'));
    expect(result.json.skipped).toEqual([]);
  });

  it('still fails on a check that is not left out', async () => {
    mkdirSync(path.join(project, 'pr'));
    writeFileSync(path.join(project, 'pr', 'description.md'), '## Proposed changes\n\n<!-- WRITE: what and why -->\n');
    writeFileSync(path.join(project, 'pr', 'commit-message.txt'), 'Add Metal storage view\n');
    const result = await verify('--json', '--skip', 'build', 'format-cmake', 'docs');
    expect(result.code).toBe(1);
    expect(result.json.checks.find((c: { id: string }) => c.id === 'pr-placeholders')?.status).toBe('fail');
  });

  it('refuses an unknown check name with exit code 2 and lists the names it knows', async () => {
    const result = await verify('--skip', 'pr-txt');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--skip pr-txt: not one of ');
    const listed = result.stderr.split('not one of ')[1]?.split(' (did you mean')[0]?.split(', ');
    for (const name of ['format', 'metal-typecheck', 'pr-text', 'build', 'pr-files', 'linux-build'])
      expect(listed).toContain(name);
    expect(result.stderr).toContain('(did you mean pr-text?)');
  });
});
