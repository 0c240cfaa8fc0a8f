import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { makeFormatProject, makeFormatUpstream } from '../support/format-fixtures.js';
import { pathWith, runCli } from '../support/repos.js';

let project: string;
// Only git on this PATH: no cmake, compiler, clang, cmake-format, uvx or pipx, so those checks cannot run.
const bare = { PATH: pathWith('git') };

const verify = (...extra: string[]) => runCli(['verify', '--json', ...extra], { cwd: project, env: bare });
const byId = (json: { checks: Array<{ id: string; status: string; required: boolean; detail: string }> }) =>
  Object.fromEntries(json.checks.map((c) => [c.id, c]));

beforeEach(async () => {
  const upstream = makeFormatUpstream();
  project = makeFormatProject(upstream.sha);
  expect((await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project })).code).toBe(0);
});

describe('verify', () => {
  it('reports every check with its status and fails while required ones do not pass', async () => {
    const result = await verify();
    expect(result.code).toBe(1);
    expect(result.json.ready).toBe(false);
    expect(result.json.checks.map((c: { id: string }) => c.id)).toEqual([
      'format-cpp',
      'format-cmake',
      'metal-typecheck',
      'docs',
      'pr-files',
      'pr-placeholders',
      'pr-ai-disclosure',
      'linux-build',
      'tests-fail-without-implementation',
      'metal-twin',
      'mutants',
    ]);
    const checks = byId(result.json);
    expect(checks['format-cpp']).toMatchObject({ status: 'fail', required: true });
    expect(checks['format-cpp']?.detail).toContain('mlx/backend/metal/storage_view.h (templates/{{header_path}})');
    expect(checks['format-cmake']).toMatchObject({ status: 'not-checked', required: true });
    expect(checks['format-cmake']?.detail).toContain('cmake-format 0.6.13 not found (pip install cmakelang==0.6.13)');
    // Nobody asked for the Metal lane and its tools are missing: reported, not required.
    expect(checks['metal-typecheck']).toMatchObject({ status: 'not-checked', required: false });
    expect(checks['metal-typecheck']?.detail).toContain('clang >= 19');
    // The series changes no .rst page: nothing for Sphinx to check, even without it.
    expect(checks['docs']).toMatchObject({ status: 'pass', detail: 'no .rst files in the PR', required: true });
    expect(checks['pr-files']).toMatchObject({
      status: 'fail',
      detail: 'missing pr/description.md, pr/commit-message.txt',
    });
    // No cmake on this PATH: the build checks fail for exactly that reason, and they are required.
    expect(checks['linux-build']).toMatchObject({ status: 'fail', required: true });
    expect(checks['linux-build']?.detail).toContain('CMake >= 3.25: cmake not found');
    // The series changes no test: the check does not apply, whatever the build does.
    expect(checks['tests-fail-without-implementation']).toMatchObject({ status: 'not-checked', required: false });
    expect(checks['tests-fail-without-implementation']?.detail).toMatch(
      /^not applicable: the series changes no test \(test paths: tests\/\)$/,
    );

    const human = await runCli(['verify'], { cwd: project, env: bare });
    expect(human.stdout).toContain('FAIL C++ formatting (clang-format):');
    expect(human.stdout).toContain('n/c  Metal type-check (check-metal):');
    expect(human.stdout).toMatch(/Not ready: \d+ required check\(s\) did not pass\./);
  });

  it('makes the Metal type-check required when asked for', async () => {
    const checks = byId((await verify('--require-metal')).json);
    expect(checks['metal-typecheck']).toMatchObject({ status: 'not-checked', required: true });
  });

  it('passes formatting and policy once the files are fixed and the text is written', async () => {
    expect((await runCli(['format', '--fix'], { cwd: project })).code).toBe(0);
    mkdirSync(path.join(project, 'pr'));
    writeFileSync(
      path.join(project, 'pr', 'description.md'),
      '## Proposed changes\n\nAdds a storage view.\n\n## AI usage disclosure\n\nNone; written by hand.\n',
    );
    writeFileSync(path.join(project, 'pr', 'commit-message.txt'), 'Add Metal storage view\n');
    const checks = byId((await verify()).json);
    expect(checks['format-cpp']).toMatchObject({ status: 'pass' });
    expect(checks['pr-files']?.status).toBe('pass');
    expect(checks['pr-placeholders']?.status).toBe('pass');
    expect(checks['pr-ai-disclosure']?.status).toBe('pass');

    writeFileSync(path.join(project, 'pr', 'commit-message.txt'), 'TODO(user): subject\n');
    const again = byId((await verify()).json);
    expect(again['pr-placeholders']).toMatchObject({ status: 'fail' });
    expect(again['pr-placeholders']?.detail).toContain('pr/commit-message.txt:1');
    const human = (await runCli(['verify'], { cwd: project, env: bare })).stdout;
    expect(human).toContain('ok   PR text files present: a description and 1 commit message in pr/\n');
    expect(human).toContain('FAIL Text written by you: placeholders left at pr/commit-message.txt:1');
    expect(human).not.toMatch(/^ok .*(pr\/commit-message\.txt|PR description and commit message)/m);
  });
});
