/** Failures reported with a reason that named the wrong cause (issue 37, misleading reasons). */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { makeExportProject, makeExportUpstream } from '../support/export-fixtures.js';
import { editConfig, git, makeProject, makeUpstream, runCli, snapshot } from '../support/repos.js';

const DOCS = 'docs/src/dev/extensions.rst';

function setPin(project: string, commit: string): void {
  editConfig(project, (c) => ((c['upstream'] as Record<string, unknown>)['commit'] = commit));
}

function rewrite(project: string, file: string, change: (text: string) => string): void {
  const full = path.join(project, file);
  writeFileSync(full, change(readFileSync(full, 'utf8')));
}

const crlf = (text: string) => text.replace(/\n/g, '\r\n');

describe('a patch saved with CRLF line endings (an editor, or a checkout with core.autocrlf)', () => {
  it('applies to LF files as the same patch with LF endings does, and counts as the same series', async () => {
    const upstream = makeUpstream();
    const lf = makeProject(upstream.sha);
    const project = makeProject(upstream.sha);
    rewrite(project, 'patches/0002-docs.patch', crlf);
    const cli = (dir: string, ...args: string[]) => runCli([...args, '--mlx-repo', upstream.dir], { cwd: dir });

    const expected = await cli(lf, 'apply', '--json');
    expect(expected.code, expected.stdout).toBe(0);
    const applied = await cli(project, 'apply', '--json');
    expect(applied.code, applied.stdout).toBe(0);
    expect(applied.json.inputHash).toBe(expected.json.inputHash);
    const file = (dir: string) => readFileSync(path.join(dir, '.work/mlx', DOCS), 'utf8');
    expect(file(project)).toBe(file(lf));
    expect(file(project)).not.toContain('\r');

    const checked = await cli(project, 'check', '--against', upstream.sha, '--json');
    expect(checked.code, checked.stdout).toBe(0);
    expect(checked.json.refs[0].status).toBe('clean');
  });

  it('is kept byte for byte when only its lines of a CRLF file end in CRLF, as git writes it', async () => {
    const upstream = makeUpstream('upstream', (dir) => rewrite(dir, DOCS, crlf));
    const project = makeProject(upstream.sha);
    // git diff of the CRLF file: LF on git's own lines, CRLF on the file's.
    rewrite(project, 'patches/0002-docs.patch', (t) =>
      t.replace(/^([ +-].*)$/gm, (line) => (line.startsWith('---') || line.startsWith('+++') ? line : `${line}\r`)),
    );
    const result = await runCli(['apply', '--json', '--mlx-repo', upstream.dir], { cwd: project });
    expect(result.code, result.stdout).toBe(0);
    const file = readFileSync(path.join(project, '.work/mlx', DOCS), 'utf8');
    expect(file).toContain('Keep the view until your command buffer completes.\r\n');
  });

  it('against a file that has CRLF endings itself, the reason says the line endings differ', async () => {
    const upstream = makeUpstream('upstream', (dir) => rewrite(dir, DOCS, crlf));
    const project = makeProject(upstream.sha);
    const result = await runCli(['apply', '--json', '--mlx-repo', upstream.dir], { cwd: project });
    expect(result.code, result.stdout).toBe(4);
    expect(result.json.error.details.conflicts).toEqual([
      expect.objectContaining({ patch: '0002-docs.patch', file: DOCS, reason: 'patch_changed', hunk: 1 }),
    ]);
    expect(result.json.error.details.conflicts[0].detail).toMatch(/CRLF line endings/);
  });
});

describe('a patch whose context does not match the pinned file', () => {
  const breakContext = (project: string) =>
    rewrite(project, 'patches/0002-docs.patch', (t) => t.replace(' Text about operations.', ' Text about something.'));

  it('apply says patch_changed (the patch does not fit the pinned file), not upstream_changed', async () => {
    const upstream = makeUpstream();
    const project = makeProject(upstream.sha);
    breakContext(project);
    const result = await runCli(['apply', '--json', '--mlx-repo', upstream.dir], { cwd: project });
    expect(result.code, result.stdout).toBe(4);
    expect(result.json.error.details.conflicts).toEqual([
      expect.objectContaining({ patch: '0002-docs.patch', file: DOCS, hunk: 1, reason: 'patch_changed' }),
    ]);
    expect(result.json.error.details.conflicts[0].detail).toMatch(/does not match the file at the pinned commit/);
  });

  it('after the pin moves, upstream_changed only for a file upstream changed between the two pins', async () => {
    const upstream = makeUpstream();
    const project = makeProject(upstream.sha);
    const cli = (...args: string[]) => runCli([...args, '--json', '--mlx-repo', upstream.dir], { cwd: project });
    expect((await cli('apply')).code).toBe(0);
    rewrite(upstream.dir, DOCS, (t) => t.replace('Text about operations.', 'Text about the operations.'));
    git(upstream.dir, 'commit', '--quiet', '-am', 'reword');
    setPin(project, git(upstream.dir, 'rev-parse', 'HEAD').trim());

    const moved = await cli('apply');
    expect(moved.code, moved.stdout).toBe(4);
    expect(moved.json.error.details.conflicts).toEqual([
      expect.objectContaining({ patch: '0002-docs.patch', file: DOCS, hunk: 1, reason: 'upstream_changed' }),
    ]);

    // The same move, but the patch's own context is what broke: upstream did not touch the file.
    const other = makeUpstream();
    const second = makeProject(other.sha);
    const run = (...args: string[]) => runCli([...args, '--json', '--mlx-repo', other.dir], { cwd: second });
    expect((await run('apply')).code).toBe(0);
    writeFileSync(path.join(other.dir, 'unrelated.txt'), 'x\n');
    git(other.dir, 'add', 'unrelated.txt');
    git(other.dir, 'commit', '--quiet', '-m', 'unrelated');
    setPin(second, git(other.dir, 'rev-parse', 'HEAD').trim());
    breakContext(second);
    const broken = await run('apply');
    expect(broken.code, broken.stdout).toBe(4);
    expect(broken.json.error.details.conflicts).toEqual([
      expect.objectContaining({ patch: '0002-docs.patch', file: DOCS, hunk: 1, reason: 'patch_changed' }),
    ]);
  });
});

describe('an upstream.commit that is not a commit', () => {
  function pins() {
    const upstream = makeUpstream();
    git(upstream.dir, 'tag', '--annotate', '--message', 'release', 'v1', upstream.sha);
    return {
      upstream,
      tag: git(upstream.dir, 'rev-parse', 'v1').trim(),
      tree: git(upstream.dir, 'rev-parse', `${upstream.sha}^{tree}`).trim(),
      blob: git(upstream.dir, 'rev-parse', `${upstream.sha}:${DOCS}`).trim(),
    };
  }

  it.each(['tag', 'tree', 'blob'] as const)(
    'a %s id: apply and check refuse it as a config error (exit 7) and make no checkout',
    async (kind) => {
      const found = pins();
      const project = makeProject(found[kind]);
      const cli = (...args: string[]) =>
        runCli([...args, '--json', '--mlx-repo', found.upstream.dir], { cwd: project });

      const applied = await cli('apply');
      expect(applied.code, applied.stdout).toBe(7);
      expect(applied.json.error.code).toBe('CONFIG_INVALID');
      expect(applied.json.error.message).toContain(`upstream.commit ${found[kind]}`);
      expect(applied.json.error.message).toContain(kind === 'tag' ? 'annotated tag v1' : `a ${kind}`);
      if (kind === 'tag') expect(applied.json.error.hint).toContain(found.upstream.sha);
      expect(existsSync(path.join(project, '.work/mlx'))).toBe(false);

      const checked = await cli('check', '--against', found.upstream.sha);
      expect(checked.code, checked.stdout).toBe(7);
      expect(checked.json.error.code).toBe('CONFIG_INVALID');

      const bumped = await cli('bump', '--to', found.upstream.sha);
      expect(bumped.code, bumped.stdout).toBe(7);
      expect(bumped.json.error.code).toBe('CONFIG_INVALID');
      expect(existsSync(path.join(project, '.work/mlx'))).toBe(false);
    },
  );

  it('a tag id after a commit pin: apply refuses and leaves the checkout as it was; status says why', async () => {
    const found = pins();
    const project = makeProject(found.upstream.sha);
    const cli = (...args: string[]) => runCli([...args, '--json', '--mlx-repo', found.upstream.dir], { cwd: project });
    expect((await cli('apply')).code).toBe(0);
    const before = snapshot(path.join(project, '.work/mlx'));
    setPin(project, found.tag);

    const applied = await cli('apply');
    expect(applied.code, applied.stdout).toBe(7);
    expect(applied.json.error.code).toBe('CONFIG_INVALID');
    expect(applied.json.error.hint).toContain(found.upstream.sha);
    expect(snapshot(path.join(project, '.work/mlx'))).toBe(before);

    const status = await cli('status');
    expect(status.code, status.stdout).toBe(7);
    expect(status.json.error.code).toBe('CONFIG_INVALID');
  });

  it('bump --to a tag object id moves the pin to the commit it points to', async () => {
    const upstream = makeExportUpstream();
    const project = makeExportProject(upstream.sha);
    const cli = (...args: string[]) => runCli([...args, '--json', '--mlx-repo', upstream.dir], { cwd: project });
    expect((await cli('apply')).code).toBe(0);
    rewrite(upstream.dir, 'mlx/version.h', (t) =>
      t
        .replace(/MLX_VERSION_MINOR \d+/, 'MLX_VERSION_MINOR 33')
        .replace(/MLX_VERSION_PATCH \d+/, 'MLX_VERSION_PATCH 0'),
    );
    git(upstream.dir, 'commit', '--quiet', '-am', 'release');
    git(upstream.dir, 'tag', '--annotate', '--message', 'release', 'v2');
    const target = git(upstream.dir, 'rev-parse', 'HEAD').trim();
    const tag = git(upstream.dir, 'rev-parse', 'v2').trim();
    // The checkout holds the tag object already, as after an earlier fetch of it.
    git(path.join(project, '.work/mlx'), 'fetch', '--quiet', '--depth', '1', upstream.dir, tag);

    const bumped = await cli('bump', '--to', tag);
    expect(bumped.code, bumped.stdout).toBe(0);
    expect(bumped.json).toMatchObject({ status: 'bumped', to: { commit: target } });
  });
});
