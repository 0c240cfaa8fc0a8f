import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import type { Git } from '../adapters/git.js';
import { ProcessError } from '../adapters/process-error.js';
import { diagnoseFile, preImageBlobs, type Conflict } from '../core/conflict.js';
import type { ApplyPlan } from '../core/plan.js';

export const INPUT_TRAILER = 'Mlx-Storage-Pr-Input';

export interface BuiltTree {
  tree: string | null;
  conflicts: Conflict[];
}

/**
 * Builds the tree of the applied series in a temporary index. The user's
 * index and working tree are never touched here, which is what makes `apply`
 * atomic: nothing is written to them until the whole series applies.
 */
export async function buildTree(git: Git, plan: ApplyPlan, options: { threeWay?: boolean } = {}): Promise<BuiltTree> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'mlx-storage-pr-'));
  try {
    const index = git.withIndex(path.join(tmp, 'index'));
    await index.readTree(plan.commit);
    const conflicts: Conflict[] = [];

    const existing = plan.files.length
      ? await index.raw(['ls-files', '-z', '--', ...plan.files.map((f) => f.path)])
      : '';
    for (const file of existing.split('\0').filter(Boolean)) {
      conflicts.push({
        patch: `templates/${plan.files.find((f) => f.path === file)?.template ?? file}`,
        file,
        reason: 'file_exists',
        detail: 'the pinned commit already has this file',
      });
    }

    const blobFiles = await Promise.all(
      plan.files.map(async (file, i) => {
        const name = path.join(tmp, `file-${i}`);
        await writeFile(name, file.content);
        return name;
      }),
    );
    const blobs = await index.hashObjects(blobFiles);
    await index.updateIndex(plan.files.map((file, i) => ({ path: file.path, blob: blobs[i] as string })));

    for (const [i, patch] of plan.patches.entries()) {
      const patchFile = path.join(tmp, `patch-${i}.patch`);
      await writeFile(patchFile, patch.text);
      try {
        await index.applyToIndex(patchFile, { threeWay: options.threeWay ?? false });
      } catch (error) {
        if (!(error instanceof ProcessError)) throw error;
        conflicts.push(...(await diagnosePatch(index, patch.name, patch.files, patch.text, patchFile, error.stderr)));
      }
    }
    if (conflicts.length > 0) return { tree: null, conflicts };
    return { tree: await index.writeTree(), conflicts };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

async function diagnosePatch(
  index: Git,
  name: string,
  files: ApplyPlan['patches'][number]['files'],
  text: string,
  patchFile: string,
  stderr: string,
): Promise<Conflict[]> {
  const reverseApplies = await index.applyToIndex(patchFile, { reverse: true, check: true }).then(
    () => true,
    () => false,
  );
  const preImages = preImageBlobs(text);
  const found: Conflict[] = [];
  for (const file of files) {
    const blob = await index.indexBlob(file.path);
    const content = blob === null ? null : await index.catBlob(blob);
    const conflict = diagnoseFile(name, file, { content, blob, reverseApplies }, preImages.get(file.path));
    if (conflict) found.push(conflict);
  }
  if (found.length === 0) {
    found.push({
      patch: name,
      file: files[0]?.path ?? '?',
      reason: 'upstream_changed',
      detail: stderr.trim().split('\n')[0] ?? 'git apply failed',
    });
  }
  return found;
}

export function appliedCommitMessage(plan: ApplyPlan): string {
  return [
    'mlx-storage-pr: applied templates and patches',
    '',
    'Local state of the mlx-storage-pr tool. Its content becomes the pull',
    'request; this message does not.',
    '',
    `${INPUT_TRAILER}: ${plan.inputHash}`,
  ].join('\n');
}

/** The input hash recorded in an applied commit's message, if any. */
export function inputHashOf(message: string): string | undefined {
  return new RegExp(`^${INPUT_TRAILER}: ([0-9a-f]+)$`, 'm').exec(message)?.[1];
}
