/** What `clean` may remove from a workdir. Pure: the caller lists the folder and measures sizes. */

import { isPartialCheckout, WORKDIR_NAMES as N } from '../core/workdir.js';
import { comparePaths } from '../core/paths.js';

export interface WorkdirItem {
  name: string;
  what: string;
  /** `clean` removes it; `all` only `clean --all`. */
  removedBy: 'clean' | 'all';
  /** A git worktree of the checkout lives inside, so git's list of worktrees needs pruning after. */
  holdsWorktree: boolean;
  /** A folder (shown as `name/`), else a file. */
  folder: boolean;
}

/**
 * Names the entries this tool makes in a workdir; a name alone proves
 * nothing (`planClean` also wants the tool's mark). Anything else (and the
 * lock) is not ours and is never touched.
 */
export function classifyWorkdirEntry(name: string, isDirectory: boolean): WorkdirItem | null {
  const item = (what: string, removedBy: WorkdirItem['removedBy'], holdsWorktree = false): WorkdirItem => ({
    name,
    what,
    removedBy,
    holdsWorktree,
    folder: isDirectory,
  });
  // Goes with the checkout: the source it was fetched from, which later commands use by default.
  if (name === N.source && !isDirectory) return item('the MLX source apply used last', 'all');
  if (!isDirectory) return null;
  if (name === N.checkout) return item('the MLX checkout', 'all');
  if (name === N.metalCpp) return item('downloaded metal-cpp', 'all');
  if (isPartialCheckout(name)) return item('unfinished fetch', 'clean');
  if (name.startsWith(N.buildPrefix)) return item('build folder', 'clean');
  if (name === N.baseline) return item('unpatched baseline: its tree, builds and saved results', 'clean', true);
  if (name === N.withoutImplementation)
    return item("verify's tree and build without the implementation", 'clean', true);
  if (name === N.mutants) return item("verify's tree and build for mutants", 'clean', true);
  if (name === N.verify) return item("verify's last passing result, which pr reuses", 'clean');
  if (name === N.checkMetal) return item('check-metal logs and self-test tree', 'clean');
  // Its trees are worktrees of its own repository, inside it: removed together, nothing to prune.
  if (name === N.check) return item("check's repository of other MLX commits, their trees and builds", 'clean');
  return null;
}

export interface CleanPlan {
  remove: WorkdirItem[];
  keep: WorkdirItem[];
  /** Entries named as the tool's items but without its mark: the tool did not make them, and leaves them alone. */
  notMade: WorkdirItem[];
}

/**
 * What `clean` (`all`: `clean --all`) removes: only entries named as the
 * tool's items that carry its mark (`marked`, written when the tool made
 * them). A look-alike without the mark is listed as not made by the tool.
 */
export function planClean(
  entries: ReadonlyArray<{ name: string; isDirectory: boolean; marked: boolean }>,
  all: boolean,
): CleanPlan {
  const named = entries
    .map((e) => ({ item: classifyWorkdirEntry(e.name, e.isDirectory), marked: e.marked }))
    .filter((e): e is { item: WorkdirItem; marked: boolean } => e.item !== null)
    .sort((a, b) => comparePaths(a.item.name, b.item.name));
  const inScope = (e: WorkdirItem) => all || e.removedBy === 'clean';
  return {
    remove: named.filter((e) => e.marked && inScope(e.item)).map((e) => e.item),
    keep: named.filter((e) => e.marked && !inScope(e.item)).map((e) => e.item),
    notMade: named.filter((e) => !e.marked && inScope(e.item)).map((e) => e.item),
  };
}

/** A linked worktree of the checkout that `clean --all` would break. */
export interface LinkedWorktree {
  path: string;
  head: string | null;
  branch: string | null;
  /** Its uncommitted changes, untracked files included. */
  uncommitted: string[];
}

/** The user's work a checkout holds; `clean --all` must not delete any of it. */
export interface CheckoutWork {
  uncommitted: string[];
  stashes: number;
  backupRefs: string[];
  branches: string[];
  foreignHead: string | null;
  /** Refs the tool did not make (tags, notes, remote-tracking and any other) that lead to a commit not of upstream's pinned history. */
  refs: Array<{ ref: string; commit: string | null }>;
  /** Linked worktrees outside what `clean --all` removes. */
  worktrees: LinkedWorktree[];
  /** Files git ignores in the checkout: the tool makes none there (its builds are beside the checkout). */
  ignored: string[];
}

function listed(items: readonly string[]): string {
  return `${items.slice(0, 10).join(', ')}${items.length > 10 ? `, ... (${items.length} in all)` : ''}`;
}

export function describeCheckoutWork(work: CheckoutWork, dir: string): string[] {
  const reasons: string[] = [];
  if (work.uncommitted.length) reasons.push(`uncommitted changes: ${listed(work.uncommitted)}`);
  if (work.stashes)
    reasons.push(`${work.stashes} stash ${work.stashes === 1 ? 'entry' : 'entries'} (\`git -C ${dir} stash list\`)`);
  if (work.backupRefs.length)
    reasons.push(`saved work: ${work.backupRefs.map((r) => `${r} (${backupOrigin(r)})`).join(', ')}`);
  if (work.foreignHead) reasons.push(`HEAD is a commit of yours: ${work.foreignHead.slice(0, 12)}`);
  if (work.branches.length) reasons.push(`branches of yours: ${work.branches.join(', ')}`);
  if (work.refs.length)
    reasons.push(
      `refs of yours: ${listed(work.refs.map((r) => `${r.ref} (${r.commit === null ? 'no commit' : r.commit.slice(0, 12)})`))}`,
    );
  for (const wt of work.worktrees) {
    const at = wt.branch !== null ? `on ${wt.branch.replace(/^refs\/heads\//, '')}` : 'detached';
    const head = wt.head === null ? '' : ` (HEAD ${wt.head.slice(0, 12)} ${at})`;
    const changes = wt.uncommitted.length ? `; uncommitted changes: ${listed(wt.uncommitted)}` : '';
    reasons.push(`a worktree of the checkout at ${wt.path}${head}, which would be left broken${changes}`);
  }
  if (work.ignored.length) reasons.push(`ignored files: ${listed(work.ignored)}`);
  return reasons;
}

/** Who made a backup ref, from the kind at the end of its name. */
function backupOrigin(ref: string): string {
  if (ref.endsWith('-stash')) return 'uncommitted changes saved by apply --force or reset';
  if (ref.endsWith('-export')) return 'the HEAD kept by export';
  if (ref.endsWith('-bump')) return "the bump's worktree kept by bump --abort";
  if (ref.endsWith('-head')) return 'a commit of yours kept by apply --force or reset';
  return 'saved work';
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${units[unit]}`;
}
