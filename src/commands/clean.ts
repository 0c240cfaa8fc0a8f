import { withLock } from '../adapters/lock.js';
import { describeCheckoutWork, formatBytes, type WorkdirItem } from '../core/clean.js';
import { UserError } from '../core/errors.js';
import { checkoutWork, inspectWorkdir, removeItems, type MeasuredItem } from '../ops/clean.js';
import { loadContext, type CommandResult, type GlobalOptions } from './context.js';

export interface CleanOptions extends GlobalOptions {
  all?: boolean | undefined;
  dryRun?: boolean | undefined;
}

export interface CleanData {
  command: 'clean';
  workdir: string;
  all: boolean;
  /** False for --dry-run (and when nothing was there). */
  removed: boolean;
  remove: Array<{ name: string; path: string; what: string; bytes: number }>;
  keep: Array<{ name: string; what: string }>;
  bytes: number;
}

/**
 * Removes what the tool made in the workdir and can make again: build
 * folders, baselines, verify's and check-metal's trees, unfinished fetches.
 * `--all` also removes the checkout and downloads, but only when the
 * checkout holds none of the user's work.
 */
export async function clean(options: CleanOptions): Promise<CommandResult<CleanData>> {
  const ctx = await loadContext(options);
  const all = options.all ?? false;
  const base = { command: 'clean' as const, workdir: ctx.workdir, all, removed: false };
  const work = async (dryRun: boolean): Promise<CommandResult<CleanData>> => {
    const found = await inspectWorkdir(ctx.workdir, all);
    if (found === null || found.remove.length === 0) {
      const data: CleanData = { ...base, remove: [], keep: (found?.keep ?? []).map(keepEntry), bytes: 0 };
      return { data, lines: [`Nothing to clean in ${ctx.workdir}.`, ...keptLine(found?.keep ?? [])] };
    }
    const git = await ctx.checkout();
    if (all && git !== null) {
      const reasons = describeCheckoutWork(await checkoutWork(git, ctx.config.upstream.commit, ctx.config.branch), git.dir);
      if (reasons.length) {
        throw new UserError('CHECKOUT_HAS_WORK', `clean --all would delete ${git.dir}, which holds your work:\n  ${reasons.join('\n  ')}\nNothing was removed.`, {
          hint: `Keep what you need elsewhere (commit and push it, or copy the files) and drop the rest (\`git -C ${git.dir} stash drop\`, \`git -C ${git.dir} update-ref -d <ref>\`, \`git -C ${git.dir} branch -D <branch>\`); or run \`clean\` without --all, which never touches the checkout.`,
          details: { reasons },
        });
      }
    }
    const bytes = found.remove.reduce((sum, item) => sum + item.bytes, 0);
    if (!dryRun) await removeItems(found.remove, git);
    const data: CleanData = { ...base, removed: !dryRun, remove: found.remove.map(removeEntry), keep: found.keep.map(keepEntry), bytes };
    const lines = [
      `${dryRun ? 'Would remove' : 'Removed'} from ${ctx.workdir}:`,
      ...found.remove.map(itemLine),
      `${formatBytes(bytes).padStart(10)}  ${dryRun ? 'in all' : 'freed'}`,
      ...keptLine(found.keep),
    ];
    return { data, lines };
  };
  if (options.dryRun) return work(true);
  // A workdir that does not exist has nothing to clean; the lock would create it.
  if ((await inspectWorkdir(ctx.workdir, all)) === null) return work(true);
  return withLock(ctx.workdir, 'clean', () => work(false));
}

function itemLine(item: MeasuredItem): string {
  return `${formatBytes(item.bytes).padStart(10)}  ${item.name}/  ${item.what}`;
}

function keptLine(keep: readonly WorkdirItem[]): string[] {
  if (keep.length === 0) return [];
  return [`kept: ${keep.map((k) => `${k.name}/ (${k.what}; --all removes it)`).join(', ')}`];
}

const removeEntry = (item: MeasuredItem) => ({ name: item.name, path: item.path, what: item.what, bytes: item.bytes });
const keepEntry = (item: WorkdirItem) => ({ name: item.name, what: item.what });
