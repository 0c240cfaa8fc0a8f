import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

import { execa } from 'execa';

import { makeProject, makeUpstream, runCli, tempDir } from './repos.js';

/** A real git repository made from fixtures/export/upstream, with one commit. */
export function makeExportUpstream(): { dir: string; sha: string } {
  return makeUpstream('export/upstream');
}

/** A copy of fixtures/export/project pinned to `sha`. */
export function makeExportProject(sha: string): string {
  return makeProject(sha, 'export/project');
}

/**
 * Every byte of the config, templates/ and patches/ of a project, by path:
 * equal snapshots mean the project files were left exactly as they were.
 */
export function projectFiles(project: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (relative: string) => {
    const full = path.join(project, relative);
    if (statSync(full).isDirectory()) for (const entry of readdirSync(full).sort()) walk(path.join(relative, entry));
    else out[relative] = readFileSync(full).toString('base64');
  };
  for (const top of ['mlx-storage-pr.config.json', 'templates', 'patches']) walk(top);
  return out;
}

/** The tree id of a working folder as it is (tracked, changed and untracked files), made in a separate index. */
export async function workingTree(dir: string): Promise<string> {
  const env = { GIT_INDEX_FILE: path.join(tempDir('msp-index-'), 'index') };
  await execa('git', ['read-tree', 'HEAD'], { cwd: dir, env });
  await execa('git', ['add', '-A'], { cwd: dir, env });
  return (await execa('git', ['write-tree'], { cwd: dir, env })).stdout.trim();
}

/** The tree `apply` makes from the project in a new workdir: what a fresh checkout of the series holds. */
export async function freshApplyTree(project: string, mlxRepo: string): Promise<string> {
  const workdir = tempDir('msp-fresh-');
  const result = await runCli(['apply', '--workdir', workdir, '--mlx-repo', mlxRepo], { cwd: project });
  if (result.code !== 0) throw new Error(`apply in a fresh workdir failed (${result.code}):\n${result.stderr}`);
  return (await execa('git', ['rev-parse', 'HEAD^{tree}'], { cwd: path.join(workdir, 'mlx') })).stdout.trim();
}
