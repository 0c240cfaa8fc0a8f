import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { loadCommands } from '../../src/cli.js';
import { REPO_ROOT, runCli, spawnCli, tempDir } from '../support/repos.js';

const names = (await loadCommands()).map((c) => c.name.split(' ')[0] as string);

describe('the bundle of each command (dist/bundles, run by bin/)', () => {
  it('there is one per command, and each prints the help the code in src/ prints', async () => {
    expect(readdirSync(path.join(REPO_ROOT, 'dist', 'bundles')).sort()).toEqual(names.map((n) => `${n}.js`).sort());
    for (const name of names) {
      const bundled = await spawnCli([name, '--help'], { cwd: REPO_ROOT });
      expect(bundled.code, name).toBe(0);
      expect(bundled.stdout, name).toBe((await runCli([name, '--help'], { cwd: REPO_ROOT })).stdout);
    }
  });

  it("bin/ runs the named command's bundle, and dist/cli.js for anything else or when tsc ran after bundling", () => {
    // A copy of the package whose status bundle only says it ran.
    const copy = tempDir();
    for (const folder of ['bin', 'dist'])
      cpSync(path.join(REPO_ROOT, folder), path.join(copy, folder), { recursive: true });
    cpSync(path.join(REPO_ROOT, 'package.json'), path.join(copy, 'package.json'));
    symlinkSync(path.join(REPO_ROOT, 'node_modules'), path.join(copy, 'node_modules'));
    const bundle = path.join(copy, 'dist', 'bundles', 'status.js');
    writeFileSync(bundle, "export const main = async () => { console.log('the status bundle'); return 0; };\n");
    const run = (...args: string[]) =>
      execFileSync(process.execPath, [path.join(copy, 'bin', 'mlx-storage-pr.js'), ...args], {
        cwd: copy,
        encoding: 'utf8',
      });

    expect(run('status')).toBe('the status bundle\n');
    expect(run('--version').trim()).toMatch(/^\d+\.\d+\.\d+$/);
    // The bundle is older than the compiled code: it is stale and not used.
    const old = new Date(Date.now() - 60_000);
    utimesSync(bundle, old, old);
    expect(run('status', '--help')).toContain('mlx-storage-pr status');
  });
});
