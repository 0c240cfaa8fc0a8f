import { readFileSync } from 'node:fs';
import path from 'node:path';

import { execa } from 'execa';
import { beforeEach, describe, expect, it } from 'vitest';

import { makeFormatProject, makeFormatUpstream } from '../support/format-fixtures.js';
import { git, pathWith, runCli } from '../support/repos.js';

async function hasCMakeFormat(): Promise<boolean> {
  try {
    return (await execa('cmake-format', ['--version'])).stdout.trim() === '0.6.13';
  } catch {
    return false;
  }
}
const cmakeFormat = await hasCMakeFormat();
if (!cmakeFormat)
  console.warn('format: cmake-format 0.6.13 is not on PATH; CMake files are expected to be reported as not checked');

let upstream: { dir: string; sha: string };
let project: string;
let checkout: string;

const format = (...extra: string[]) => runCli(['format', ...extra], { cwd: project });
const projectFile = (file: string) => readFileSync(path.join(project, file), 'utf8');
const checkoutFile = (file: string) => readFileSync(path.join(checkout, file), 'utf8');
const statusOf = (json: { files: Array<{ path: string; status: string }> }) =>
  Object.fromEntries(json.files.map((f) => [f.path, f.status]));

beforeEach(async () => {
  upstream = makeFormatUpstream();
  project = makeFormatProject(upstream.sha);
  checkout = path.join(project, '.work', 'mlx');
  expect((await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project })).code).toBe(0);
});

describe('format', () => {
  it('reports mis-formatted templates and patch lines as a unified diff and fails', async () => {
    const result = await format('--json');
    expect(result.code).toBe(1);
    expect(result.json).toMatchObject({
      ok: false,
      clean: false,
      code: 'CHECK_FAILED',
      clangFormat: { version: '21.1.8', pinned: '21.1.8' },
    });
    expect(statusOf(result.json)).toMatchObject({
      'mlx/backend/metal/storage_view.h': 'differs',
      'mlx/backend/metal/storage_view.cpp': 'differs',
      'mlx/backend/metal/metal.h': 'differs',
      'mlx/backend/metal/CMakeLists.txt': cmakeFormat ? 'differs' : 'not-checked',
    });
    const header = result.json.files.find((f: { path: string }) => f.path === 'mlx/backend/metal/metal.h');
    expect(header.origin).toBe('patches/0001-metal-header.patch');
    expect(header.diff).toContain('-MetalStorageView* find_view(const std::string& name, int   flags);');
    expect(header.diff).toContain('+MetalStorageView* find_view(const std::string& name, int flags);');
    // MLX's own badly spaced line is not the patch's business.
    expect(header.diff).not.toContain('legacy_spacing( int x );\n+');
    expect(header.detail).toContain('outside this patch');

    const human = await format();
    expect(human.code).toBe(1);
    expect(human.stdout).toContain('--- a/mlx/backend/metal/storage_view.h\n+++ b/mlx/backend/metal/storage_view.h\n');
    expect(human.stdout).toContain('+} // namespace mlx::core::metal');
    expect(human.stdout).toContain('format --fix');
  });

  it('--fix writes the formatting into templates/ and patches/ with placeholders kept, then a second run is clean', async () => {
    const fixed = await format('--fix', '--json');
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(fixed.json.clean).toBe(true);
    expect(fixed.json.fixed).toEqual(
      expect.arrayContaining([
        'templates/{{header_path}}',
        'templates/mlx/backend/metal/storage_view.cpp',
        'patches/0001-metal-header.patch',
      ]),
    );

    const header = projectFile('templates/{{header_path}}');
    expect(header).toContain('  {{class_name}}() = default;');
    expect(header).toContain(
      'MLX_API {{status_enum}} {{try_export_function}}(\n    const {{class_name}}& view,\n    {{options_struct}} options,\n    int extra_argument);',
    );
    expect(header).toContain('} // namespace {{namespace}}\n');
    expect(header).toContain('// A {{class_name}} borrows storage; MetalStorageView is the default name.');
    expect(header).toContain('#include <cstdint>\n#include "mlx/api.h"\n');
    expect(projectFile('templates/mlx/backend/metal/storage_view.cpp')).toContain(
      '  if (extra_argument < 0)\n    return {{status_enum}}::metal_not_available;',
    );

    const patch = projectFile('patches/0001-metal-header.patch');
    expect(patch).toMatch(
      /^diff --git a\/mlx\/backend\/metal\/metal\.h b\/mlx\/backend\/metal\/metal\.h\n--- a\/mlx\/backend\/metal\/metal\.h\n/,
    );
    expect(patch).toContain('+{{class_name}}* find_view(const std::string& name, int flags);\n');
    expect(patch).toContain(
      '+bool {{try_export_function}}_for_testing(\n+    const std::string& first_argument_name,\n',
    );
    if (cmakeFormat)
      expect(projectFile('patches/0002-metal-cmake.patch')).toContain(
        '+          ${CMAKE_CURRENT_SOURCE_DIR}/{{source_file}})',
      );
    // Hunk headers are as `git diff` writes them, function context (the text after the second @@) included.
    const gitHeaders = (file: string) =>
      git(checkout, 'diff', upstream.sha, 'HEAD', '--', file)
        .split('\n')
        .filter((l) => l.startsWith('@@'));
    const patchHeaders = (name: string) =>
      projectFile(`patches/${name}`)
        .split('\n')
        .filter((l) => l.startsWith('@@'));
    expect(gitHeaders('mlx/backend/metal/metal.h')).toEqual(['@@ -12,4 +12,10 @@ int   legacy_spacing( int x );']);
    expect(patchHeaders('0001-metal-header.patch')).toEqual(gitHeaders('mlx/backend/metal/metal.h'));
    if (cmakeFormat)
      expect(patchHeaders('0002-metal-cmake.patch')).toEqual(gitHeaders('mlx/backend/metal/CMakeLists.txt'));

    // apply ran again: the checkout holds the formatted text, and MLX's own line is untouched.
    expect(checkoutFile('mlx/backend/metal/metal.h')).toContain('int   legacy_spacing( int x );');
    expect(checkoutFile('mlx/backend/metal/metal.h')).toContain(
      'MetalStorageView* find_view(const std::string& name, int flags);',
    );
    expect(checkoutFile('mlx/backend/metal/storage_view.h')).toContain('} // namespace mlx::core::metal\n');
    expect(git(checkout, 'status', '--porcelain')).toBe('');

    const again = await format('--json');
    expect(again.code).toBe(0);
    // Without cmake-format the CMake file is not checked: nothing differs, but the report is not clean.
    expect(again.json).toMatchObject({ ok: true, clean: cmakeFormat, notChecked: cmakeFormat ? 0 : 1, fixed: [] });
    for (const f of again.json.files as Array<{ tool: string; status: string }>)
      expect(f.status).toBe(f.tool === 'clang-format' || cmakeFormat ? 'clean' : 'not-checked');
    const status = await runCli(['status', '--json'], { cwd: project });
    expect(status.json).toMatchObject({ state: 'applied', differs: [] });
  });

  it('says CMake files were not checked, never passes them silently, when cmake-format 0.6.13 is missing', async () => {
    // Only git on this PATH: no cmake-format, uvx or pipx.
    const result = await runCli(['format'], { cwd: project, env: { PATH: pathWith('git') } });
    expect(result.stdout).toContain(
      'n/c   cmake-format: mlx/backend/metal/CMakeLists.txt (patches/0002-metal-cmake.patch): not checked: cmake-format 0.6.13 not found (pip install cmakelang==0.6.13)',
    );
    expect(result.code).toBe(1);
  });

  it("needs a checkout to read MLX's .clang-format from", async () => {
    const other = makeFormatProject(upstream.sha);
    const result = await runCli(['format', '--json'], { cwd: other });
    expect(result.code).toBe(1);
    expect(result.json.error).toMatchObject({ code: 'NOT_APPLIED' });
    expect(result.json.error.hint).toContain('mlx-storage-pr apply');
  });
});
