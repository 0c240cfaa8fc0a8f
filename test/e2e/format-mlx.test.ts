import { cpSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';

import { REPO_ROOT, runCli, tempDir } from '../support/repos.js';
import { describeName, mlxRepo } from '../support/mlx.js';

const { repo } = mlxRepo();

async function hasCMakeFormat(): Promise<boolean> {
  try {
    return (await execa('cmake-format', ['--version'])).stdout.trim() === '0.6.13';
  } catch {
    return false;
  }
}

/** patches/ of a project, file by file. */
function patchFiles(project: string): Record<string, string> {
  const dir = path.join(project, 'patches');
  return Object.fromEntries(readdirSync(dir).map((f) => [f, readFileSync(path.join(dir, f), 'utf8')]));
}

/** A copy of this repository's project files (config, templates/, patches/) with its own workdir. */
function copyProject(): { project: string; args: string[] } {
  const project = tempDir('msp-e2e-format-');
  for (const item of ['mlx-storage-pr.config.json', 'templates', 'patches'])
    cpSync(path.join(REPO_ROOT, item), path.join(project, item), { recursive: true });
  return { project, args: ['--mlx-repo', repo as string, '--workdir', path.join(project, '.work')] };
}

function edit(project: string, patch: string, from: string, to: string): void {
  const file = path.join(project, 'patches', patch);
  const text = readFileSync(file, 'utf8');
  expect(text).toContain(from);
  writeFileSync(file, text.replace(from, to));
}

describe.skipIf(repo === null)(describeName('format --fix on the shipped series and the real MLX'), () => {
  const shipped = patchFiles(REPO_ROOT);
  let project: string;
  let args: string[];

  beforeAll(async () => {
    ({ project, args } = copyProject());
    const applied = await runCli(['apply', ...args], { cwd: project });
    expect(applied.code, applied.stderr).toBe(0);
  }, 10 * 60_000);

  it('leaves patches/ byte-identical when nothing needs fixing', async () => {
    const result = await runCli(['format', '--fix', '--json', ...args], { cwd: project });
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toMatchObject({ clean: true, fixed: [] });
    expect(patchFiles(project)).toEqual(shipped);
    // MLX's hooks at the pin, in its order; the shipped series has C++ and CMake files, no Python or YAML.
    const hooks = result.json.hooks as Array<{ id: string; rev: string; files: string[] }>;
    expect(hooks.map((h) => [h.id, h.rev])).toEqual([
      ['check-yaml', '6.0.0'],
      ['clang-format', '21.1.8'],
      ['black', '26.1.0'],
      ['isort', '7.0.0'],
      ['cmake-format', '0.6.13'],
    ]);
    const filesOf = (id: string) => hooks.find((h) => h.id === id)?.files ?? [];
    expect(filesOf('clang-format').length).toBeGreaterThan(0);
    expect(filesOf('clang-format').every((f) => /\.(h|cpp)$/.test(f))).toBe(true);
    expect(filesOf('cmake-format').every((f) => f.endsWith('CMakeLists.txt'))).toBe(true);
    expect([...filesOf('black'), ...filesOf('isort'), ...filesOf('check-yaml')]).toEqual([]);
  });

  it('changes only the fixed lines: mis-formatted added lines come back as shipped, hunk headers with their function context', async () => {
    // One added line in the second hunk of a C++ patch (its header carries git's function context), and one in a CMake patch.
    edit(
      project,
      '0002-no-metal-stub.patch',
      '+  return {{status_enum}}::metal_not_available;\n',
      '+  return   {{status_enum}}::metal_not_available;\n',
    );
    const cmake = await hasCMakeFormat();
    if (cmake)
      edit(project, '0003-tests-cmake.patch', '+          {{stub_test_source}}\n', '+  {{stub_test_source}}\n');
    else console.warn('format --fix e2e: cmake-format 0.6.13 is not on PATH; only the C++ patch is mis-formatted');
    expect(patchFiles(project)).not.toEqual(shipped);

    const result = await runCli(['format', '--fix', '--json', ...args], { cwd: project });
    expect(result.code, result.stderr).toBe(0);
    expect(result.json.fixed).toEqual([
      'patches/0002-no-metal-stub.patch',
      ...(cmake ? ['patches/0003-tests-cmake.patch'] : []),
    ]);
    expect(shipped['0002-no-metal-stub.patch']).toContain(
      '@@ -28,6 +29,21 @@ const std::string& get_metallib_path() {\n',
    );
    expect(patchFiles(project)).toEqual(shipped);
  });
});
