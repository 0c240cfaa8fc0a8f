/**
 * Installed outside a clone: run from a folder with no config upward, the
 * project is the installed package itself, and the workdir is a per-user
 * state folder, never inside the package, node_modules or npm's cache.
 * The last test packs the package (`npm pack`), installs the tarball into a
 * temporary prefix and runs the installed command from an unrelated folder.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

import { REPO_ROOT, runCli, tempDir } from '../support/repos.js';

describe('the workdir of the installed package', () => {
  it('from a folder with no config upward: $XDG_STATE_HOME/mlx-storage-pr, named by doctor and status', async () => {
    const state = tempDir('msp-state-');
    const elsewhere = tempDir('msp-elsewhere-');
    const env = { XDG_STATE_HOME: state, HOME: tempDir('msp-home-') };
    const workdir = path.join(state, 'mlx-storage-pr');
    const doctor = await runCli(['doctor', 'apply', '--json'], { cwd: elsewhere, env });
    expect(doctor.json.workdir).toBe(workdir);
    expect((await runCli(['doctor', 'apply'], { cwd: elsewhere, env })).stdout).toContain(`workdir: ${workdir}\n`);
    const status = await runCli(['status'], { cwd: elsewhere, env });
    expect(status.stdout).toContain(path.join(workdir, 'mlx'));
  });

  it('without XDG_STATE_HOME: ~/.local/state/mlx-storage-pr (macOS: ~/Library/Application Support/mlx-storage-pr)', async () => {
    const home = tempDir('msp-home-');
    const doctor = await runCli(['doctor', 'apply', '--json'], { cwd: tempDir('msp-elsewhere-'), env: { HOME: home } });
    expect(doctor.json.workdir).toBe(
      process.platform === 'darwin'
        ? path.join(home, 'Library', 'Application Support', 'mlx-storage-pr')
        : path.join(home, '.local', 'state', 'mlx-storage-pr'),
    );
  });

  it('inside a project (a config upward): <project>/.work, as before', async () => {
    const doctor = await runCli(['doctor', 'apply', '--json'], { cwd: path.join(REPO_ROOT, 'fixtures'), env: {} });
    expect(doctor.json.workdir).toBe(path.join(REPO_ROOT, '.work'));
  });

  it('package.json names the repository, where to report bugs and the home page', () => {
    const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as Record<string, unknown>;
    const repository = (pkg['repository'] as { type: string; url: string }).url;
    expect(repository).toMatch(/^git\+https:\/\/github\.com\/[\w.-]+\/mlx-storage-pr\.git$/);
    const base = repository.replace(/^git\+/, '').replace(/\.git$/, '');
    expect(pkg['bugs']).toEqual({ url: `${base}/issues` });
    expect(pkg['homepage']).toBe(`${base}#readme`);
  });
});

describe('npm pack, installed into a temporary prefix, run from an unrelated folder', () => {
  it('--version, doctor and status work; the workdir is the state folder; a workdir an older version left in the package is found and its move offered', async () => {
    const started = Date.now();
    const packDir = tempDir('msp-pack-');
    const npmEnv = { ...process.env };
    const packed = await execa('npm', ['pack', '--pack-destination', packDir, '--json'], {
      cwd: REPO_ROOT,
      env: npmEnv,
    });
    const tarball = path.join(packDir, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename);
    const packedAt = Date.now();
    const prefix = tempDir('msp-prefix-');
    const installed = path.join(prefix, 'lib', 'node_modules', 'mlx-storage-pr');
    const bin = path.join(prefix, 'bin', 'mlx-storage-pr');
    const install = await execa(
      'npm',
      ['install', '--global', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', tarball],
      { env: npmEnv, reject: false },
    );
    if (install.exitCode !== 0) {
      // No registry and the dependencies not in npm's cache (ENOTCACHED): install the packed files as npm
      // would (the tarball's package/ folder and the bin link), with this clone's dependencies.
      expect(install.stderr).toContain('ENOTCACHED');
      console.log('npm install --offline: dependencies not cached; unpacking the tarball by hand');
      mkdirSync(path.dirname(installed), { recursive: true });
      mkdirSync(path.dirname(bin), { recursive: true });
      const unpacked = tempDir('msp-unpacked-');
      await execa('tar', ['-xzf', tarball, '-C', unpacked]);
      renameSync(path.join(unpacked, 'package'), installed);
      symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(installed, 'node_modules'));
      symlinkSync(path.join('..', 'lib', 'node_modules', 'mlx-storage-pr', 'bin', 'mlx-storage-pr.js'), bin);
    }
    // Only what package.json's "files" names is installed: no tests, no sources, no workdir.
    expect(existsSync(path.join(installed, 'dist', 'cli.js'))).toBe(true);
    expect(existsSync(path.join(installed, 'test'))).toBe(false);
    const state = tempDir('msp-state-');
    const elsewhere = tempDir('msp-elsewhere-');
    const env = { PATH: process.env['PATH'] ?? '', HOME: tempDir('msp-home-'), XDG_STATE_HOME: state };
    const run = (args: string[]) => execa(bin, args, { cwd: elsewhere, env, extendEnv: false, reject: false });

    const version = await run(['--version']);
    expect(version.exitCode, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(
      (JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version,
    );
    const doctor = await run(['doctor', 'apply', '--json']);
    expect(doctor.exitCode, doctor.stderr).toBe(0);
    const workdir = path.join(state, 'mlx-storage-pr');
    expect((JSON.parse(doctor.stdout) as { workdir: string }).workdir).toBe(workdir);

    // A workdir an older version left inside the package.
    mkdirSync(path.join(installed, '.work', 'mlx'), { recursive: true });
    writeFileSync(path.join(installed, '.work', 'mlx', 'edit.txt'), 'mine\n');
    const status = await run(['status']);
    expect(status.stderr).toContain(
      `a workdir from an older version is inside the installed package, at ${path.join(installed, '.work')}`,
    );
    expect(status.stderr).toContain(`mv ${path.join(installed, '.work')} ${workdir}`);
    expect(existsSync(path.join(installed, '.work', 'mlx', 'edit.txt'))).toBe(true);
    console.log(
      `npm pack: ${((packedAt - started) / 1000).toFixed(1)} s; install and 3 runs: ${((Date.now() - packedAt) / 1000).toFixed(1)} s`,
    );
  }, 600_000);
});
