import path from 'node:path';

/**
 * The workdir's layout: every file and folder this tool makes there. Only
 * this module spells their names; `clean` classifies entries by them.
 */
export const WORKDIR_NAMES = {
  checkout: 'mlx',
  lock: '.lock',
  source: 'source.json',
  buildPrefix: 'build-',
  baseline: 'baseline',
  withoutImplementation: 'without-implementation',
  mutants: 'mutants',
  verify: 'verify',
  checkMetal: 'check-metal',
  metalCpp: 'metal-cpp',
  check: 'check',
  bump: 'bump',
  /** The file inside each folder the tool makes there, written when it makes it: `clean` removes only marked items. */
  mark: '.mlx-storage-pr',
} as const;

/** The marker text: what made the folder, and that `clean` may remove it. */
export const MARK_TEXT = 'Made by mlx-storage-pr, which may remove this folder (`mlx-storage-pr clean`).\n';

/**
 * Where the mark of the workdir item `item` (a path) is: inside the folder,
 * or for a checkout (`mlx/`, `mlx.partial-<pid>/`) inside its `.git/`, where
 * git never sees it as a change.
 */
export function madeMark(item: string): string {
  const name = path.basename(item);
  const isCheckout = name === WORKDIR_NAMES.checkout || isPartialCheckout(name);
  return isCheckout ? path.join(item, '.git', WORKDIR_NAMES.mark) : path.join(item, WORKDIR_NAMES.mark);
}

/** A tree of MLX with its builds: the checkout in the workdir, or a worktree of it in its own folder. */
export interface TreeLayout {
  /** The folder whose `mlx/` is the source and whose `build-<key>/` are the builds. */
  root: string;
  source: string;
  build(key: string): string;
}

export interface WorkdirLayout {
  root: string;
  /** The MLX checkout. */
  checkout: string;
  /** The lock every command that changes the workdir takes. */
  lock: string;
  /** The MLX source the last `apply` fetched from (no credentials): the default of the commands after it. */
  source: string;
  /** Where an unfinished fetch builds a new checkout before moving it into place. */
  partialCheckout(pid: number): string;
  /** The checkout and its builds (`build-<key>`). */
  patched: TreeLayout;
  /** The unpatched pinned tree (a worktree of the checkout), its builds and saved results. */
  baseline: TreeLayout & { results(pinned: string, key: string): string };
  /** verify's tree with only the test changes (a worktree of the checkout), its builds and saved results. */
  withoutImplementation: TreeLayout & { results(key: string): string };
  /** verify's tree for mutants (a worktree of the checkout), its builds and its saved passing results. */
  mutants: TreeLayout & { results(key: string): string };
  /** The last passing run of verify's checks, saved for `pr` with the inputs it read. */
  verify: { root: string; results: string };
  /** check-metal's logs and self-test tree. */
  checkMetal: { root: string; logs: string; selfTestLogs: string; pinnedTree(pinned: string): string };
  /** Downloaded and unpacked metal-cpp. */
  metalCpp: string;
  /**
   * An unfinished `bump`: its state, the worktree of the new commit where
   * conflicts are resolved, and the project files as they were before it.
   */
  bump: { root: string; state: string; worktree: string; backup: string };
  /** `check`'s repository of other MLX commits, and per commit the trees and builds of `check --build`. */
  check: DriftLayout;
}

export interface DriftLayout {
  root: string;
  /** A bare repository holding the pinned commit and the commits checked against (depth 1 each). */
  repo: string;
  /** The series applied to `commit` and its builds, with the unpatched `commit` as its baseline. */
  commit(commit: string): TreeLayout & { baseline: TreeLayout & { results(commit: string, key: string): string } };
}

function tree(root: string, source: string): TreeLayout {
  return { root, source, build: (key) => path.join(root, `${WORKDIR_NAMES.buildPrefix}${key}`) };
}

export function workdirLayout(workdir: string): WorkdirLayout {
  const n = WORKDIR_NAMES;
  const baselineRoot = path.join(workdir, n.baseline);
  const withoutRoot = path.join(workdir, n.withoutImplementation);
  const mutantsRoot = path.join(workdir, n.mutants);
  const checkMetal = path.join(workdir, n.checkMetal);
  return {
    root: workdir,
    checkout: path.join(workdir, n.checkout),
    lock: path.join(workdir, n.lock),
    source: path.join(workdir, n.source),
    partialCheckout: (pid) => path.join(workdir, `${n.checkout}.partial-${pid}`),
    patched: tree(workdir, path.join(workdir, n.checkout)),
    baseline: {
      ...tree(baselineRoot, path.join(baselineRoot, n.checkout)),
      results: (pinned, key) => path.join(baselineRoot, `results-${pinned.slice(0, 12)}-${key}.json`),
    },
    withoutImplementation: {
      ...tree(withoutRoot, path.join(withoutRoot, n.checkout)),
      results: (key) => path.join(withoutRoot, `results-${key}.json`),
    },
    mutants: {
      ...tree(mutantsRoot, path.join(mutantsRoot, n.checkout)),
      results: (key) => path.join(mutantsRoot, `results-${key}.json`),
    },
    verify: { root: path.join(workdir, n.verify), results: path.join(workdir, n.verify, 'results.json') },
    checkMetal: {
      root: checkMetal,
      logs: path.join(checkMetal, 'logs'),
      selfTestLogs: path.join(checkMetal, 'self-test-logs'),
      pinnedTree: (pinned) => path.join(checkMetal, `pinned-${pinned.slice(0, 12)}`),
    },
    metalCpp: path.join(workdir, n.metalCpp),
    bump: {
      root: path.join(workdir, n.bump),
      state: path.join(workdir, n.bump, 'state.json'),
      worktree: path.join(workdir, n.bump, n.checkout),
      backup: path.join(workdir, n.bump, 'backup'),
    },
    check: driftLayout(path.join(workdir, n.check)),
  };
}

function driftLayout(root: string): DriftLayout {
  const n = WORKDIR_NAMES;
  return {
    root,
    repo: path.join(root, `${n.checkout}.git`),
    commit: (commit) => {
      const base = path.join(root, commit.slice(0, 12));
      const baselineRoot = path.join(base, n.baseline);
      return {
        ...tree(base, path.join(base, n.checkout)),
        baseline: {
          ...tree(baselineRoot, path.join(baselineRoot, n.checkout)),
          results: (unpatched, key) => path.join(baselineRoot, `results-${unpatched.slice(0, 12)}-${key}.json`),
        },
      };
    },
  };
}

/** True for a side folder an unfinished fetch left (`mlx.partial-<pid>`). */
export function isPartialCheckout(name: string): boolean {
  return new RegExp(`^${WORKDIR_NAMES.checkout.replace('.', '\\.')}\\.partial-\\d+$`).test(name);
}
