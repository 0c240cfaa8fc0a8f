import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { STATE_AUTHOR, type Git, type StatusEntry } from '../adapters/git.js';
import { ProcessError } from '../adapters/process-error.js';
import { UserError } from '../core/errors.js';

/** A ref that keeps saved work reachable even if the stash is dropped. */
export function backupRef(kind: 'stash' | 'head' | 'export' | 'files', now: Date): string {
  return `refs/mlx-storage-pr/backup/${now.toISOString().replace(/[:.]/g, '-')}-${kind}`;
}

export interface SavedWork {
  stash?: string;
  /** Tracked files whose changes the stash holds. */
  files: string[];
  /** Untracked files the stash holds (in its third parent). */
  untracked: string[];
  headBackup?: string;
  refs: string[];
  restore: string[];
}

/**
 * Refuses to go on while the index holds unresolved conflicts (left, for
 * example, by a `git stash apply` that conflicted): git can neither stash
 * nor check out then, and the half-merged files are the user's work.
 */
export async function verifyNoUnmerged(git: Git): Promise<void> {
  const unmerged = await git.unmergedPaths();
  if (unmerged.length === 0) return;
  throw new UserError('UNMERGED_INDEX', `The checkout has unresolved merge conflicts in:\n  ${unmerged.join('\n  ')}`, {
    hint:
      `Resolve each file (edit it, then \`git -C ${git.dir} add <file>\`) and run the command again; ` +
      `or give up the merge with \`git -C ${git.dir} reset --merge\` (a stash you applied stays in \`git -C ${git.dir} stash list\`). Nothing was changed.`,
    details: { unmerged },
  });
}

/**
 * Saves uncommitted changes (stash plus a backup ref) and, if asked, the
 * current HEAD. `entries` are the changes to save (git status entries); when
 * `only` is set, just those paths are stashed and every other change stays
 * in the working tree.
 */
export async function saveUserWork(
  git: Git,
  entries: readonly StatusEntry[],
  options: { reason: string; only?: boolean; head?: string; now?: Date },
): Promise<SavedWork> {
  const now = options.now ?? new Date();
  const saved: SavedWork = { files: [], untracked: [], refs: [], restore: [] };
  if (entries.length > 0) {
    const message = `mlx-storage-pr: saved before ${options.reason} ${now.toISOString()}`;
    let stash: string | null;
    try {
      stash = await git.stash(message, options.only ? entries.map((e) => e.path) : undefined);
    } catch (error) {
      throw stashFailed(git, error instanceof ProcessError ? error.stderr : (error as Error).message);
    }
    if (stash === null) throw stashFailed(git, 'git stash made no stash although there are changes to save');
    const ref = backupRef('stash', now);
    await git.updateRef(ref, stash);
    saved.stash = stash;
    saved.files = entries.filter((e) => e.code !== '??').map((e) => e.path);
    saved.untracked = entries.filter((e) => e.code === '??').map((e) => e.path);
    saved.refs.push(ref);
    if (options.only) {
      saved.restore.push(`git -C ${git.dir} stash apply ${stash}`);
      for (const file of saved.untracked) saved.restore.push(`git -C ${git.dir} show ${stash}^3:${file}`);
    } else {
      // Everything is saved and the checkout is about to move: the stash applies cleanly only on the commit it
      // was made on (the new commit may lack files the changes touch), so the restore goes back there first.
      saved.restore.push(
        options.head
          ? `git -C ${git.dir} checkout -b my-work ${options.head}`
          : `git -C ${git.dir} checkout --detach ${stash}^1`,
        `git -C ${git.dir} stash apply ${stash}`,
      );
    }
  }
  if (options.head) {
    const ref = backupRef('head', now);
    await git.updateRef(ref, options.head);
    saved.headBackup = options.head;
    saved.refs.push(ref);
    if (saved.stash === undefined || options.only)
      saved.restore.push(`git -C ${git.dir} checkout -b my-work ${options.head}`);
  }
  return saved;
}

function stashFailed(git: Git, reason: string): UserError {
  return new UserError('SAVE_FAILED', `Could not save your uncommitted changes in ${git.dir}: ${reason.trim()}`, {
    hint: `Nothing was changed. Commit or copy your changes yourself (\`git -C ${git.dir} status\`), then run the command again.`,
  });
}

/** The lines that tell the user what was saved and how to get it back. */
export function savedWorkLines(saved: SavedWork, scope: 'in-the-way' | 'all'): string[] {
  const lines: string[] = [];
  const all = [...saved.files, ...saved.untracked];
  if (all.length > 0) {
    const what = scope === 'in-the-way' ? ` to ${all.length} file${all.length === 1 ? '' : 's'} apply changes` : '';
    lines.push(
      `Before that, saved your uncommitted changes${what}: ${all.join(', ')} (${saved.stash === undefined ? saved.refs[0] : `stash ${saved.stash}, also ${saved.refs[0]}`}).`,
    );
    if (scope === 'in-the-way') lines.push('Other uncommitted changes were left in place.');
    if (scope === 'all') {
      lines.push(
        `Restore them (back on the commit they were made on${saved.headBackup ? ', as the branch my-work' : ''}) with:`,
        ...saved.restore.map((c) => `  ${c}`),
      );
      return lines;
    }
    lines.push(`Restore them with: ${saved.restore[0]}`);
    if (saved.untracked.length) {
      lines.push(`Untracked files cannot be restored over the files that now exist there; read them with:`);
      lines.push(...saved.restore.filter((c) => c.includes(' show ')).map((c) => `  ${c}`));
    }
  }
  if (saved.headBackup) {
    lines.push(
      `Your commit ${saved.headBackup.slice(0, 12)} was kept (${saved.refs.at(-1)}); get it back with: ${saved.restore.at(-1)}`,
    );
  }
  return lines;
}

/** A literal pathspec: git takes the path as it is (no glob, no magic). */
function literal(git: Git): Git {
  return git.withEnv({ GIT_LITERAL_PATHSPECS: '1' });
}

/** Path -> blob id of every file in the trees of `commits` (a path in several: each of its blobs). */
async function blobsOf(git: Git, commits: readonly string[]): Promise<Map<string, Set<string>>> {
  const blobs = new Map<string, Set<string>>();
  for (const commit of commits) {
    const out = await git.raw(['ls-tree', '-r', '-z', '--full-tree', commit]);
    for (const entry of out.split('\0').filter(Boolean)) {
      const tab = entry.indexOf('\t');
      const blob = entry.slice(0, tab).split(' ')[2] as string;
      const file = entry.slice(tab + 1);
      blobs.set(file, (blobs.get(file) ?? new Set()).add(blob));
    }
  }
  return blobs;
}

/**
 * A checkout whose first checkout never finished (the disk filled, or the run
 * was killed during it) has an unborn HEAD, an empty index and, untracked, the
 * files that checkout got to write. This clears it back to what a first
 * checkout starts from (the fetched commit, no files), so the command can do
 * it again: an untracked file whose content is a blob of `targets`' trees at
 * its path was written by that checkout and is removed; any other (a file cut
 * off half-way, or an edit) is first saved as a commit under a backup ref
 * (unless `save` is false: the caller made the checkout in this run). With
 * scope 'in-the-way' only files at the trees' paths are touched, with 'all'
 * every untracked file. Null when the checkout is not in that state.
 */
export async function clearUnfinishedCheckout(
  git: Git,
  targets: readonly string[],
  options: { scope: 'in-the-way' | 'all'; save: boolean; reason: string; now?: Date },
): Promise<{ saved: SavedWork | null; removed: string[] } | null> {
  if ((await git.head()) !== null) return null;
  if ((await git.raw(['ls-files', '-z'])).length > 0) return null;
  const untracked = (await git.status()).filter((e) => e.code === '??').map((e) => e.path);
  if (untracked.length === 0) return null;
  const blobs = await blobsOf(git, targets);
  const affected = options.scope === 'all' ? untracked : untracked.filter((f) => blobs.has(f));
  if (affected.length === 0) return null;
  const ids = (await literal(git).raw(['hash-object', '--', ...affected])).trim().split('\n');
  const theirs = affected.filter((file, i) => !(blobs.get(file)?.has(ids[i] as string) ?? false));
  let saved: SavedWork | null = null;
  if (options.save && theirs.length > 0) saved = await saveUntracked(git, theirs, options);
  for (const file of affected) await rm(path.join(git.dir, file), { force: true });
  return { saved, removed: affected };
}

/** Saves untracked files of a checkout without a commit (where `git stash` cannot work) as a root commit under a backup ref. */
async function saveUntracked(
  git: Git,
  files: readonly string[],
  options: { reason: string; now?: Date },
): Promise<SavedWork> {
  const now = options.now ?? new Date();
  const folder = await mkdtemp(path.join(os.tmpdir(), 'mlx-storage-pr-index-'));
  try {
    const side = literal(git.withIndex(path.join(folder, 'index')));
    await side.raw(['add', '--force', '--', ...files]);
    const tree = (await side.raw(['write-tree'])).trim();
    const author = {
      GIT_AUTHOR_NAME: STATE_AUTHOR.name,
      GIT_AUTHOR_EMAIL: STATE_AUTHOR.email,
      GIT_COMMITTER_NAME: STATE_AUTHOR.name,
      GIT_COMMITTER_EMAIL: STATE_AUTHOR.email,
    };
    const message = `mlx-storage-pr: saved before ${options.reason} ${now.toISOString()}`;
    const commit = (await git.withEnv(author).raw(['commit-tree', tree, '-m', message])).trim();
    const ref = backupRef('files', now);
    await git.updateRef(ref, commit);
    return {
      files: [],
      untracked: [...files],
      refs: [ref],
      restore: files.map((file) => `git -C ${git.dir} show ${commit}:${file}`),
    };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/**
 * After a switch of the checkout failed half-way (a full disk, say), puts
 * back the files it wrote: each of `changed` as HEAD has it, and removes
 * those HEAD lacks. Before the switch these paths held nothing of the user's
 * (apply refuses, or saves, edits in them), so this restores the checkout
 * as it was. Best effort: a failure here is not reported over the first one.
 */
export async function undoFailedSwitch(git: Git, changed: readonly string[]): Promise<void> {
  if (changed.length === 0) return;
  const inHead = new Set(
    (await literal(git).raw(['ls-tree', '-r', '-z', '--name-only', '--full-tree', 'HEAD', '--', ...changed]))
      .split('\0')
      .filter(Boolean),
  );
  // Removing first frees the space that writing the old files back may need.
  for (const file of changed) if (!inHead.has(file)) await rm(path.join(git.dir, file), { force: true });
  const back = changed.filter((file) => inHead.has(file));
  if (back.length > 0) await literal(git).raw(['checkout', '--quiet', 'HEAD', '--', ...back]);
}

/** Where the checkout records the series commit its last `export` made (inside .git: no ref, nothing `clean` counts). */
function exportedFile(git: Git): string {
  return path.join(git.dir, '.git', 'mlx-storage-pr-exported');
}

/** Records that `export` made series commit `commit` from edits in this checkout. */
export async function markExported(git: Git, commit: string): Promise<void> {
  await writeFile(exportedFile(git), `${commit}\n`);
}

/**
 * The series commit the checkout's last `export` made, or null. While HEAD is
 * that commit, its edits are in the project unless another writer changed the
 * project since: `apply` then keeps it before moving away.
 */
export async function exportedSeries(git: Git): Promise<string | null> {
  const text = await readFile(exportedFile(git), 'utf8').catch(() => '');
  return /^[0-9a-f]{40,64}$/.test(text.trim()) ? text.trim() : null;
}
