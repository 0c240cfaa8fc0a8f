import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { BIN, git, makeProject, makeUpstream, tempDir } from '../support/repos.js';

describe('a stdout that cannot be written', () => {
  it.skipIf(process.platform !== 'linux')(
    'full (> /dev/full): one line on stderr naming stdout and the error, exit 1, no stack trace',
    async () => {
      const full = openSync('/dev/full', 'w');
      try {
        const child = spawn(process.execPath, [BIN, 'doctor', 'apply', '--json'], {
          stdio: ['ignore', full, 'pipe'],
          env: { ...process.env, MLX_STORAGE_PR_WORKDIR: tempDir() },
        });
        let stderr = '';
        child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
        const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
        const result = { status, stderr };
        expect(result.status).toBe(1);
        expect(result.stderr).toMatch(/cannot write to stdout: ENOSPC/);
        expect(result.stderr).not.toMatch(/\n\s+at /);
      } finally {
        closeSync(full);
      }
    },
  );

  it('closed by the reader (| head -1): the command finishes as it would, without an error', async () => {
    const child = spawn(process.execPath, [BIN, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(stderr).not.toMatch(/EPIPE|\n\s+at /);
  });
});

describe('a stderr closed by the reader (2>&1 | head -2)', () => {
  it('apply finishes as it would: exit 0, the series applied, no git of it left running', async () => {
    const upstream = makeUpstream();
    const project = makeProject(upstream.sha);
    const child = spawn(process.execPath, [BIN, 'apply', '--mlx-repo', upstream.dir], {
      cwd: project,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stderr.destroy();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    const checkout = path.join(project, '.work', 'mlx');
    expect(git(checkout, 'rev-parse', 'HEAD~1').trim()).toBe(upstream.sha);
    expect(git(checkout, 'status', '--porcelain')).toBe('');
  });
});
