import {
  clearUnfinishedCheckout,
  saveUserWork,
  savedWorkLines,
  verifyNoUnmerged,
  type SavedWork,
} from '../series/saved-work.js';
import { loadContext } from '../series/context.js';
import { uninterruptible } from '../adapters/interrupt.js';
import { withLock } from '../adapters/lock.js';
import { ensureCheckout } from '../series/checkout.js';
import { defineCommand, type CommandResult, type GlobalOptions } from './spec.js';

export interface ResetData {
  command: 'reset';
  checkout: string;
  pinned: string;
  status: 'reset' | 'already-clean' | 'no-checkout';
  saved?: SavedWork;
}

export const resetCommand = defineCommand({
  name: 'reset',
  describe: 'Put the checkout back on the clean pinned commit (saves your changes first)',
  builder: (y) => y,
  run: reset,
});

/** Puts the checkout back on the clean pinned commit, saving the user's work first. */
async function reset(options: GlobalOptions): Promise<CommandResult<ResetData>> {
  const ctx = await loadContext(options);
  const pinned = ctx.config.upstream.commit;
  const base = { command: 'reset' as const, checkout: ctx.layout.checkout, pinned };
  if ((await ctx.checkout()) === null) {
    return { data: { ...base, status: 'no-checkout' }, lines: [`No checkout in ${base.checkout}; nothing to reset.`] };
  }
  return withLock(ctx.workdir, 'reset', async () => {
    const { git, head } = await ensureCheckout(ctx);
    // A first checkout that never finished (HEAD unborn): git cannot stash there, so its files are saved as a commit.
    const cleared =
      head.kind === 'empty'
        ? await uninterruptible(() =>
            clearUnfinishedCheckout(git, [pinned], { scope: 'all', save: true, reason: 'reset' }),
          )
        : null;
    const dirty = await git.status();
    if (head.kind === 'pinned' && dirty.length === 0) {
      return { data: { ...base, status: 'already-clean' }, lines: [`${git.dir} is already the clean pinned commit.`] };
    }
    await verifyNoUnmerged(git);
    // Saving the user's work and switching the checkout finish together once begun: Ctrl-C waits.
    const saved = await uninterruptible(async () => {
      let kept: SavedWork | undefined = cleared?.saved ?? undefined;
      if (dirty.length > 0 || head.kind === 'foreign') {
        kept = await saveUserWork(git, dirty, {
          reason: 'reset',
          ...(head.kind === 'foreign' ? { head: head.commit } : {}),
        });
      }
      await git.checkoutDetached(pinned);
      return kept;
    });
    const lines = [`Reset ${git.dir} to the pinned commit ${pinned.slice(0, 12)}.`];
    if (saved) ctx.log.info(savedWorkLines(saved, 'all').join('\n'));
    return { data: { ...base, status: 'reset', ...(saved ? { saved } : {}) }, lines };
  });
}
