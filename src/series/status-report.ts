import type { Conflict } from './conflict.js';
import { plannedPaths } from './plan.js';
import { bumpSummary, readBumpState, type BumpSummary } from './bump-state.js';
import type { Context } from './context.js';
import type { Source } from './source.js';
import { classifyHead, headCheckoutState, type CheckoutState, type HeadState } from './head-state.js';
import { verifyPinIsCommit } from './checkout.js';
import { buildTree } from './applied-tree.js';

export interface StatusData {
  command: 'status';
  checkout: string;
  pinned: string;
  pinnedVersion: string;
  /** The MLX source commands fetch from, and where it was chosen (`apply`: remembered from the last apply). */
  source: { location: string; origin: Source['origin'] };
  head: string | null;
  base: string | null;
  branch: string | null;
  state: CheckoutState;
  /** Planned paths whose content in the working tree differs from the rendered series. */
  differs: string[];
  dirty: Array<{ path: string; code: string }>;
  conflicts: Conflict[];
  /** Files with unresolved merge conflicts in the checkout's index (a `git stash apply` that conflicted, say). */
  unmerged: string[];
  /** Set while a bump is in progress. */
  bump?: BumpSummary;
}

/** Where the checkout stands against the pinned commit and the rendered series. */
export async function checkoutStatus(ctx: Context): Promise<StatusData> {
  const { plan } = await ctx.project();
  const pinned = ctx.config.upstream.commit;
  const data: StatusData = {
    command: 'status',
    checkout: ctx.layout.checkout,
    pinned,
    pinnedVersion: ctx.config.upstream.version,
    source: { location: ctx.source.display, origin: ctx.source.origin },
    head: null,
    base: null,
    branch: null,
    state: 'no-checkout',
    differs: [],
    dirty: [],
    conflicts: [],
    unmerged: [],
  };
  const bump = await readBumpState(ctx);
  if (bump) data.bump = bumpSummary(bump);
  const git = await ctx.checkout();
  if (git === null) return data;

  const head = await classifyHead(git, pinned);
  data.head = head.kind === 'empty' ? null : head.commit;
  data.base = baseOf(head, pinned);
  data.branch = await git.currentBranch();
  data.dirty = await git.status();
  data.unmerged = await git.unmergedPaths();

  if (!(await git.hasCommit(pinned))) {
    data.state = 'missing-pinned-commit';
  } else {
    // A commit's parent is a commit: only another base leaves the pin to check.
    if (data.base !== pinned) await verifyPinIsCommit(git, pinned);
    const built = await buildTree(git, plan, { since: head.kind === 'applied' ? head.base : undefined });
    data.conflicts = built.conflicts;
    if (built.tree !== null) data.differs = await git.worktreeDiff(built.tree, plannedPaths(plan));
    data.state = headCheckoutState(head, () => plan.inputHash);
  }
  if (data.unmerged.length > 0) data.state = 'unmerged';
  return data;
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
