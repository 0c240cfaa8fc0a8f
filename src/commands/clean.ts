import { formatBytes, type WorkdirItem } from '../suite/workdir-items.js';
import { cleanWorkdir, type MeasuredItem } from '../suite/workdir-clean.js';
import { loadContext } from '../series/context.js';
import { type CommandResult, defineCommand, type GlobalOptions } from './spec.js';

interface CleanOptions extends GlobalOptions {
  all: boolean;
  dryRun: boolean;
}

export const cleanCommand = defineCommand({
  name: 'clean',
  describe: 'Remove build folders, baselines and other regenerable files from the workdir (--all: also the checkout)',
  builder: (y) =>
    y
      .option('all', {
        type: 'boolean',
        default: false,
        describe: 'Also remove the MLX checkout and downloads (refused while the checkout holds your work)',
      })
      .option('dry-run', {
        type: 'boolean',
        default: false,
        describe: 'List what would be removed, with sizes; remove nothing',
      })
      .example('$0 clean --dry-run', 'see what takes the space')
      .example('$0 clean --all', 'start over from an empty workdir'),
  run: (o) => clean(o),
});

export interface CleanData {
  command: 'clean';
  workdir: string;
  all: boolean;
  /** False for --dry-run (and when nothing was there). */
  removed: boolean;
  remove: Array<{ name: string; path: string; what: string; bytes: number }>;
  keep: Array<{ name: string; what: string }>;
  /** Entries named as the tool's items but without its mark: left alone. */
  notMade: Array<{ name: string; what: string }>;
  bytes: number;
}

/** `clean`: see `cleanWorkdir`. */
async function clean(options: CleanOptions): Promise<CommandResult<CleanData>> {
  const ctx = await loadContext(options);
  const { all, dryRun } = options;
  const outcome = await cleanWorkdir(ctx, { all, dryRun });
  const data: CleanData = {
    command: 'clean',
    workdir: ctx.workdir,
    all,
    removed: outcome.removed,
    remove: outcome.remove.map(removeEntry),
    keep: outcome.keep.map(keepEntry),
    notMade: outcome.notMade.map(keepEntry),
    bytes: outcome.bytes,
  };
  if (outcome.remove.length === 0)
    return {
      data,
      lines: [`Nothing to clean in ${ctx.workdir}.`, ...keptLine(outcome.keep), ...notMadeLines(outcome.notMade)],
    };
  const lines = [
    `${outcome.removed ? 'Removed' : 'Would remove'} from ${ctx.workdir}:`,
    ...outcome.remove.map(itemLine),
    `${formatBytes(outcome.bytes).padStart(10)}  ${outcome.removed ? 'freed' : 'in all'}`,
    ...keptLine(outcome.keep),
    ...notMadeLines(outcome.notMade),
  ];
  return { data, lines };
}

function itemLine(item: MeasuredItem): string {
  return `${formatBytes(item.bytes).padStart(10)}  ${shown(item)}  ${item.what}`;
}

function keptLine(keep: readonly WorkdirItem[]): string[] {
  if (keep.length === 0) return [];
  return [`kept: ${keep.map((k) => `${shown(k)} (${k.what}; --all removes it)`).join(', ')}`];
}

function notMadeLines(notMade: readonly WorkdirItem[]): string[] {
  if (notMade.length === 0) return [];
  return [
    `not made by mlx-storage-pr, left alone: ${notMade.map(shown).join(', ')}`,
    '  (they lack the mark the tool writes into what it makes; one an older version made is yours to remove by hand)',
  ];
}

const shown = (item: WorkdirItem) => (item.folder ? `${item.name}/` : item.name);

const removeEntry = (item: MeasuredItem) => ({ name: item.name, path: item.path, what: item.what, bytes: item.bytes });
const keepEntry = (item: WorkdirItem) => ({ name: item.name, what: item.what });
