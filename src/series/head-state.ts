import type { Git } from '../adapters/git.js';
import { inputHashOf } from './applied-tree.js';

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
