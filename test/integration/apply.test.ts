import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { editConfig, git, makeProject, makeUpstream, runCli, snapshot, spawnCli, tempDir } from '../support/repos.js';

let upstream: { dir: string; sha: string };
let project: string;
let checkout: string;

const apply = (...extra: string[]) => runCli(['apply', '--mlx-repo', upstream.dir, ...extra], { cwd: project });
const write = (file: string, text: string) => writeFileSync(path.join(project, file), text);
const read = (file: string) => readFileSync(path.join(checkout, file), 'utf8');

beforeEach(() => {
  upstream = makeUpstream();
  project = makeProject(upstream.sha);
  checkout = path.join(project, '.work', 'mlx');
});

/** Makes 0002-docs.patch fail to apply: its context no longer matches. */
function breakDocsPatch() {
  const file = path.join(project, 'patches', '0002-docs.patch');
  writeFileSync(file, readFileSync(file, 'utf8').replace(' Text about operations.', ' Text about something else.'));
}

describe('apply', () => {
  it('writes every template byte for byte: empty, without a last newline, CRLF, blank lines, a path git quotes', async () => {
    const contents: Record<string, string> = {
      'empty.txt': '',
      'no-newline.txt': 'one\ntwo',
      'crlf.txt': 'a\r\nb\r\n',
      'blank.txt': '\n\n',
    };
    const applied = async () => {
      for (const [name, text] of Object.entries(contents)) write(`templates/${name}`, text);
      expect((await apply('--json')).code).toBe(0);
      for (const [name, text] of Object.entries(contents)) expect(read(name), name).toBe(text);
      expect(git(checkout, 'status', '--porcelain')).toBe('');
    };
    // All templates in one `git apply`; then, with a path a patch would have to quote, one by one.
    await applied();
    contents['with space.txt'] = 'x\n';
    await applied();
  });
  it('records the same input hash and file order in every locale', async () => {
    // Sorted by the user's locale, a Danish user put aa.h after b.h (aa is å there) and got another hash.
    for (const name of ['aa.h', 'b.h']) write(`templates/${name}`, `// ${name}\n`);
    const inLocale = async (locale: string) => {
      const env = { LANG: locale, LC_ALL: locale };
      const { json } = await spawnCli(['apply', '--dry-run', '--json'], { cwd: project, env });
      const { files, inputHash } = json as { files: string[]; inputHash: string };
      return { files, inputHash };
    };
    const english = await inLocale('en_US.UTF-8');
    expect(english.files.filter((f) => f === 'aa.h' || f === 'b.h')).toEqual(['aa.h', 'b.h']);
    expect(await inLocale('da_DK.UTF-8')).toEqual(english);
  });
  it('fetches the pinned commit, renders templates and applies the series', async () => {
    const result = await apply();
    expect(result.code).toBe(0);
    expect(git(checkout, 'rev-parse', 'HEAD~1').trim()).toBe(upstream.sha);
    expect(git(checkout, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('mlx-storage-pr');
    expect(read('mlx/backend/metal/storage_view.h')).toContain('class MetalStorageView {};');
    expect(read('mlx/backend/metal/storage_view.h')).toContain('namespace mlx::core::metal {');
    expect(read('mlx/backend/metal/CMakeLists.txt')).toContain('${CMAKE_CURRENT_SOURCE_DIR}/storage_view.cpp)');
    expect(read('docs/src/dev/extensions.rst')).toContain('Borrowing Metal Storage\n-----------------------\n');
    expect(git(checkout, 'status', '--porcelain')).toBe('');
    expect(result.stderr).toContain('Running `git fetch');
  });

  it('is a no-op the second time and says so', async () => {
    expect((await apply()).code).toBe(0);
    const before = snapshot(checkout);
    const again = await apply('--json');
    expect(again.code).toBe(0);
    expect(again.json).toMatchObject({ ok: true, status: 'already-applied', changed: [], fetched: false });
    expect(snapshot(checkout)).toBe(before);
  });

  it('clears the side folder of a fetch that died, and leaves one of the same name that it did not make', async () => {
    const stale = path.join(project, '.work', 'mlx.partial-999999');
    // A fetch marks its side folder as the tool's when it makes it, before anything else goes in.
    mkdirSync(path.join(stale, '.git'), { recursive: true });
    writeFileSync(path.join(stale, '.git', '.mlx-storage-pr'), 'Made by mlx-storage-pr\n');
    const mine = path.join(project, '.work', 'mlx.partial-999998');
    mkdirSync(mine, { recursive: true });
    expect((await apply()).code).toBe(0);
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(mine)).toBe(true);
  });

  it('uses MLX_REPO when no flag is given', async () => {
    const result = await runCli(['apply', '--json'], { cwd: project, env: { MLX_REPO: upstream.dir } });
    expect(result.code).toBe(0);
    expect(result.json.status).toBe('applied');
  });

  it('updates only what changed after a template edit', async () => {
    await apply();
    write(
      'templates/mlx/backend/metal/storage_view.cpp',
      '// Copyright © {{copyright_year}} Apple Inc.\n\n// changed\n',
    );
    const result = await apply('--json');
    expect(result.json).toMatchObject({ status: 'applied', changed: ['mlx/backend/metal/storage_view.cpp'] });
    expect(read('mlx/backend/metal/storage_view.cpp')).toContain('// changed');
  });

  it('leaves the checkout exactly as it was when a patch fails mid-series', async () => {
    await apply();
    const before = snapshot(checkout);
    write('templates/mlx/backend/metal/storage_view.cpp', '// new content\n');
    breakDocsPatch();
    const result = await apply('--json');
    expect(result.code).toBe(4);
    expect(result.json.error.code).toBe('PATCH_CONFLICT');
    expect(result.json.error.details.conflicts).toEqual([
      expect.objectContaining({
        patch: '0002-docs.patch',
        file: 'docs/src/dev/extensions.rst',
        hunk: 1,
        hunkHeader: '@@ -6,6 +6,11 @@',
        reason: 'patch_changed',
      }),
    ]);
    expect(result.stderr).toContain('0002-docs.patch: docs/src/dev/extensions.rst, hunk 1');
    expect(snapshot(checkout)).toBe(before);
  });

  it('leaves a clean pinned checkout untouched when the series fails', async () => {
    await apply();
    await runCli(['reset'], { cwd: project });
    const before = snapshot(checkout);
    breakDocsPatch();
    expect((await apply()).code).toBe(4);
    expect(snapshot(checkout)).toBe(before);
  });

  it('names file_exists for a template or a patch that creates a file the pinned commit has', async () => {
    writeFileSync(path.join(project, 'templates/mlx/backend/metal/no_metal.cpp'), 'a new file\n');
    write(
      'patches/0003-create.patch',
      'diff --git a/tests/CMakeLists.txt b/tests/CMakeLists.txt\nnew file mode 100644\n--- /dev/null\n+++ b/tests/CMakeLists.txt\n@@ -0,0 +1 @@\n+a new file\n',
    );
    write('patches/series', '0001-metal-cmake.patch\n0002-docs.patch\n0003-create.patch\n');
    const result = await apply('--json');
    expect(result.code).toBe(4);
    expect(
      result.json.error.details.conflicts.map(
        (c: { patch: string; file: string; reason: string }) => `${c.patch}:${c.file}:${c.reason}`,
      ),
    ).toEqual([
      'templates/mlx/backend/metal/no_metal.cpp:mlx/backend/metal/no_metal.cpp:file_exists',
      '0003-create.patch:tests/CMakeLists.txt:file_exists',
    ]);
  });

  it('names patch_changed, file_missing and already_applied', async () => {
    const cmake = path.join(project, 'patches', '0001-metal-cmake.patch');
    const original = readFileSync(cmake, 'utf8');
    writeFileSync(
      cmake,
      original.replace(
        '           ${CMAKE_CURRENT_SOURCE_DIR}/device.cpp',
        '           ${CMAKE_CURRENT_SOURCE_DIR}/devices.cpp',
      ),
    );
    write(
      'patches/0003-missing.patch',
      'diff --git a/mlx/nothing.txt b/mlx/nothing.txt\n--- a/mlx/nothing.txt\n+++ b/mlx/nothing.txt\n@@ -1 +1 @@\n-a\n+b\n',
    );
    write('patches/series', '0001-metal-cmake.patch\n0002-docs.patch\n0003-missing.patch\n0004-again.patch\n');
    write('patches/0004-again.patch', readFileSync(path.join(project, 'patches', '0002-docs.patch'), 'utf8'));
    const result = await apply('--json');
    expect(result.code).toBe(4);
    expect(
      result.json.error.details.conflicts.map((c: { patch: string; reason: string }) => `${c.patch}:${c.reason}`),
    ).toEqual([
      '0001-metal-cmake.patch:patch_changed',
      '0003-missing.patch:file_missing',
      '0004-again.patch:already_applied',
    ]);
  });

  it('after the pin moves, --3way merges a patch whose context upstream changed', async () => {
    expect((await apply()).code).toBe(0);
    const cmake = path.join(upstream.dir, 'mlx/backend/metal/CMakeLists.txt');
    writeFileSync(cmake, readFileSync(cmake, 'utf8').replace('/allocator.cpp', '/allocators.cpp'));
    git(upstream.dir, 'commit', '--quiet', '-am', 'rename allocator');
    const moved = git(upstream.dir, 'rev-parse', 'HEAD').trim();
    editConfig(project, (c) => ((c['upstream'] as Record<string, unknown>)['commit'] = moved));

    const exact = await apply('--json');
    expect(exact.code).toBe(4);
    expect(exact.json.error.details.conflicts).toEqual([
      expect.objectContaining({ patch: '0001-metal-cmake.patch', reason: 'upstream_changed', hunk: 1 }),
    ]);

    const merged = await apply('--3way', '--json');
    expect(merged.code, merged.stderr).toBe(0);
    expect(git(checkout, 'rev-parse', 'HEAD~1').trim()).toBe(moved);
    expect(read('mlx/backend/metal/CMakeLists.txt')).toContain(
      '/allocators.cpp\n          ${CMAKE_CURRENT_SOURCE_DIR}/device.cpp\n          ${CMAKE_CURRENT_SOURCE_DIR}/resident.cpp\n          ${CMAKE_CURRENT_SOURCE_DIR}/storage_view.cpp)',
    );
  });

  it('refuses to overwrite uncommitted edits and keeps them', async () => {
    await apply();
    writeFileSync(path.join(checkout, 'docs/src/dev/extensions.rst'), 'my own words\n');
    const patch = path.join(project, 'patches', '0002-docs.patch');
    writeFileSync(patch, readFileSync(patch, 'utf8').replace('+Keep the view', '+Always keep the view'));
    const result = await apply();
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('docs/src/dev/extensions.rst');
    expect(result.stderr).toContain('--force');
    expect(read('docs/src/dev/extensions.rst')).toBe('my own words\n');
  });

  it('refuses an untracked file where a template goes', async () => {
    await apply();
    await runCli(['reset'], { cwd: project });
    writeFileSync(path.join(checkout, 'mlx/backend/metal/storage_view.h'), '// mine\n');
    const result = await apply();
    expect(result.code).toBe(3);
    expect(read('mlx/backend/metal/storage_view.h')).toBe('// mine\n');
  });

  it('with --force saves the edits first and says where', async () => {
    await apply();
    writeFileSync(path.join(checkout, 'docs/src/dev/extensions.rst'), 'my own words\n');
    const patch = path.join(project, 'patches', '0002-docs.patch');
    writeFileSync(patch, readFileSync(patch, 'utf8').replace('+Keep the view', '+Always keep the view'));
    const result = await apply('--force', '--json');
    expect(result.code).toBe(0);
    const saved = result.json.saved as { stash: string; refs: string[] };
    expect(result.stderr).toContain('git stash push');
    expect(read('docs/src/dev/extensions.rst')).toContain('Always keep the view');
    expect(git(checkout, 'show', `${saved.refs[0]}:docs/src/dev/extensions.rst`)).toBe('my own words\n');
    expect(git(checkout, 'rev-parse', saved.refs[0]!).trim()).toBe(saved.stash);
  });

  it('refuses a HEAD that is neither pinned nor applied, and --force keeps it in a backup ref', async () => {
    await apply();
    writeFileSync(path.join(checkout, 'mine.txt'), 'x\n');
    git(checkout, 'add', 'mine.txt');
    git(checkout, 'commit', '--quiet', '-m', 'my commit');
    const mine = git(checkout, 'rev-parse', 'HEAD').trim();
    write('templates/mlx/backend/metal/storage_view.cpp', '// v2\n');
    const refused = await apply();
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('mlx-storage-pr reset');
    const forced = await apply('--force', '--json');
    expect(forced.code).toBe(0);
    expect(git(checkout, 'rev-parse', forced.json.saved.refs[0]).trim()).toBe(mine);
  });

  it('fails clearly when the pinned commit is not in the source', async () => {
    editConfig(
      project,
      (c) => ((c['upstream'] as Record<string, unknown>)['commit'] = '0123456789abcdef0123456789abcdef01234567'),
    );
    const result = await apply('--json');
    expect(result.code).toBe(5);
    expect(result.json.error.code).toBe('COMMIT_NOT_FOUND');
    expect(result.json.error.hint).toContain('upstream.commit');
    expect(existsSync(checkout)).toBe(false);
  });

  it('rejects a short SHA in the config', async () => {
    editConfig(project, (c) => ((c['upstream'] as Record<string, unknown>)['commit'] = upstream.sha.slice(0, 12)));
    const result = await apply();
    expect(result.code).toBe(7);
    expect(result.stderr).toContain('upstream.commit: must be a full 40-character');
  });

  it('fails clearly when the source does not exist or cannot be reached', async () => {
    const missing = await runCli(['apply', '--mlx-repo', path.join(tempDir(), 'nope'), '--json'], { cwd: project });
    expect(missing.code).toBe(5);
    expect(missing.json.error.code).toBe('SOURCE_UNREACHABLE');
    const closed = await runCli(['apply', '--mlx-repo', 'http://127.0.0.1:9/mlx.git', '--json'], { cwd: project });
    expect(closed.code).toBe(5);
    expect(closed.json.error).toMatchObject({ code: 'SOURCE_UNREACHABLE' });
    expect(closed.json.error.hint).toContain('--mlx-repo');
    expect(existsSync(checkout)).toBe(false);
  });

  it("tells a folder that is not a git repository from a source it cannot reach; --verbose shows git's message", async () => {
    const folder = tempDir('msp-not-a-repo-');
    writeFileSync(path.join(folder, 'README.md'), 'not MLX\n');
    const plain = await runCli(['apply', '--mlx-repo', folder, '--json'], { cwd: project });
    expect(plain.code).toBe(5);
    expect(plain.json.error).toMatchObject({
      code: 'SOURCE_NOT_REPOSITORY',
      message: `The MLX source ${folder} is not a git repository.`,
    });
    expect(plain.json.error.hint).toContain('git clone --mirror');
    expect(plain.json.error.hint).not.toContain('network');
    expect(plain.stderr).not.toContain('does not appear to be a git repository');
    const verbose = await runCli(['apply', '--mlx-repo', folder, '--verbose'], { cwd: project });
    expect(verbose.code).toBe(5);
    expect(verbose.stderr).toContain(`'${folder}' does not appear to be a git repository`);

    const closed = await runCli(['apply', '--mlx-repo', 'http://127.0.0.1:9/mlx.git', '--verbose', '--json'], {
      cwd: project,
    });
    expect(closed.json.error).toMatchObject({
      code: 'SOURCE_UNREACHABLE',
      message: 'Cannot reach the MLX source http://127.0.0.1:9/mlx.git.',
    });
    expect(closed.json.error.hint).toContain('network');
    expect(closed.stderr).toMatch(/Failed to connect to 127\.0\.0\.1 port 9|Could not connect to server/);
    expect(existsSync(checkout)).toBe(false);
  });

  it('names the file and the variable for an unknown template variable', async () => {
    write('templates/mlx/backend/metal/storage_view.cpp', '#include "{{header_file}}"\n');
    const result = await apply('--json');
    expect(result.code).toBe(7);
    expect(result.json.error).toMatchObject({
      code: 'TEMPLATE_VARIABLE',
      details: { file: 'templates/mlx/backend/metal/storage_view.cpp', variable: 'header_file' },
    });
  });

  it('names a variable missing from the config, where a template uses it, and the closest declared name', async () => {
    editConfig(project, (c) => delete (c['variables'] as Record<string, unknown>)['class_name']);
    const result = await apply();
    expect(result.code).toBe(7);
    expect(result.stderr).toMatch(
      /error: templates\/\{\{header_path\}\}:\d+: unknown template variable "class_name" \(closest declared name: "[a-z_]+"\)\./,
    );
    expect(result.stderr).toContain('Declare "class_name" in "variables"');
  });

  it('refuses a template path that escapes the checkout', async () => {
    editConfig(project, (c) => ((c['variables'] as Record<string, unknown>)['header_path'] = '../../outside.h'));
    const result = await apply('--json');
    expect(result.code).toBe(7);
    expect(result.json.error.message).toContain('header_path');
    expect(existsSync(path.join(project, 'outside.h'))).toBe(false);
  });

  it('with --dry-run writes nothing', async () => {
    const first = await apply('--dry-run', '--json');
    expect(first.json).toMatchObject({ status: 'would-clone' });
    expect(existsSync(checkout)).toBe(false);
    await apply();
    const before = snapshot(checkout);
    write('templates/mlx/backend/metal/storage_view.cpp', '// v2\n');
    const second = await apply('--dry-run', '--json');
    expect(second.json).toMatchObject({ status: 'would-apply', changed: ['mlx/backend/metal/storage_view.cpp'] });
    expect(snapshot(checkout)).toBe(before);
  });
});

describe('locking', () => {
  it('refuses while another live process holds the lock', async () => {
    const workdir = path.join(project, '.work');
    await apply();
    writeFileSync(path.join(workdir, '.lock'), JSON.stringify({ pid: process.ppid, command: 'test' }));
    const result = await apply('--json');
    expect(result.code).toBe(6);
    expect(result.json.error.message).toContain(`pid ${process.ppid}`);
  });

  it('takes over a lock left by a process that is gone', async () => {
    await apply();
    writeFileSync(path.join(project, '.work', '.lock'), JSON.stringify({ pid: 2 ** 22 + 12345, command: 'apply' }));
    expect((await apply()).code).toBe(0);
  });

  it('lets two processes started together end in one valid state', async () => {
    const runs = await Promise.all(
      [0, 1, 2].map(() => spawnCli(['apply', '--mlx-repo', upstream.dir, '--json'], { cwd: project })),
    );
    for (const run of runs) expect([0, 6]).toContain(run.code);
    expect(runs.some((r) => r.code === 0)).toBe(true);
    for (const run of runs.filter((r) => r.code === 6)) expect(run.json.error.code).toBe('LOCKED');
    expect(git(checkout, 'status', '--porcelain')).toBe('');
    expect(git(checkout, 'rev-parse', 'HEAD~1').trim()).toBe(upstream.sha);
  });
});

describe('pin checks', () => {
  it('refuses a pin that names a tree, not a commit, and leaves no checkout', async () => {
    const tree = git(upstream.dir, 'rev-parse', 'HEAD^{tree}').trim();
    editConfig(project, (c) => ((c['upstream'] as Record<string, unknown>)['commit'] = tree));
    const result = await apply('--json');
    expect(result.code).toBe(7);
    expect(result.json.error).toMatchObject({
      code: 'CONFIG_INVALID',
      message: `upstream.commit ${tree} in mlx-storage-pr.config.json names a tree, not a commit.`,
    });
    expect(existsSync(checkout)).toBe(false);
  });

  /** After a first apply: a post-checkout hook running `script`, and a changed template, so that apply switches again. */
  async function applyAgainWithHook(script: string) {
    expect((await apply()).code).toBe(0);
    const hook = path.join(checkout, '.git', 'hooks', 'post-checkout');
    writeFileSync(hook, `#!/bin/sh\n${script}\n`);
    chmodSync(hook, 0o755);
    write('templates/mlx/backend/metal/storage_view.cpp', '// v2\n');
    return apply('--json');
  }

  it('after apply, checks that HEAD is the applied commit on the pinned one', async () => {
    // A post-checkout hook that moves the branch back: the checkout then no longer holds the series.
    const result = await applyAgainWithHook('git reset --quiet --soft HEAD~1');
    expect(result.code).toBe(5);
    expect(result.json.error).toMatchObject({
      code: 'HEAD_MISMATCH',
      message: `After apply, HEAD of ${checkout} is not the applied commit on top of ${upstream.sha}.`,
    });
  });

  it('after apply, finds HEAD right also when a hook packed the refs (the branch has no file of its own)', async () => {
    const result = await applyAgainWithHook('git pack-refs --all');
    expect(result.code, result.stderr).toBe(0);
    expect(result.json.status).toBe('applied');
    expect(existsSync(path.join(checkout, '.git', 'refs', 'heads', result.json.branch))).toBe(false);
  });

  it('fetches a moved pin into an existing checkout before applying', async () => {
    expect((await apply()).code).toBe(0);
    writeFileSync(path.join(upstream.dir, 'NEWS.md'), 'moved\n');
    git(upstream.dir, 'add', 'NEWS.md');
    git(upstream.dir, 'commit', '--quiet', '-m', 'move the pin');
    const moved = git(upstream.dir, 'rev-parse', 'HEAD').trim();
    editConfig(project, (c) => ((c['upstream'] as Record<string, unknown>)['commit'] = moved));
    const status = await runCli(['status', '--json'], { cwd: project });
    expect(status.json).toMatchObject({ state: 'missing-pinned-commit', pinned: moved, base: upstream.sha });
    const human = await runCli(['status'], { cwd: project });
    expect(human.stdout).toContain(`base:     ${upstream.sha}  <- not the pinned commit\n`);
    expect(human.stdout).toContain('series:   the checkout lacks the pinned commit: run `mlx-storage-pr apply`\n');
    const result = await apply('--json');
    expect(result.code, result.stderr).toBe(0);
    expect(result.json.fetched).toBe(true);
    expect(git(checkout, 'rev-parse', 'HEAD~1').trim()).toBe(moved);
  });
});

describe('status and reset', () => {
  it('prints the state for people: checkout, commits, series state, differing and uncommitted files', async () => {
    const none = await runCli(['status'], { cwd: project });
    expect(none.stdout).toBe(`No checkout in ${checkout}. Run \`mlx-storage-pr apply\`.\n`);
    await apply();
    const head = git(checkout, 'rev-parse', 'HEAD').trim();
    writeFileSync(path.join(checkout, 'mlx/backend/metal/storage_view.h'), '// edited\n');
    writeFileSync(path.join(checkout, 'notes.txt'), 'mine\n');
    const result = await runCli(['status'], { cwd: project });
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      [
        `checkout: ${checkout}`,
        `pinned:   ${upstream.sha} (MLX 0.32.2)`,
        `source:   ${upstream.dir} (remembered from apply)`,
        `head:     ${head} on mlx-storage-pr`,
        `base:     ${upstream.sha}`,
        'series:   applied and current',
        'differs from the rendered series:',
        '  mlx/backend/metal/storage_view.h',
        'uncommitted changes:',
        '   M mlx/backend/metal/storage_view.h',
        '  ?? notes.txt',
        '',
      ].join('\n'),
    );
  });

  it('reports pinned and actual commits, differences and dirty files', async () => {
    const none = await runCli(['status', '--json'], { cwd: project });
    expect(none.json).toMatchObject({ ok: true, state: 'no-checkout' });
    await apply();
    writeFileSync(path.join(checkout, 'mlx/backend/metal/storage_view.h'), '// edited\n');
    const result = await runCli(['status', '--json'], { cwd: project });
    expect(result.code).toBe(0);
    expect(result.json).toMatchObject({
      command: 'status',
      pinned: upstream.sha,
      base: upstream.sha,
      branch: 'mlx-storage-pr',
      state: 'applied',
      differs: ['mlx/backend/metal/storage_view.h'],
      dirty: [{ code: ' M', path: 'mlx/backend/metal/storage_view.h' }],
    });
    write('templates/mlx/backend/metal/storage_view.cpp', '// v2\n');
    expect((await runCli(['status', '--json'], { cwd: project })).json.state).toBe('outdated');
  });

  it('reset returns to the pinned commit and saves edits', async () => {
    await apply();
    writeFileSync(path.join(checkout, 'mlx/backend/metal/storage_view.h'), '// edited\n');
    const result = await runCli(['reset', '--json'], { cwd: project });
    expect(result.code).toBe(0);
    expect(result.json.status).toBe('reset');
    expect(git(checkout, 'rev-parse', 'HEAD').trim()).toBe(upstream.sha);
    expect(git(checkout, 'status', '--porcelain')).toBe('');
    expect(git(checkout, 'show', `${result.json.saved.refs[0]}:mlx/backend/metal/storage_view.h`)).toBe('// edited\n');
    expect((await runCli(['reset', '--json'], { cwd: project })).json.status).toBe('already-clean');
  });
});

describe('--json', () => {
  it('prints exactly one JSON object on stdout and human text on stderr', async () => {
    const result = await spawnCli(['apply', '--mlx-repo', upstream.dir, '--json'], { cwd: project });
    expect(result.code).toBe(0);
    expect(Object.keys(result.json).sort()).toEqual(
      [
        'ok',
        'command',
        'status',
        'checkout',
        'pinned',
        'head',
        'branch',
        'inputHash',
        'files',
        'patches',
        'changed',
        'localEdits',
        'fetched',
      ].sort(),
    );
    expect(result.stderr).toContain('Running `git');
    const failed = await spawnCli(['apply', '--mlx-repo', '/nonexistent/mlx', '--json', '--workdir', tempDir()], {
      cwd: project,
    });
    expect(failed.code).toBe(5);
    expect(Object.keys(failed.json)).toEqual(['ok', 'command', 'error']);
    expect(Object.keys(failed.json.error)).toEqual(['code', 'message', 'hint', 'details']);
  });

  it('reports usage errors with exit code 2', async () => {
    const result = await runCli(['apply', '--bogus-flag'], { cwd: project });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('bogus-flag');
  });
});
