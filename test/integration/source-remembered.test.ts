import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeEach, describe, expect, it } from 'vitest';

import { makeExportProject, makeExportUpstream } from '../support/export-fixtures.js';
import { editConfig, git, runCli, tempDir } from '../support/repos.js';

/** Nothing listens on port 1 of this machine: any command that goes to the config's URL fails at once. */
const UNREACHABLE = 'http://127.0.0.1:1/ml-explore/mlx.git';

let upstream: { dir: string; sha: string };
let mirror: string;
let project: string;
let workdir: string;
/** No MLX_REPO: only --mlx-repo, the recorded source or the config name the source. */
let env: Record<string, string>;

const cli = (...args: string[]) => runCli([...args, '--workdir', workdir], { cwd: project, env });

beforeEach(() => {
  upstream = makeExportUpstream();
  mirror = path.join(tempDir('msp-mirror-'), 'mlx.git');
  git(path.dirname(mirror), 'clone', '--quiet', '--mirror', upstream.dir, mirror);
  project = makeExportProject(upstream.sha);
  editConfig(project, (config) => {
    (config['upstream'] as Record<string, unknown>)['url'] = UNREACHABLE;
  });
  workdir = tempDir('msp-work-');
  env = { PATH: process.env['PATH'] ?? '', HOME: tempDir('msp-home-'), GIT_CONFIG_NOSYSTEM: '1' };
});

/** A new commit on the upstream's main (a new MLX version), fetched into the mirror. */
function newerUpstream(): string {
  const file = path.join(upstream.dir, 'mlx/version.h');
  writeFileSync(file, readFileSync(file, 'utf8').replace(/MLX_VERSION_MINOR \d+/, 'MLX_VERSION_MINOR 33'));
  git(upstream.dir, 'commit', '--quiet', '-am', 'version 0.33');
  git(mirror, 'fetch', '--quiet', 'origin');
  return git(upstream.dir, 'rev-parse', 'HEAD').trim();
}

describe('the MLX source apply used', () => {
  it('is recorded in the workdir, and check, status and bump without --mlx-repo or MLX_REPO use it and say so', async () => {
    const applied = await cli('apply', '--mlx-repo', mirror);
    expect(applied.code, applied.stderr).toBe(0);
    expect(JSON.parse(readFileSync(path.join(workdir, 'source.json'), 'utf8'))).toEqual({
      source: mirror,
      madeBy: 'mlx-storage-pr',
    });
    const target = newerUpstream();

    const said = `MLX source: ${mirror}, remembered from apply`;
    const check = await cli('check', '--against', 'main', '--json');
    expect(check.code, check.stderr).toBe(0);
    expect(check.json.refs[0]).toMatchObject({ commit: target });
    expect(check.stderr).toContain(said);

    const status = await cli('status', '--json');
    expect(status.json.source).toEqual({ location: mirror, origin: 'apply' });
    expect((await cli('status')).stdout).toContain(`source:   ${mirror} (remembered from apply)`);

    const bump = await cli('bump', '--to', 'main', '--json');
    expect(bump.code, bump.stderr).toBe(0);
    expect(bump.json).toMatchObject({ status: 'bumped', to: { commit: target } });
    expect(bump.stderr).toContain(said);
  });

  it('gives way to MLX_REPO and --mlx-repo, and a later apply with another source records that one', async () => {
    expect((await cli('apply', '--mlx-repo', mirror)).code).toBe(0);
    const other = upstream.dir;

    env['MLX_REPO'] = other;
    expect((await cli('status', '--json')).json.source).toEqual({ location: other, origin: 'env' });
    delete env['MLX_REPO'];
    expect((await cli('status', '--json', '--mlx-repo', other)).json.source).toEqual({
      location: other,
      origin: 'option',
    });

    expect((await cli('apply', '--mlx-repo', other)).code).toBe(0);
    expect((await cli('status', '--json')).json.source).toEqual({ location: other, origin: 'apply' });
  });

  it('is kept by clean and removed by clean --all with the checkout', async () => {
    expect((await cli('apply', '--mlx-repo', mirror)).code).toBe(0);
    const record = path.join(workdir, 'source.json');

    const clean = await cli('clean', '--json');
    expect(clean.code, clean.stderr).toBe(0);
    expect(existsSync(record)).toBe(true);
    expect(clean.json.keep).toContainEqual({ name: 'source.json', what: 'the MLX source apply used last' });
    expect(clean.stderr + clean.stdout).not.toContain('source.json/');

    const all = await cli('clean', '--all', '--json');
    expect(all.code, all.stderr).toBe(0);
    expect(all.json.remove.map((r: { name: string }) => r.name)).toContain('source.json');
    expect(existsSync(record)).toBe(false);
  });
});
