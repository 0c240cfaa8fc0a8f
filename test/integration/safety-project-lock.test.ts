import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { projectFiles } from '../support/export-fixtures.js';
import { git, makeProject, makeUpstream, runCli, snapshot, spawnCli, tempDir } from '../support/repos.js';

/** Two workdirs of one project, each with the series applied. */
async function twoWorkdirs() {
  const upstream = makeUpstream();
  const project = makeProject(upstream.sha);
  const workdirs = [1, 2].map((i) => path.join(tempDir(`msp-work${i}-`), 'work'));
  for (const workdir of workdirs)
    expect((await runCli(['apply', '--mlx-repo', upstream.dir, '--workdir', workdir], { cwd: project })).code).toBe(0);
  const header = (workdir: string) => path.join(workdir, 'mlx', 'mlx/backend/metal/storage_view.h');
  /** Gives the class a member in the checkout of `workdir`. */
  const edit = (workdir: string, member: string) =>
    writeFileSync(
      header(workdir),
      readFileSync(header(workdir), 'utf8').replace(
        /class MetalStorageView \{.*\};/,
        `class MetalStorageView { int ${member}; };`,
      ),
    );
  const template = () => readFileSync(path.join(project, 'templates', '{{header_path}}'), 'utf8');
  return { upstream, project, workdirs, edit, header, template };
}

describe('the project lock: writers from different workdirs of one project take turns', () => {
  it('export while another run holds the project lock: LOCKED (exit 6) naming it; nothing written, the edit stays in the checkout', async () => {
    const { upstream, project, workdirs, edit } = await twoWorkdirs();
    const workdir = workdirs[0] as string;
    edit(workdir, 'a');
    const lock = path.join(project, '.mlx-storage-pr.lock');
    writeFileSync(lock, JSON.stringify({ pid: process.pid, command: 'export' }));
    const before = projectFiles(project);
    const checkout = snapshot(path.join(workdir, 'mlx'));
    const result = await runCli(['export', '--mlx-repo', upstream.dir, '--workdir', workdir, '--json'], {
      cwd: project,
    });
    expect(result.code, result.stderr).toBe(6);
    const error = (result.json as { error: { code: string; message: string; hint: string } }).error;
    expect(error.code).toBe('LOCKED');
    expect(error.message).toContain(project);
    expect(error.hint).toContain(lock);
    expect(projectFiles(project)).toEqual(before);
    expect(snapshot(path.join(workdir, 'mlx'))).toBe(checkout);
  });

  it('two exports at once (5 rounds): never both `exported`; an edit that is not in the project is still in its checkout', async () => {
    for (let round = 0; round < 5; round++) {
      const { upstream, project, workdirs, edit, header, template } = await twoWorkdirs();
      const [one, two] = workdirs as [string, string];
      edit(one, 'a');
      edit(two, 'b');
      const results = await Promise.all(
        [one, two].map((workdir) =>
          spawnCli(['export', '--mlx-repo', upstream.dir, '--workdir', workdir, '--json'], { cwd: project }),
        ),
      );
      const codes = results.map((r) => r.code);
      expect(codes.filter((c) => c === 0).length, `round ${round}: ${results.map((r) => r.stderr).join('\n')}`).toBe(1);
      for (const [workdir, member] of [
        [one, 'a'],
        [two, 'b'],
      ] as const)
        expect(
          template().includes(`int ${member};`) || readFileSync(header(workdir), 'utf8').includes(`int ${member};`),
        ).toBe(true);
    }
  });

  it('apply in a checkout whose exported series the project no longer holds keeps that series commit under a backup ref', async () => {
    const { upstream, project, workdirs, edit, template } = await twoWorkdirs();
    const workdir = workdirs[0] as string;
    const cli = (...args: string[]) =>
      runCli([...args, '--mlx-repo', upstream.dir, '--workdir', workdir, '--json'], { cwd: project });
    const original = template();
    edit(workdir, 'a');
    const exported = await cli('export');
    expect(exported.code, exported.stderr).toBe(0);
    const series = (exported.json as { head: string }).head;
    // Another writer puts the template back as it was: the exported edit now lives only in this checkout's commit.
    writeFileSync(path.join(project, 'templates', '{{header_path}}'), original);
    const applied = await cli('apply');
    expect(applied.code, applied.stderr).toBe(0);
    const saved = (applied.json as { saved?: { headBackup?: string; refs: string[] } }).saved;
    expect(saved?.headBackup).toBe(series);
    const checkout = path.join(workdir, 'mlx');
    expect(git(checkout, 'show', `${saved?.refs[0]}:mlx/backend/metal/storage_view.h`)).toContain('int a;');
  });
});
