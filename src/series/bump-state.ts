import { existsSync } from 'node:fs';
import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { z } from 'zod';

import { readJsonFile } from '../adapters/files.js';
import { CONFIG_FILE } from './config.js';
import { UserError } from '../core/errors.js';
import type { Context } from './context.js';

/**
 * An unfinished `bump`, kept in `<workdir>/bump/` until `bump --continue` or
 * `bump --abort`: where it goes, the worktree of the new commit with the
 * conflicts, what the series looked like there when it stopped, and a copy
 * of the project files as they were before, which `--abort` puts back.
 */
const Pin = z.object({ commit: z.string(), version: z.string() });
const BumpStateSchema = z.object({
  format: z.literal(1),
  /** The ref as the user named it. */
  ref: z.string(),
  from: Pin,
  to: Pin,
  /** The worktree of `to` where the conflicts are resolved. */
  worktree: z.string(),
  /** HEAD of the checkout when the bump started. */
  head: z.string().nullable(),
  conflicts: z.array(z.object({ patch: z.string(), file: z.string(), count: z.number() })),
  /** Each patched file as the series left it on `to`, conflict markers included: what `export` diffs edits against. */
  chain: z.array(
    z.object({
      path: z.string(),
      base: z.string(),
      steps: z.array(z.object({ patch: z.string(), post: z.string() })),
    }),
  ),
  /** Which of the project's folders existed when the bump started. */
  had: z.object({ templates: z.boolean(), patches: z.boolean() }),
});
export type BumpState = z.infer<typeof BumpStateSchema>;

/** The short form `status` shows and `--json` carries. */
export interface BumpSummary {
  ref: string;
  from: { commit: string; version: string };
  to: { commit: string; version: string };
  worktree: string;
  conflicts: Array<{ patch: string; file: string; count: number }>;
}

export function bumpSummary(state: BumpState): BumpSummary {
  return { ref: state.ref, from: state.from, to: state.to, worktree: state.worktree, conflicts: state.conflicts };
}

/** The unfinished bump of this workdir, or null. */
export async function readBumpState(ctx: Context): Promise<BumpState | null> {
  if (!existsSync(ctx.layout.bump.state)) return null;
  const state = await readJsonFile(ctx.layout.bump.state, BumpStateSchema);
  if (state === null) {
    throw new UserError('BUMP_IN_PROGRESS', `${ctx.layout.bump.state} is not a bump state this version can read.`, {
      hint: `The copy of your project files from before the bump is in ${ctx.layout.bump.backup}; put back what you need, then delete ${ctx.layout.bump.root}.`,
    });
  }
  return state;
}

/** Keeps the config, templates/ and patches/ as they are now, then records the bump. */
export async function startBump(ctx: Context, state: Omit<BumpState, 'had'>): Promise<BumpState> {
  const { backup } = ctx.layout.bump;
  await rm(backup, { recursive: true, force: true });
  await mkdir(backup, { recursive: true });
  const had = { templates: false, patches: false };
  for (const folder of ['templates', 'patches'] as const) {
    const from = path.join(ctx.projectRoot, folder);
    if (!existsSync(from)) continue;
    await cp(from, path.join(backup, folder), { recursive: true, preserveTimestamps: true });
    had[folder] = true;
  }
  await cp(path.join(ctx.projectRoot, CONFIG_FILE), path.join(backup, CONFIG_FILE), { preserveTimestamps: true });
  const full: BumpState = { ...state, had };
  await writeFile(ctx.layout.bump.state, `${JSON.stringify(full, null, 2)}\n`);
  return full;
}

/** Puts the config, templates/ and patches/ back exactly as they were when the bump started. */
export async function restoreProjectFiles(ctx: Context, state: BumpState): Promise<void> {
  const { backup } = ctx.layout.bump;
  for (const folder of ['templates', 'patches'] as const) {
    const target = path.join(ctx.projectRoot, folder);
    await rm(target, { recursive: true, force: true });
    if (state.had[folder]) await cp(path.join(backup, folder), target, { recursive: true, preserveTimestamps: true });
  }
  await cp(path.join(backup, CONFIG_FILE), path.join(ctx.projectRoot, CONFIG_FILE), { preserveTimestamps: true });
}

/** Forgets the bump: its state, the copy of the project files and the worktree folder. */
export async function removeBumpFolder(ctx: Context): Promise<void> {
  await rm(ctx.layout.bump.root, { recursive: true, force: true });
}
