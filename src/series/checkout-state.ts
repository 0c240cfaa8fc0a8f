import type { Git, StatusEntry } from '../adapters/git.js';
import { ProcessError } from '../adapters/process-error.js';
import { UserError } from '../core/errors.js';
import { inputHashOf } from './tree.js';

export type HeadState =
  | { kind: 'empty' }
  | { kind: 'pinned'; commit: string }
  | { kind: 'applied'; commit: string; tree: string; inputHash: string; base: string }
  | { kind: 'foreign'; commit: string; base: string | null };

/** Where the checkout stands; `status` and the interrupt report both say it with these names. */
export type CheckoutState =
  | 'no-checkout'
  | 'no-files'
  | 'not-applied'
  | 'applied'
  | 'outdated'
  | 'foreign-head'
  | 'missing-pinned-commit'
  | 'unmerged'
  | 'unknown';

/** The state HEAD alone shows: `inputHash` is the hash of the series as rendered now. */
export function headCheckoutState(head: HeadState, inputHash: () => string): CheckoutState {
  switch (head.kind) {
    case 'empty':
      return 'no-files';
    case 'pinned':
      return 'not-applied';
    case 'applied':
      return head.inputHash === inputHash() ? 'applied' : 'outdated';
    case 'foreign':
      return 'foreign-head';
  }
}

/**
 * What HEAD is: the pinned commit, a commit made by `apply` (one parent, the
 * input trailer in its message; its base is an older pin after the pin
 * moves), or anything else.
 */
export async function classifyHead(git: Git, pinned: string): Promise<HeadState> {
  const info = await git.headInfo();
  if (info === null) return { kind: 'empty' };
  if (info.commit === pinned) return { kind: 'pinned', commit: info.commit };
  const inputHash = inputHashOf(info.message);
  const base = info.parents.length === 1 ? info.parents[0] : undefined;
  if (base !== undefined && inputHash !== undefined) {
    return { kind: 'applied', commit: info.commit, tree: info.tree, inputHash, base };
  }
  return { kind: 'foreign', commit: info.commit, base: info.parents[0] ?? null };
}

/** A ref that keeps saved work reachable even if the stash is dropped. */
export function backupRef(kind: 'stash' | 'head' | 'export', now: Date): string {
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
      `Before that, saved your uncommitted changes${what}: ${all.join(', ')} (stash ${saved.stash}, also ${saved.refs[0]}).`,
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
