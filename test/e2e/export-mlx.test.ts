import { cpSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { execa } from 'execa';
import { beforeAll, describe, expect, it } from 'vitest';

import { workingTree } from '../support/export-fixtures.js';
import { describeName, mlxRepo } from '../support/mlx.js';
import { REPO_ROOT, runCli, tempDir } from '../support/repos.js';

const { repo } = mlxRepo();

/** templates/ and patches/ of a project, file by file. */
function seriesFiles(project: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (relative: string) => {
    const full = path.join(project, relative);
    if (statSync(full).isDirectory()) for (const entry of readdirSync(full)) walk(path.join(relative, entry));
    else out[relative] = readFileSync(full, 'utf8');
  };
  walk('templates');
  walk('patches');
  return out;
}

function editFile(file: string, from: string, to: string): void {
  const text = readFileSync(file, 'utf8');
  expect(text).toContain(from);
  writeFileSync(file, text.replace(from, to));
}

describe.skipIf(repo === null)(describeName('export on the shipped series and the real MLX'), () => {
  const shipped = seriesFiles(REPO_ROOT);
  let project: string;
  let args: string[];
  let checkout: string;

  beforeAll(async () => {
    // A copy of this repository's project files with its own workdir: the shipped series is never written.
    project = tempDir('msp-e2e-export-');
    for (const item of ['mlx-storage-pr.config.json', 'templates', 'patches'])
      cpSync(path.join(REPO_ROOT, item), path.join(project, item), { recursive: true });
    args = ['--mlx-repo', repo as string, '--workdir', path.join(project, '.work')];
    checkout = path.join(project, '.work', 'mlx');
    const applied = await runCli(['apply', ...args], { cwd: project });
    expect(applied.code, applied.stderr).toBe(0);
  }, 10 * 60_000);

  it('writes nothing when the checkout holds the series: templates/ and patches/ stay byte-identical', async () => {
    const result = await runCli(['export', '--json', ...args], { cwd: project });
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toMatchObject({ status: 'nothing-to-export', written: [], removed: [] });
    expect(seriesFiles(project)).toEqual(shipped);
  });

  it(
    'takes an edit of a template-made file and of a patched MLX file back; a fresh apply gives the identical tree',
    async () => {
      editFile(
        path.join(checkout, 'mlx/backend/metal/storage_view.h'),
        '  // MLX was built without the Metal backend.\n',
        '  // MLX was built without the Metal backend (CPU-only or CUDA builds).\n',
      );
      editFile(
        path.join(checkout, 'mlx/backend/metal/no_metal.cpp'),
        '    const StorageExportOptions&) {\n  return StorageExportStatus::metal_not_available;\n',
        '    const StorageExportOptions&) {\n  // No Metal backend in this build.\n  return StorageExportStatus::metal_not_available;\n',
      );
      const edited = await workingTree(checkout);

      const dry = await runCli(['export', '--dry-run', '--json', ...args], { cwd: project });
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.json.written).toEqual(['templates/{{header_path}}', 'patches/0002-no-metal-stub.patch']);
      expect(dry.json.diff).toContain('+  // MLX was built without the Metal backend (CPU-only or CUDA builds).\n');
      expect(seriesFiles(project)).toEqual(shipped);

      const result = await runCli(['export', '--json', ...args], { cwd: project });
      expect(result.code, result.stderr).toBe(0);
      const header = readFileSync(path.join(project, 'templates/{{header_path}}'), 'utf8');
      expect(header).toContain(
        'enum class {{status_enum}} {\n  success,\n  // MLX was built without the Metal backend (CPU-only',
      );
      const patch = readFileSync(path.join(project, 'patches/0002-no-metal-stub.patch'), 'utf8');
      expect(patch).toContain('@@ -28,6 +29,22 @@ const std::string& get_metallib_path() {\n');
      expect(patch).toContain('+    const {{options_struct}}&) {\n+  // No Metal backend in this build.\n');
      // Only what was edited changed.
      const after = seriesFiles(project);
      expect(Object.keys(after).filter((f) => after[f] !== shipped[f])).toEqual([
        'templates/{{header_path}}',
        'patches/0002-no-metal-stub.patch',
      ]);

      const fresh = tempDir('msp-e2e-export-fresh-');
      const applied = await runCli(['apply', '--mlx-repo', repo as string, '--workdir', fresh], { cwd: project });
      expect(applied.code, applied.stderr).toBe(0);
      const { stdout: tree } = await execa('git', ['rev-parse', 'HEAD^{tree}'], { cwd: path.join(fresh, 'mlx') });
      expect(tree.trim()).toBe(edited);

      const again = await runCli(['export', '--json', ...args], { cwd: project });
      expect(again.json).toMatchObject({ status: 'nothing-to-export', written: [] });
      expect(seriesFiles(project)).toEqual(after);
    },
    10 * 60_000,
  );
});
