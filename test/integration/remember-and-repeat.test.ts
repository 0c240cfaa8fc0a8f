import { existsSync } from 'node:fs';

import { describe, expect, it } from 'vitest';

import type { PausePoint } from '../../src/adapters/interrupt.js';
import { makeProject, makeUpstream, runCli, tempDir } from '../support/repos.js';

describe('apply checks before it promises, and leaves nothing when it fails', () => {
  it('apply --dry-run with a source that does not exist exits 5, naming it, and creates no workdir', async () => {
    const upstream = makeUpstream();
    const project = makeProject(upstream.sha);
    const workdir = `${tempDir()}/work`;
    const missing = `${tempDir()}/no-such-mlx`;
    const result = await runCli(['apply', '--dry-run', '--mlx-repo', missing, '--workdir', workdir, '--json'], {
      cwd: project,
    });
    expect(result.code, result.stderr).toBe(5);
    expect(result.json).toMatchObject({ ok: false, command: 'apply', error: { code: 'SOURCE_UNREACHABLE' } });
    expect(result.stderr).toContain(missing);
    expect(existsSync(workdir)).toBe(false);
  });

  it('a first apply that fails (a source that is not there) leaves no workdir behind', async () => {
    const upstream = makeUpstream();
    const project = makeProject(upstream.sha);
    const workdir = `${tempDir()}/work`;
    const missing = `${tempDir()}/no-such-mlx`;
    const result = await runCli(['apply', '--mlx-repo', missing, '--workdir', workdir], { cwd: project });
    expect(result.code, result.stderr).toBe(5);
    expect(existsSync(workdir)).toBe(false);
    // A workdir that was there before stays, with what it held.
    const kept = `${tempDir()}/kept`;
    expect((await runCli(['apply', '--mlx-repo', upstream.dir, '--workdir', kept], { cwd: project })).code).toBe(0);
    expect((await runCli(['apply', '--mlx-repo', missing, '--workdir', kept], { cwd: project })).code).toBe(0);
    expect(existsSync(`${kept}/mlx`)).toBe(true);
  });
});

/** Runs the CLI in `project` and sends it Ctrl-C when it pauses at `point`. */
function interruptedAt(point: PausePoint, args: string[], project: string) {
  const stop = new AbortController();
  return runCli(args, {
    cwd: project,
    seams: { pauseAt: point },
    signal: stop.signal,
    onStderr: (text) => {
      if (text.includes('[test pause]')) stop.abort();
    },
  });
}

describe('hints that repeat what the user typed', () => {
  it('an interrupted apply names the source and the build options to run it again with', async () => {
    const upstream = makeUpstream();
    const project = makeProject(upstream.sha);
    const workdir = `${tempDir()}/work`;
    const result = await interruptedAt(
      'lock-taken',
      ['apply', '--mlx-repo', upstream.dir, '--workdir', workdir, '--json'],
      project,
    );
    expect(result.code, result.stderr).toBe(130);
    const hint = (result.json as { error: { hint: string } }).error.hint;
    expect(hint).toContain(`mlx-storage-pr apply --mlx-repo ${upstream.dir} --workdir ${workdir}`);
  });

  it('an interrupted test names the source and --offline to run it again with', async () => {
    const upstream = makeUpstream();
    const project = makeProject(upstream.sha);
    const workdir = `${tempDir()}/work`;
    const applied = await runCli(['apply', '--mlx-repo', upstream.dir, '--workdir', workdir], { cwd: project });
    expect(applied.code, applied.stderr).toBe(0);
    const result = await interruptedAt(
      'lock-taken',
      ['test', '--offline', '--mlx-repo', upstream.dir, '--workdir', workdir, '--json'],
      project,
    );
    expect(result.code, result.stderr).toBe(130);
    const hint = (result.json as { error: { hint: string } }).error.hint;
    expect(hint).toContain(`mlx-storage-pr test --mlx-repo ${upstream.dir} --offline --workdir ${workdir}`);
  });

  it('a first apply interrupted while git fetches has recorded its source: a bare apply after it uses that source', async () => {
    const upstream = makeUpstream();
    const project = makeProject(upstream.sha);
    const workdir = `${tempDir()}/work`;
    const interrupted = await interruptedAt(
      'fetch-started',
      ['apply', '--mlx-repo', upstream.dir, '--workdir', workdir],
      project,
    );
    expect(interrupted.code, interrupted.stderr).toBe(130);
    // No --mlx-repo and no MLX_REPO: the recorded source, not the config's upstream URL (which this test cannot reach).
    const again = await runCli(['apply', '--workdir', workdir, '--json'], { cwd: project, env: { MLX_REPO: '' } });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(upstream.dir);
    expect(again.json).toMatchObject({ ok: true, status: 'applied' });
  });
});
