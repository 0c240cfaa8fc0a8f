import type { Conflict } from '../core/conflict.js';
import { plannedPaths } from '../core/plan.js';
import { classifyHead, type HeadState } from '../ops/state.js';
import { buildTree } from '../ops/tree.js';
import { loadContext, type CommandResult, type GlobalOptions } from './context.js';

export type ApplyState = 'no-checkout' | 'no-files' | 'not-applied' | 'applied' | 'outdated' | 'foreign-head' | 'missing-pinned-commit';

export interface StatusData {
  command: 'status';
  checkout: string;
  pinned: string;
  pinnedVersion: string;
  head: string | null;
  base: string | null;
  branch: string | null;
  state: ApplyState;
  /** Planned paths whose content in the working tree differs from the rendered series. */
  differs: string[];
  dirty: Array<{ path: string; code: string }>;
  conflicts: Conflict[];
}

export async function status(options: GlobalOptions): Promise<CommandResult<StatusData>> {
  const ctx = await loadContext(options);
  const { plan } = await ctx.project();
  const pinned = ctx.config.upstream.commit;
  const data: StatusData = {
    command: 'status',
    checkout: ctx.layout.checkout,
    pinned,
    pinnedVersion: ctx.config.upstream.version,
    head: null,
    base: null,
    branch: null,
    state: 'no-checkout',
    differs: [],
    dirty: [],
    conflicts: [],
  };
  const git = await ctx.checkout();
  if (git === null) return { data, lines: [`No checkout in ${data.checkout}. Run \`mlx-storage-pr apply\`.`] };

  const head = await classifyHead(git, pinned);
  data.head = head.kind === 'empty' ? null : head.commit;
  data.base = baseOf(head, pinned);
  data.branch = await git.currentBranch();
  data.dirty = await git.status();

  if (!(await git.hasCommit(pinned))) {
    data.state = 'missing-pinned-commit';
  } else {
    const built = await buildTree(git, plan);
    data.conflicts = built.conflicts;
    if (built.tree !== null) data.differs = await git.worktreeDiff(built.tree, plannedPaths(plan));
    data.state =
      head.kind === 'applied'
        ? head.inputHash === plan.inputHash
          ? 'applied'
          : 'outdated'
        : head.kind === 'foreign'
          ? 'foreign-head'
          : head.kind === 'empty'
            ? 'no-files'
            : 'not-applied';
  }
  return { data, lines: statusLines(data) };
}

function baseOf(head: HeadState, pinned: string): string | null {
  switch (head.kind) {
    case 'empty':
      return null;
    case 'pinned':
      return pinned;
    case 'applied':
      return head.base;
    case 'foreign':
      return head.base;
  }
}

const stateText: Record<ApplyState, string> = {
  'no-checkout': 'no checkout',
  'no-files': 'not applied: the pinned commit is fetched but no files are checked out yet (an interrupted first apply): run `mlx-storage-pr apply`',
  'not-applied': 'not applied (clean pinned commit)',
  applied: 'applied and current',
  outdated: 'applied, but templates/ or patches/ changed since: run `mlx-storage-pr apply`',
  'foreign-head': 'HEAD is not an applied series: run `mlx-storage-pr reset` (saves your work)',
  'missing-pinned-commit': 'the checkout lacks the pinned commit: run `mlx-storage-pr apply`',
};

function statusLines(data: StatusData): string[] {
  const lines = [
    `checkout: ${data.checkout}`,
    `pinned:   ${data.pinned} (MLX ${data.pinnedVersion})`,
    `head:     ${data.head ?? '(none)'}${data.branch ? ` on ${data.branch}` : ''}`,
    `base:     ${data.base ?? '(none)'}${data.base !== null && data.base !== data.pinned ? '  <- not the pinned commit' : ''}`,
    `series:   ${stateText[data.state]}`,
  ];
  if (data.differs.length) lines.push('differs from the rendered series:', ...data.differs.map((p) => `  ${p}`));
  if (data.dirty.length) lines.push('uncommitted changes:', ...data.dirty.map((e) => `  ${e.code} ${e.path}`));
  if (data.conflicts.length) lines.push('conflicts:', ...data.conflicts.map((c) => `  ${c.patch}: ${c.file}: ${c.reason}`));
  return lines;
}
