import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import {
  freshApplyTree,
  makeExportProject,
  makeExportUpstream,
  projectFiles,
  workingTree,
} from '../support/export-fixtures.js';
import { git, runCli, snapshot } from '../support/repos.js';

let upstream: { dir: string; sha: string };
let project: string;
let checkout: string;
let worktree: string;

const cli = (...args: string[]) => runCli([...args, '--mlx-repo', upstream.dir], { cwd: project });
const projectFile = (file: string) => readFileSync(path.join(project, file), 'utf8');
const NO_METAL = 'mlx/backend/metal/no_metal.cpp';
const DOCS = 'docs/src/dev/extensions.rst';
const CONFIG = 'mlx-storage-pr.config.json';

/** Commits edits of the upstream fixture's files on its main branch; returns the new commit. */
function commitUpstream(edits: Record<string, (text: string) => string>, message = 'upstream change'): string {
  for (const [file, edit] of Object.entries(edits)) {
    const full = path.join(upstream.dir, file);
    writeFileSync(full, edit(readFileSync(full, 'utf8')));
  }
  git(upstream.dir, 'commit', '--quiet', '-am', message);
  return git(upstream.dir, 'rev-parse', 'HEAD').trim();
}

const version = (minor: number) => (t: string) =>
  t
    .replace(/MLX_VERSION_MINOR \d+/, `MLX_VERSION_MINOR ${minor}`)
    .replace(/MLX_VERSION_PATCH \d+/, 'MLX_VERSION_PATCH 0');
/** Upstream adds a function exactly where patches/0002 adds the stub: a conflict. */
const conflictingFunction = (t: string) =>
  t.replace('without metal backend");\n}\n\n', 'without metal backend");\n}\n\nvoid reset_peak_memory() {}\n\n');

beforeEach(async () => {
  upstream = makeExportUpstream();
  project = makeExportProject(upstream.sha);
  checkout = path.join(project, '.work', 'mlx');
  worktree = path.join(project, '.work', 'bump', 'mlx');
  const applied = await cli('apply');
  expect(applied.code, applied.stderr).toBe(0);
});

describe('bump', () => {
  it('moves the pin, merging three-way where needed: the config gets the new commit and version, patches are regenerated against it and the checkout holds the series there', async () => {
    const configBefore = projectFile(CONFIG);
    const target = commitUpstream({
      'mlx/version.h': version(33),
      [NO_METAL]: (t) => t.replace('#include <stdexcept>\n', '#include <stdexcept>\n#include <string>\n'),
      [DOCS]: (t) =>
        t.replace(
          'Text about operations.\n',
          'Text about operations.\n\nBorrowing Metal Storage\n-----------------------\n\nKeep the view until your command buffer completes.\n',
        ),
    });

    const result = await cli('bump', '--to', 'main', '--json');
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toMatchObject({
      status: 'bumped',
      ref: 'main',
      from: { commit: upstream.sha, version: '0.32.2' },
      to: { commit: target, version: '0.33.0' },
      written: ['patches/0001-no-metal-include.patch', 'patches/0002-no-metal-stub.patch', 'patches/series', CONFIG],
      removed: ['patches/0003-docs.patch'],
    });
    expect(result.json.patches).toEqual([
      { patch: '0001-no-metal-include.patch', file: NO_METAL, result: 'merged', conflicts: 0 },
      { patch: '0002-no-metal-stub.patch', file: NO_METAL, result: 'clean', conflicts: 0 },
      { patch: '0003-docs.patch', file: DOCS, result: 'upstream', conflicts: 0 },
    ]);

    // Only the commit and the version change in the config.
    expect(projectFile(CONFIG)).toBe(configBefore.replace(upstream.sha, target).replace('"0.32.2"', '"0.33.0"'));
    expect(projectFile('patches/series')).toBe(
      '# Applied in this order.\n0001-no-metal-include.patch\n0002-no-metal-stub.patch\n',
    );
    expect(existsSync(path.join(project, 'patches/0003-docs.patch'))).toBe(false);
    // Written against the new commit: its blob in the index line, its line numbers, git's function context.
    const newBlob = git(upstream.dir, 'rev-parse', `${target}:${NO_METAL}`).trim().slice(0, 7);
    expect(projectFile('patches/0001-no-metal-include.patch')).toMatch(
      new RegExp(`^index ${newBlob}\\.\\.[0-9a-f]{7} 100644\n`, 'm'),
    );
    expect(projectFile('patches/0001-no-metal-include.patch')).toContain(
      '@@ -4,6 +4,7 @@\n #include <string>\n \n #include "mlx/backend/metal/metal.h"\n+#include "{{header_include}}"\n',
    );
    expect(projectFile('patches/0002-no-metal-stub.patch')).toContain(
      '@@ -21,6 +21,13 @@ const std::string& get_metallib_path() {\n',
    );

    expect(git(checkout, 'rev-parse', 'HEAD^').trim()).toBe(target);
    const status = await cli('status', '--json');
    expect(status.json).toMatchObject({ state: 'applied', pinned: target, pinnedVersion: '0.33.0', differs: [] });
    expect(status.json.bump).toBeUndefined();
    expect(await freshApplyTree(project, upstream.dir)).toBe(git(checkout, 'rev-parse', 'HEAD^{tree}').trim());

    const again = await cli('bump', '--to', 'main', '--json');
    expect(again.json).toMatchObject({ status: 'already-pinned', written: [] });
  });

  it("fetches the old pin first when there is no checkout yet: its files are the three-way merge's base", async () => {
    rmSync(path.join(project, '.work'), { recursive: true, force: true });
    const target = commitUpstream({
      'mlx/version.h': version(33),
      [NO_METAL]: (t) => t.replace('#include <stdexcept>\n', '#include <stdexcept>\n#include <string>\n'),
    });
    const result = await cli('bump', '--to', target, '--json');
    expect(result.code, result.stderr).toBe(0);
    expect(result.json.patches[0]).toMatchObject({ patch: '0001-no-metal-include.patch', result: 'merged' });
    expect(git(checkout, 'rev-parse', 'HEAD^').trim()).toBe(target);
  });

  it('stops on a conflict (exit 4) with the series and its markers in a worktree, says what to do next, and finishes with export and --continue', async () => {
    const before = projectFiles(project);
    const checkoutBefore = snapshot(checkout);
    const target = commitUpstream({ 'mlx/version.h': version(33), [NO_METAL]: conflictingFunction });

    const stopped = await cli('bump', '--to', 'main', '--json');
    expect(stopped.code).toBe(4);
    expect(stopped.json.error).toMatchObject({
      code: 'BUMP_CONFLICT',
      details: {
        resumable: true,
        worktree,
        to: { commit: target, version: '0.33.0' },
        conflicts: [{ patch: '0002-no-metal-stub.patch', file: NO_METAL, count: 1 }],
        next: [
          `Resolve each <<<<<<< ... >>>>>>> block in ${path.join(worktree, NO_METAL)}`,
          'mlx-storage-pr export',
          'mlx-storage-pr bump --continue',
        ],
      },
    });
    expect(stopped.json.error.message).toContain('1. Resolve each <<<<<<< ... >>>>>>> block in');
    expect(stopped.json.error.message).toContain('2. `mlx-storage-pr export`');
    expect(stopped.json.error.message).toContain('3. `mlx-storage-pr bump --continue`');
    const conflicted = readFileSync(path.join(worktree, NO_METAL), 'utf8');
    expect(conflicted).toContain(`<<<<<<< MLX ${target.slice(0, 12)}\nvoid reset_peak_memory() {}\n=======\n`);
    expect(conflicted).toContain('>>>>>>> patches/0002-no-metal-stub.patch\n');
    expect(projectFiles(project)).toEqual(before);
    expect(snapshot(checkout)).toBe(checkoutBefore);

    const status = await cli('status', '--json');
    expect(status.json.bump).toMatchObject({ ref: 'main', to: { commit: target }, worktree });
    expect((await cli('status')).stdout).toContain('bump:     in progress');
    expect((await cli('apply', '--json')).json.error.code).toBe('BUMP_IN_PROGRESS');
    expect((await cli('bump', '--to', 'main', '--json')).code).toBe(3);
    const early = await cli('bump', '--continue', '--json');
    expect(early.code).toBe(4);
    expect(early.json.error.code).toBe('BUMP_CONFLICT');
    const markers = await cli('export', '--json');
    expect(markers.json.error).toMatchObject({ code: 'EXPORT_REFUSED', details: { file: NO_METAL } });

    // Keep both: upstream's new function, then the stub.
    writeFileSync(
      path.join(worktree, NO_METAL),
      conflicted.replace(/<<<<<<< .*\n([\s\S]*?)=======\n([\s\S]*?)>>>>>>> .*\n/, '$1\n$2'),
    );
    const resolved = await workingTree(worktree);
    const exported = await cli('export', '--json');
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.json).toMatchObject({ status: 'exported', bump: true, base: target, source: worktree });
    expect(exported.json.written).toContain('patches/0002-no-metal-stub.patch');
    expect(projectFile('patches/0002-no-metal-stub.patch')).toContain(
      ' void reset_peak_memory() {}\n \n+{{status_enum}} {{try_export_function}}(\n',
    );
    expect(projectFile(CONFIG)).toContain(upstream.sha);

    const done = await cli('bump', '--continue', '--json');
    expect(done.code, done.stderr).toBe(0);
    expect(done.json).toMatchObject({ status: 'continued', to: { commit: target, version: '0.33.0' } });
    expect(projectFile(CONFIG)).toContain(`"commit": "${target}"`);
    expect(projectFile(CONFIG)).toContain('"version": "0.33.0"');
    expect(existsSync(path.join(project, '.work', 'bump'))).toBe(false);
    expect(git(checkout, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect(git(checkout, 'rev-parse', 'HEAD^').trim()).toBe(target);
    expect(git(checkout, 'rev-parse', 'HEAD^{tree}').trim()).toBe(resolved);
    expect(await freshApplyTree(project, upstream.dir)).toBe(resolved);
  });

  it('is blocked (exit 4, not resumable) when the new commit already has the file a template makes: no worktree, nothing changed, and says which variable to change before bumping again', async () => {
    const before = projectFiles(project);
    const checkoutBefore = snapshot(checkout);
    const HEADER = 'mlx/backend/metal/storage_view.h';
    writeFileSync(path.join(upstream.dir, HEADER), '// Upstream has a header of this name now.\n');
    git(upstream.dir, 'add', HEADER);
    const target = commitUpstream({ 'mlx/version.h': version(33) });

    const blocked = await cli('bump', '--to', 'main', '--json');
    expect(blocked.code).toBe(4);
    expect(blocked.json.error).toMatchObject({
      code: 'BUMP_CONFLICT',
      details: {
        resumable: false,
        to: { commit: target, version: '0.33.0' },
        conflicts: [{ patch: 'templates/{{header_path}}', file: HEADER, reason: 'file_exists' }],
      },
    });
    expect(blocked.json.error.message).toContain(
      `templates/{{header_path}}: ${HEADER}: the new commit already has this file`,
    );
    // What to do: the variable that names the path, where it lives, and the command to run again.
    expect(blocked.json.error.hint).toContain('"header_path"');
    expect(blocked.json.error.hint).toContain(CONFIG);
    expect(blocked.json.error.hint).toContain('`mlx-storage-pr bump --to main`');

    expect(projectFiles(project)).toEqual(before);
    expect(snapshot(checkout)).toBe(checkoutBefore);
    expect(existsSync(path.join(project, '.work', 'bump'))).toBe(false);
    expect((await cli('status', '--json')).json.bump).toBeUndefined();
    expect((await cli('bump', '--continue', '--json')).json.error.code).toBe('NO_BUMP');
  });

  it('--abort puts the config, templates/, patches/ and the checkout back byte for byte, also after an export', async () => {
    const before = projectFiles(project);
    const checkoutBefore = snapshot(checkout);
    commitUpstream({ 'mlx/version.h': version(33), [NO_METAL]: conflictingFunction });
    expect((await cli('bump', '--to', 'main')).code).toBe(4);
    const conflicted = readFileSync(path.join(worktree, NO_METAL), 'utf8');
    writeFileSync(
      path.join(worktree, NO_METAL),
      conflicted.replace(/<<<<<<< .*\n([\s\S]*?)=======\n([\s\S]*?)>>>>>>> .*\n/, '$2'),
    );
    const source = path.join(worktree, 'mlx/backend/metal/storage_view.cpp');
    writeFileSync(source, readFileSync(source, 'utf8').replace('  return 0;', '  return 2;'));
    expect((await cli('export')).code).toBe(0);
    expect(projectFiles(project)).not.toEqual(before);

    const aborted = await cli('bump', '--abort', '--json');
    expect(aborted.code, aborted.stderr).toBe(0);
    expect(aborted.json).toMatchObject({ status: 'aborted', from: { commit: upstream.sha, version: '0.32.2' } });
    expect(projectFiles(project)).toEqual(before);
    expect(snapshot(checkout)).toBe(checkoutBefore);
    expect(existsSync(path.join(project, '.work', 'bump'))).toBe(false);
    expect(git(checkout, 'worktree', 'list', '--porcelain').match(/^worktree /gm)).toHaveLength(1);
    expect((await cli('apply', '--json')).json).toMatchObject({ status: 'already-applied' });
    expect((await cli('status', '--json')).json.bump).toBeUndefined();
  });

  it('clean --all refuses while a bump is in progress, removing nothing; clean without --all keeps its worktree', async () => {
    commitUpstream({ 'mlx/version.h': version(33), [NO_METAL]: conflictingFunction });
    expect((await cli('bump', '--to', 'main')).code).toBe(4);
    const resolving = path.join(worktree, NO_METAL);
    writeFileSync(resolving, `${readFileSync(resolving, 'utf8')}// my resolution\n`);
    const inWorktree = snapshot(worktree);
    const workdirEntries = () => readdirSync(path.join(project, '.work')).sort();
    const before = workdirEntries();

    const refused = await cli('clean', '--all', '--json');
    expect(refused.code).toBe(3);
    expect(refused.json.error.code).toBe('CHECKOUT_HAS_WORK');
    expect(refused.json.error.message).toContain(`a bump in progress: its worktree ${worktree}`);
    expect(refused.json.error.hint).toContain('bump --abort');
    expect(workdirEntries()).toEqual(before);

    expect((await cli('clean')).code).toBe(0);
    expect(snapshot(worktree)).toBe(inWorktree);
    expect((await cli('bump', '--abort')).code).toBe(0);
  });

  it('refuses, changing nothing: uncommitted edits in the checkout (3), an unknown ref (5), a commit without a version (5), --continue or --abort without a bump (2), no action (2)', async () => {
    const before = projectFiles(project);
    const noVersion = commitUpstream({ 'mlx/version.h': () => '// no version here\n' });
    writeFileSync(path.join(checkout, DOCS), 'my edit\n');
    const dirty = await cli('bump', '--to', 'main', '--json');
    expect(dirty.code).toBe(3);
    expect(dirty.json.error.code).toBe('DIRTY_CHECKOUT');
    expect(readFileSync(path.join(checkout, DOCS), 'utf8')).toBe('my edit\n');
    git(checkout, 'checkout', '--', DOCS);

    const rows: Record<string, string[]> = {
      'unknown ref': ['bump', '--to', 'no-such-branch'],
      'no version': ['bump', '--to', noVersion],
      '--continue': ['bump', '--continue'],
      '--abort': ['bump', '--abort'],
      'no action': ['bump'],
      'two actions': ['bump', '--to', 'main', '--abort'],
    };
    const outcomes: Record<string, [number, string]> = {};
    for (const [name, args] of Object.entries(rows)) {
      const r = await cli(...args, '--json');
      outcomes[name] = [r.code, r.json.error.code as string];
    }
    expect(outcomes).toEqual({
      'unknown ref': [5, 'COMMIT_NOT_FOUND'],
      'no version': [5, 'VERSION_NOT_FOUND'],
      '--continue': [2, 'NO_BUMP'],
      '--abort': [2, 'NO_BUMP'],
      'no action': [2, 'USAGE'],
      'two actions': [2, 'USAGE'],
    });
    expect(projectFiles(project)).toEqual(before);
    expect(existsSync(path.join(project, '.work', 'bump'))).toBe(false);
  });
});
