import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { git, makeProject, makeUpstream, runCli, tempDir } from '../support/repos.js';
import { commitAll, edit, seriesUpstream } from '../support/series-fixtures.js';

/** Runs init into a new folder of a fresh temp dir; returns the result and the folder. */
async function init(repo: string, from: string, pin: string, extra: string[] = []) {
  const parent = tempDir('msp-init-');
  const project = path.join(parent, 'series');
  const result = await runCli(
    ['init', '--project', project, '--from', from, '--pin', pin, '--mlx-repo', repo, '--json', ...extra],
    {
      cwd: parent,
    },
  );
  return { result, project, parent };
}

/** `apply --project` of `project`; returns the checkout's tree. */
async function appliedTree(project: string, repo: string): Promise<string> {
  const workdir = tempDir('msp-init-work-');
  const applied = await runCli(['apply', '--project', project, '--mlx-repo', repo, '--workdir', workdir], {
    cwd: project,
  });
  expect(applied.code, applied.stderr).toBe(0);
  return git(path.join(workdir, 'mlx'), 'rev-parse', 'HEAD^{tree}').trim();
}

describe('init --from', () => {
  it('turns edits, a new file, an empty file, a mode change and a rename into one patch per file that apply reproduces exactly', async () => {
    const { dir, sha: pin } = makeUpstream('series/upstream');
    git(dir, 'checkout', '--quiet', '-b', 'feature');
    // MLX text with braces, and a {{name}} that no variable declares: all of it is text.
    edit(
      dir,
      'tests/ops_tests.cpp',
      '  float pairs[][2]',
      '  // {{ name }} and {{absolute}} stay as written.\n  float pairs[][2]',
    );
    writeFileSync(path.join(dir, 'mlx/new.h'), '#pragma once\n');
    commitAll(dir, 'first');
    chmodSync(path.join(dir, 'mlx/backend/cpu/unary.cpp'), 0o755);
    git(dir, 'mv', 'docs/src/dev/extensions.rst', 'docs/src/dev/custom.rst');
    writeFileSync(path.join(dir, 'mlx/empty.h'), '');
    commitAll(dir, 'second');
    edit(dir, 'mlx/ops.h', 'float maximum', 'float maximum2(float a);\nfloat maximum');
    edit(dir, 'tests/ops_tests.cpp', 'TEST_CASE("test maximum")', 'TEST_CASE("test maximum of pairs")');
    commitAll(dir, 'third');

    const { result, project } = await init(dir, 'feature', pin);
    expect(result.code, result.stderr).toBe(0);
    expect(result.json).toMatchObject({ branch: 'feature', commits: 3, pin, version: '0.9.1' });
    expect(result.json.patches.map((p: { file: string }) => p.file)).toEqual([
      'mlx/new.h',
      'tests/ops_tests.cpp',
      'docs/src/dev/custom.rst',
      'mlx/backend/cpu/unary.cpp',
      'mlx/empty.h',
      'mlx/ops.h',
    ]);
    const patches = readdirSync(path.join(project, 'patches')).filter((f) => f !== 'series');
    expect(patches).toHaveLength(6);
    const series = readFileSync(path.join(project, 'patches', 'series'), 'utf8');
    expect(series.split('\n').filter((l) => l && !l.startsWith('#'))).toEqual(
      result.json.patches.map((p: { name: string }) => p.name),
    );
    const rename = readFileSync(path.join(project, 'patches', '0003-docs-src-dev-custom.rst.patch'), 'utf8');
    expect(rename).toContain('rename from docs/src/dev/extensions.rst\nrename to docs/src/dev/custom.rst\n');
    expect(readFileSync(path.join(project, 'patches', '0004-mlx-backend-cpu-unary.cpp.patch'), 'utf8')).toContain(
      'old mode 100644\nnew mode 100755\n',
    );
    expect(readFileSync(path.join(project, 'patches', '0002-tests-ops_tests.cpp.patch'), 'utf8')).toContain(
      '+  // {{ name }} and {{absolute}} stay as written.\n',
    );
    expect(JSON.parse(readFileSync(path.join(project, 'mutants.json'), 'utf8'))).toEqual({ mutants: [] });
    expect(readdirSync(path.join(project, 'pr')).sort()).toEqual(['README.md', 'commit-message.txt', 'description.md']);
    expect(existsSync(path.join(project, 'templates'))).toBe(false);

    expect(await appliedTree(project, dir)).toBe(git(dir, 'rev-parse', 'feature^{tree}').trim());
  });

  it('names the branch mlx-<short id> for a commit, and takes the pin of the project in the current folder', async () => {
    const { dir, sha: pin } = makeUpstream('series/upstream');
    edit(dir, 'mlx/ops.h', 'float maximum', 'float other(float a);\nfloat maximum');
    const head = commitAll(dir, 'one');
    const here = makeProject(pin);
    const project = path.join(tempDir('msp-init-'), 'series');
    const result = await runCli(['init', '--project', project, '--from', head, '--mlx-repo', dir, '--json'], {
      cwd: here,
    });
    expect(result.code, result.stderr).toBe(0);
    const config = JSON.parse(readFileSync(path.join(project, 'mlx-storage-pr.config.json'), 'utf8'));
    expect(config).toMatchObject({ upstream: { commit: pin, version: '0.9.1' }, branch: `mlx-${head.slice(0, 12)}` });
    expect(Object.keys(config)).not.toContain('variables');
    expect(await appliedTree(project, dir)).toBe(git(dir, 'rev-parse', `${head}^{tree}`).trim());
  });

  /** A refusal writes nothing: no project folder and no staging folder next to it. */
  function expectNothingWritten(parent: string, project: string, before: string[] = []) {
    expect(readdirSync(parent).sort()).toEqual(before);
    expect(existsSync(project) ? readdirSync(project) : null).toEqual(before.includes('series') ? ['keep.txt'] : null);
  }

  it('refuses a folder that is not empty (exit 2) and leaves it as it was', async () => {
    const { dir, sha: pin } = makeUpstream('series/upstream');
    const parent = tempDir('msp-init-');
    const project = path.join(parent, 'series');
    mkdirSync(project);
    writeFileSync(path.join(project, 'keep.txt'), 'mine');
    const result = await runCli(['init', '--project', project, '--from', 'main', '--pin', pin, '--mlx-repo', dir], {
      cwd: parent,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${project} already exists and is not empty`);
    expect(result.stderr).toContain('hint: init makes a new project folder');
    expectNothingWritten(parent, project, ['series']);
  });

  it('refuses a ref that does not descend from the pin (exit 5), naming both', async () => {
    const { dir, sha: pin } = makeUpstream('series/upstream');
    git(dir, 'checkout', '--quiet', '--orphan', 'other');
    commitAll(dir, 'unrelated');
    const { result, project, parent } = await init(dir, 'other', pin);
    expect(result.code).toBe(5);
    expect(result.json.error.code).toBe('INIT_NOT_DESCENDANT');
    expect(result.json.error.message).toContain(`does not descend from the pin ${pin.slice(0, 12)}`);
    expect(result.json.error.hint).toContain('git rebase');
    expectNothingWritten(parent, project);
  });

  const unsupported: Array<[string, (dir: string) => string, RegExp]> = [
    [
      'a merge commit',
      (dir) => {
        git(dir, 'checkout', '--quiet', '-b', 'side');
        edit(dir, 'mlx/ops.h', 'float maximum', 'float side(float a);\nfloat maximum');
        commitAll(dir, 'side');
        git(dir, 'checkout', '--quiet', 'work');
        edit(dir, 'mlx/ops.cpp', '// Synthetic', '// A synthetic');
        commitAll(dir, 'work');
        git(dir, 'merge', '--quiet', '--no-edit', 'side');
        return 'merge';
      },
      /Commit [0-9a-f]{12} \("Merge branch 'side' into work"\) is a merge\./,
    ],
    [
      'a binary file',
      (dir) => {
        writeFileSync(path.join(dir, 'mlx/blob.bin'), Buffer.from([0, 1, 2, 0, 255]));
        commitAll(dir, 'binary');
        return 'binary';
      },
      /Commit [0-9a-f]{12} \("binary"\) changes mlx\/blob\.bin, a binary file/,
    ],
    [
      'a symbolic link',
      (dir) => {
        symlinkSync('ops.h', path.join(dir, 'mlx/alias.h'));
        commitAll(dir, 'link');
        return 'link';
      },
      /Commit [0-9a-f]{12} \("link"\) changes mlx\/alias\.h, a symbolic link/,
    ],
    [
      'a submodule',
      (dir) => {
        git(
          dir,
          'update-index',
          '--add',
          '--cacheinfo',
          `160000,${git(dir, 'rev-parse', 'HEAD').trim()},third_party/sub`,
        );
        git(dir, 'commit', '--quiet', '-m', 'submodule');
        return 'submodule';
      },
      /Commit [0-9a-f]{12} \("submodule"\) changes third_party\/sub, a submodule/,
    ],
  ];
  for (const [what, make, message] of unsupported) {
    it(`refuses a range holding ${what} (exit 7), naming the commit${what === 'a merge commit' ? '' : ' and the path'}`, async () => {
      const { dir, sha: pin } = makeUpstream('series/upstream');
      git(dir, 'checkout', '--quiet', '-b', 'work');
      make(dir);
      const { result, project, parent } = await init(dir, 'work', pin);
      expect(result.code, result.stderr).toBe(7);
      expect(result.json.error.code).toBe('INIT_UNSUPPORTED_CHANGE');
      expect(result.json.error.message).toMatch(message);
      expectNothingWritten(parent, project);
    });
  }

  it('stopped by Ctrl-C, says it wrote nothing and leaves nothing (exit 130)', async () => {
    const { dir, sha: pin } = makeUpstream('series/upstream');
    const parent = tempDir('msp-init-');
    const project = path.join(parent, 'series');
    const controller = new AbortController();
    controller.abort();
    const result = await runCli(['init', '--project', project, '--from', 'main', '--pin', pin, '--mlx-repo', dir], {
      cwd: parent,
      signal: controller.signal,
    });
    expect(result.code).toBe(130);
    expect(result.stderr).toContain('`mlx-storage-pr init` did not finish');
    expect(result.stderr).toContain('It wrote nothing.');
    expectNothingWritten(parent, project);
  });

  it('refuses a missing --from or --project as a usage error', async () => {
    const result = await runCli(['init', '--project', 'x'], { cwd: tempDir() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('init needs --from <ref>');
  });
});

describe('the four series of fixtures/series', () => {
  const { dir, pin } = seriesUpstream();

  for (const name of ['new-op', 'docs-only', 'empty', 'cpu-two-changes']) {
    it(`${name}: init of its branch gives the shipped project, and apply reproduces the branch's tree`, async () => {
      const { result, project } = await init(dir, name, pin);
      expect(result.code, result.stderr).toBe(0);
      const shipped = makeProject(pin, `series/${name}`);
      if (name !== 'cpu-two-changes') {
        for (const file of readdirSync(path.join(shipped, 'patches')))
          expect(readFileSync(path.join(project, 'patches', file), 'utf8'), file).toBe(
            readFileSync(path.join(shipped, 'patches', file), 'utf8'),
          );
      }
      const branchTree = git(dir, 'rev-parse', `${name}^{tree}`).trim();
      expect(await appliedTree(project, dir)).toBe(branchTree);
      expect(await appliedTree(shipped, dir)).toBe(branchTree);
    });
  }

  it("new-op: a patch next to MLX's {{...}} braces round-trips through export", async () => {
    const project = makeProject(pin, 'series/new-op');
    const workdir = tempDir('msp-init-work-');
    const args = ['--project', project, '--mlx-repo', dir, '--workdir', workdir];
    expect((await runCli(['apply', ...args], { cwd: project })).code).toBe(0);
    const checkout = path.join(workdir, 'mlx');
    edit(checkout, 'tests/ops_tests.cpp', '{{{1, 0, 0}}}', '{{{1, 0, 0}}, {{2, 1, 1}}}');
    const exported = await runCli(['export', ...args], { cwd: project });
    expect(exported.code, exported.stderr).toBe(0);
    const patch = readFileSync(path.join(project, 'patches', '0004-tests-ops_tests.cpp.patch'), 'utf8');
    expect(patch).toContain('+  float pairs[][3] = {{{1, 0, 0}}, {{2, 1, 1}}};\n');
    expect(patch).toContain(' TEST_CASE("test maximum") {\n   float pairs[][3] = {{{0, 1}}, {1, 0, 1}, {2, 2, 2}};\n');
    const again = await runCli(['apply', ...args, '--json'], { cwd: project });
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(path.join(checkout, 'tests/ops_tests.cpp'), 'utf8')).toContain('{{{1, 0, 0}}, {{2, 1, 1}}}');
  });

  it('new-op: bump to a newer commit that adds braces next to the patch keeps them as text', async () => {
    // A newer upstream commit on a side branch: a case with MLX-style braces just above the patch's context.
    const newer = tempDir('msp-init-newer-');
    git(newer, 'clone', '--quiet', '--shared', dir, '.');
    git(newer, 'checkout', '--quiet', '-b', 'newer', pin);
    const extra =
      'TEST_CASE("test maximum of braces") {\n  float p[][2] = {{{2, 1}}};\n  CHECK_EQ(maximum(p[0][0], p[0][1]), 2);\n}\n\n';
    edit(newer, 'tests/ops_tests.cpp', 'TEST_CASE("test maximum") {', `${extra}TEST_CASE("test maximum") {`);
    const target = commitAll(newer, 'Test maximum with braces');
    const project = makeProject(pin, 'series/new-op');
    const workdir = tempDir('msp-init-work-');
    const args = ['--project', project, '--mlx-repo', newer, '--workdir', workdir];
    expect((await runCli(['apply', ...args], { cwd: project })).code).toBe(0);
    const bumped = await runCli(['bump', '--to', 'newer', ...args, '--json'], { cwd: project });
    expect(bumped.code, bumped.stderr).toBe(0);
    expect(bumped.json).toMatchObject({ status: 'bumped', relation: 'newer' });
    const config = JSON.parse(readFileSync(path.join(project, 'mlx-storage-pr.config.json'), 'utf8')) as {
      upstream: { commit: string };
    };
    expect(config.upstream.commit).toBe(target);
    const patch = readFileSync(path.join(project, 'patches', '0004-tests-ops_tests.cpp.patch'), 'utf8');
    expect(patch).toContain('+  float pairs[][3] = {{{1, 0, 0}}};\n');
    expect(patch).toContain(' TEST_CASE("test maximum") {\n   float pairs[][3] = {{{0, 1}}, {1, 0, 1}, {2, 2, 2}};\n');
    const fresh = tempDir('msp-init-work-');
    const applied = await runCli(['apply', '--project', project, '--mlx-repo', newer, '--workdir', fresh], {
      cwd: project,
    });
    expect(applied.code, applied.stderr).toBe(0);
    const text = readFileSync(path.join(fresh, 'mlx', 'tests/ops_tests.cpp'), 'utf8');
    expect(text).toContain(extra);
    expect(text).toContain('  float pairs[][3] = {{{1, 0, 0}}};\n');
  });

  it('cpu-two-changes: an edit to the second change goes back into the second patch', async () => {
    const project = makeProject(pin, 'series/cpu-two-changes');
    const workdir = tempDir('msp-init-work-');
    const args = ['--project', project, '--mlx-repo', dir, '--workdir', workdir];
    expect((await runCli(['apply', ...args], { cwd: project })).code).toBe(0);
    edit(path.join(workdir, 'mlx'), 'mlx/backend/cpu/unary.cpp', 'in[i] == 0.0f ? 0.0f', 'in[i] == 0.0f ? 1.0f');
    const exported = await runCli(['export', ...args], { cwd: project });
    expect(exported.code, exported.stderr).toBe(0);
    expect(readFileSync(path.join(project, 'patches', '0002-reciprocal.patch'), 'utf8')).toContain(
      '+    out[i] = in[i] == 0.0f ? 1.0f : 1.0f / in[i];\n',
    );
    expect(readFileSync(path.join(project, 'patches', '0001-negate.patch'), 'utf8')).not.toContain('1.0f');
  });

  it('empty: verify refuses an empty series with exit 2 (SERIES_EMPTY)', async () => {
    const project = makeProject(pin, 'series/empty');
    const workdir = tempDir('msp-init-work-');
    const result = await runCli(
      ['verify', '--project', project, '--mlx-repo', dir, '--workdir', workdir, '--skip', 'build', '--json'],
      {
        cwd: project,
      },
    );
    expect(result.code).toBe(2);
    expect(result.json.error.code).toBe('SERIES_EMPTY');
  });
});
