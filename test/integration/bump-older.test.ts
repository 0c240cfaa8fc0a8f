/** `bump` moves the pin forward: an older commit or one on a side branch needs --allow-older (issue 24, item 6). */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { makeExportProject, makeExportUpstream, projectFiles } from '../support/export-fixtures.js';
import { git, runCli } from '../support/repos.js';

let upstream: { dir: string; sha: string };
let older: string;
let side: string;
let project: string;

const CONFIG = 'mlx-storage-pr.config.json';
const pinned = () =>
  (JSON.parse(readFileSync(path.join(project, CONFIG), 'utf8')) as { upstream: { commit: string; version: string } })
    .upstream;

/** Commits a new MLX version on the current branch of the upstream fixture; returns the commit. */
function commitVersion(minor: number): string {
  const file = path.join(upstream.dir, 'mlx/version.h');
  writeFileSync(
    file,
    readFileSync(file, 'utf8')
      .replace(/MLX_VERSION_MINOR \d+/, `MLX_VERSION_MINOR ${minor}`)
      .replace(/MLX_VERSION_PATCH \d+/, 'MLX_VERSION_PATCH 0'),
  );
  git(upstream.dir, 'commit', '--quiet', '-am', `version 0.${minor}.0`);
  return git(upstream.dir, 'rev-parse', 'HEAD').trim();
}

beforeEach(() => {
  // main: older -> pin; side branch: older -> side. The project is pinned to the newer commit of main.
  upstream = makeExportUpstream();
  older = upstream.sha;
  git(upstream.dir, 'checkout', '--quiet', '-b', 'side');
  side = commitVersion(40);
  git(upstream.dir, 'checkout', '--quiet', 'main');
  project = makeExportProject(commitVersion(33));
});

// A short id works only with a source on this machine (git fetches no short id).
describe.each([
  ['a source on this machine, by short id', () => upstream.dir, () => older.slice(0, 10)],
  ['a source given as a URL (the checkout is shallow), by full id', () => `file://${upstream.dir}`, () => older],
])('bump --to an older commit, from %s', (_name, source, olderRef) => {
  const cli = (...args: string[]) => runCli([...args, '--mlx-repo', source()], { cwd: project });
  beforeEach(async () => {
    const applied = await cli('apply');
    expect(applied.code, applied.stderr).toBe(0);
  });

  it('is a usage error (2) naming --allow-older for an ancestor of the pin, and changes nothing', async () => {
    const before = projectFiles(project);
    const refused = await cli('bump', '--to', olderRef(), '--json');
    expect(refused.code).toBe(2);
    expect(refused.json.error.code).toBe('USAGE');
    expect(refused.json.error.message).toContain(`is older than the pin ${pinned().commit.slice(0, 12)}`);
    expect(refused.json.error.hint).toContain(`--to ${olderRef()} --allow-older`);
    expect(projectFiles(project)).toEqual(before);
  });

  it('is a usage error (2) naming --allow-older for a commit on a side branch, and changes nothing', async () => {
    const before = projectFiles(project);
    const refused = await cli('bump', '--to', 'side', '--json');
    expect(refused.code).toBe(2);
    expect(refused.json.error.code).toBe('USAGE');
    expect(refused.json.error.message).toContain('is not a descendant of the pin');
    expect(refused.json.error.hint).toContain('--allow-older');
    expect(projectFiles(project)).toEqual(before);
  });

  it('moves the pin to a side branch with --allow-older, and from there back to an ancestor', async () => {
    const sideways = await cli('bump', '--to', 'side', '--allow-older');
    expect(sideways.code, sideways.stderr).toBe(0);
    expect(pinned()).toMatchObject({ commit: side, version: '0.40.0' });
    expect(sideways.stdout).toContain('not a descendant of the old pin (--allow-older)');
    const back = await cli('bump', '--to', olderRef(), '--allow-older', '--json');
    expect(back.code, back.stderr).toBe(0);
    expect(pinned()).toMatchObject({ commit: older, version: '0.32.2' });
    expect(back.json.relation).toBe('older');
  });

  it('still moves the pin forward without --allow-older', async () => {
    git(upstream.dir, 'reset', '--quiet', '--hard', 'main');
    const newer = commitVersion(34);
    const forward = await cli('bump', '--to', 'main', '--json');
    expect(forward.code, forward.stderr).toBe(0);
    expect(pinned().commit).toBe(newer);
    expect(forward.json.relation).toBe('newer');
  });
});

describe('bump --allow-older', () => {
  it('is a usage error (2) without --to, naming --to', async () => {
    for (const other of ['--continue', '--abort']) {
      const r = await runCli(['bump', other, '--allow-older', '--mlx-repo', upstream.dir, '--json'], { cwd: project });
      expect(r.code).toBe(2);
      expect(r.json.error).toMatchObject({
        code: 'USAGE',
        message: expect.stringContaining('--allow-older goes with --to'),
      });
    }
  });
});
