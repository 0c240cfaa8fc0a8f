import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { Git } from '../adapters/git.js';
import { quote } from '../adapters/process-error.js';
import { CONFIG_FILE } from '../series/config.js';
import type { BumpState } from '../series/bump-state.js';
import type { Context } from '../series/context.js';

/** What `bump --abort` kept of the work done during the bump, and the commands that bring it back. */
export interface AbortedWork {
  /** The bump's worktree with its resolutions and edits, as a commit on `to` kept under `ref`. */
  worktree: { ref: string; commit: string; restore: string[] } | null;
  /** The config, templates/ and patches/ as `export` left them, copied into `folder`. */
  project: { folder: string; restore: string[] } | null;
}

/** Every file under `dir` (relative path -> bytes); empty when `dir` does not exist. */
async function filesOf(dir: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  if (!existsSync(dir)) return out;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    out.set(path.relative(dir, full), await readFile(full));
  }
  return out;
}

function sameFiles(a: Map<string, Buffer>, b: Map<string, Buffer>): boolean {
  return a.size === b.size && [...a].every(([file, bytes]) => b.get(file)?.equals(bytes) === true);
}

/** Whether the project files differ from the copy the bump took when it started. */
async function projectChanged(ctx: Context): Promise<boolean> {
  const { backup } = ctx.layout.bump;
  for (const folder of ['templates', 'patches']) {
    if (!sameFiles(await filesOf(path.join(ctx.projectRoot, folder)), await filesOf(path.join(backup, folder))))
      return true;
  }
  const now = await readFile(path.join(ctx.projectRoot, CONFIG_FILE)).catch(() => null);
  const then = await readFile(path.join(backup, CONFIG_FILE)).catch(() => null);
  return now === null || then === null || !now.equals(then);
}

/** Whether the worktree holds anything but what the bump wrote into it (its resolutions, edits, new files). */
async function worktreeChanged(
  worktree: Git,
  state: BumpState,
  rendered: ReadonlyMap<string, string>,
): Promise<boolean> {
  const written = new Map(rendered);
  for (const c of state.chain) written.set(c.path, c.steps.at(-1)?.post ?? c.base);
  for (const entry of await worktree.status()) {
    const expected = written.get(entry.path);
    if (expected === undefined) return true;
    const text = await readFile(path.join(worktree.dir, entry.path), 'utf8').catch(() => null);
    // The state keeps each line with its newline: a file without one at its end is the same file.
    if (text !== expected && `${text}\n` !== expected) return true;
  }
  return false;
}

/**
 * Before `bump --abort` throws the bump away, keeps what the user did during
 * it: the worktree (resolved conflicts, edits) as a commit under a backup ref
 * of the checkout, and the project files `export` wrote as a copy in the
 * workdir. Nothing is kept when there was nothing but what the bump made
 * (`rendered`: the templates as the bump wrote them into the worktree).
 */
export async function saveAbortedWork(
  ctx: Context,
  checkout: Git | null,
  state: BumpState,
  rendered: ReadonlyMap<string, string>,
): Promise<AbortedWork> {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const saved: AbortedWork = { worktree: null, project: null };
  if (checkout !== null && existsSync(state.worktree)) {
    const worktree = new Git(state.worktree, ctx.log, ctx.env);
    if (await worktreeChanged(worktree, state, rendered)) {
      const temp = await mkdtemp(path.join(os.tmpdir(), 'mlx-storage-pr-abort-'));
      try {
        const indexed = worktree.withIndex(path.join(temp, 'index'));
        await indexed.readTree('HEAD');
        await indexed.raw(['add', '--all', '--', '.']);
        const tree = await indexed.writeTree();
        const commit = await checkout.commitTree(
          tree,
          state.to.commit,
          `mlx-storage-pr: the bump's worktree, kept by bump --abort ${stamp}`,
        );
        const ref = `refs/mlx-storage-pr/backup/${stamp}-bump`;
        await checkout.updateRef(ref, commit);
        const folder = path.join(ctx.workdir, `bump-resolution-${stamp}`);
        saved.worktree = {
          ref,
          commit,
          restore: [`git -C ${quote(checkout.dir)} worktree add --detach ${quote(folder)} ${commit}`],
        };
      } finally {
        await rm(temp, { recursive: true, force: true });
      }
    }
  }
  if (await projectChanged(ctx)) {
    const folder = path.join(ctx.workdir, `bump-aborted-${stamp}`);
    await mkdir(folder, { recursive: true });
    for (const name of ['templates', 'patches', CONFIG_FILE]) {
      const from = path.join(ctx.projectRoot, name);
      if (existsSync(from)) await cp(from, path.join(folder, name), { recursive: true, preserveTimestamps: true });
    }
    saved.project = { folder, restore: [`cp -R ${quote(`${folder}/.`)} ${quote(`${ctx.projectRoot}/`)}`] };
  }
  return saved;
}

/** The lines that tell the user what `bump --abort` kept and how to get it back. */
export function abortedWorkLines(saved: AbortedWork): string[] {
  const lines: string[] = [];
  if (saved.worktree)
    lines.push(
      `Kept the bump's worktree (your resolutions and edits) as commit ${saved.worktree.commit.slice(0, 12)} (${saved.worktree.ref}); get its files back with: ${saved.worktree.restore.join(' && ')}`,
    );
  if (saved.project)
    lines.push(
      `Kept the config, templates/ and patches/ as they were before the abort in ${saved.project.folder}; bring them back with: ${saved.project.restore.join(' && ')}`,
    );
  return lines;
}
