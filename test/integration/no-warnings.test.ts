import { describe, expect, it } from 'vitest';

import { makeProject, makeUpstream, spawnCli, tempDir } from '../support/repos.js';

/**
 * Node prints its warnings (MaxListenersExceededWarning, ExperimentalWarning,
 * DeprecationWarning) on the process's stderr, so only the built binary shows
 * them: run `npm run build` first. Each command's main path, in the order a
 * user runs them, must print none.
 */
describe('no Node warnings', () => {
  it('on the main path of every command that needs no build tools', async () => {
    const upstream = makeUpstream();
    const project = makeProject(upstream.sha);
    const env = {
      PATH: process.env['PATH'] ?? '',
      MLX_REPO: upstream.dir,
      MLX_STORAGE_PR_WORKDIR: `${tempDir()}/work`,
      MLX_STORAGE_PR_CACHE: tempDir('msp-cache-'),
    };
    const runs = [
      ['--help'],
      ['doctor'],
      ['apply', '--dry-run'],
      ['apply'],
      ['status'],
      ['export', '--dry-run'],
      ['check', '--against', upstream.sha],
      ['reset'],
      ['clean', '--dry-run'],
    ];
    for (const args of runs) {
      const result = await spawnCli(args, { cwd: project, env });
      expect(result.stderr, args.join(' ')).not.toMatch(/Warning/);
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).not.toBe(70);
    }
  });
});
