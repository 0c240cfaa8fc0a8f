import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import type { Git } from '../adapters/git.js';
import { splitPatch, type RawHunk } from '../core/patch.js';

/**
 * The hunks `git diff` writes for `file` changed from `before` to `after`,
 * made by git itself in the checkout's repository (a temporary index, so the
 * user's index and files stay as they are). The hunks are what a reviewer's
 * `git diff` shows: the same boundaries and the function context after the
 * second `@@` (git's funcname rules and the checkout's diff attributes).
 * Texts may hold `{{placeholders}}`: git treats them as plain text. Every
 * writer of patches/ (regenerating a patch after formatting, taking edits
 * from the checkout back into the series) makes its hunks here.
 */
export async function gitDiffHunks(git: Git, file: string, before: string, after: string): Promise<RawHunk[]> {
  if (before === after) return [];
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'mlx-storage-pr-diff-'));
  try {
    const texts = [path.join(tmp, 'before'), path.join(tmp, 'after')];
    await writeFile(texts[0] as string, before);
    await writeFile(texts[1] as string, after);
    const [beforeBlob, afterBlob] = (await git.hashObjects(texts)) as [string, string];
    const index = git.withIndex(path.join(tmp, 'index'));
    await index.updateIndex([{ path: file, blob: beforeBlob }]);
    const beforeTree = await index.writeTree();
    await index.updateIndex([{ path: file, blob: afterBlob }]);
    const afterTree = await index.writeTree();
    const patch = await git.diffPatch(beforeTree, afterTree, [file]);
    return splitPatch(patch, `git diff of ${file}`).sections[0]?.hunks ?? [];
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
