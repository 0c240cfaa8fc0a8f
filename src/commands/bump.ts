import { UserError } from '../core/errors.js';
import { verifyRevisionOption } from '../core/git-values.js';
import { abortBump, bumpTo, continueBump, type BumpData } from '../upkeep/bump-series.js';
import { loadContext } from '../series/context.js';
import { type CommandResult, defineCommand, type GlobalOptions } from './spec.js';

interface BumpOptions extends GlobalOptions {
  to?: string | undefined;
  continue: boolean;
  abort: boolean;
  allowOlder: boolean;
}

export const bumpCommand = defineCommand({
  name: 'bump',
  describe:
    'Move the pin to a newer MLX commit and the series with it (--to; an older one with --allow-older), then --continue or --abort after a conflict',
  builder: (y) =>
    y
      .option('to', {
        type: 'string',
        describe: 'The MLX commit, tag or branch to move to (fetched from the MLX source)',
      })
      .option('allow-older', {
        type: 'boolean',
        default: false,
        describe:
          'With --to: also move the pin to an older commit (an ancestor of the pin) or to one on another branch',
      })
      .option('continue', {
        type: 'boolean',
        default: false,
        describe: 'Finish a bump that stopped on a conflict, after the conflicts were resolved and exported',
      })
      .option('abort', {
        type: 'boolean',
        default: false,
        describe: 'Give up a bump: put the config, templates/, patches/ and the checkout back as they were',
      })
      .example('$0 bump --to v0.33.0', 'move to a release tag')
      .example('$0 bump --continue', 'after `export` took the resolved conflicts')
      .epilog(
        "Each patch is merged onto the new commit three-way (the old pin's files are the base). On success the config gets the new commit " +
          "and the version from MLX's mlx/version.h, the patches are regenerated against the new commit and the checkout is applied again. " +
          'On a conflict (exit 4) the series is left with conflict markers in <workdir>/bump/mlx: resolve them there, run `export`, then `bump --continue`.',
      ),
  run: (o) => bump(o),
});

async function bump(options: BumpOptions): Promise<CommandResult<BumpData>> {
  if (options.to !== undefined) verifyRevisionOption('--to', options.to.trim());
  const ctx = await loadContext(options);
  const ref = options.to?.trim();
  if ([ref !== undefined, options.continue, options.abort].filter(Boolean).length !== 1 || ref === '')
    throw new UserError('USAGE', 'bump needs exactly one of --to <ref>, --continue and --abort.', {
      hint: 'For example `mlx-storage-pr bump --to v0.33.0`, or `mlx-storage-pr bump --continue` after a conflict.',
    });
  if (options.allowOlder && ref === undefined)
    throw new UserError('USAGE', '--allow-older goes with --to <ref>: it lets bump move the pin to an older commit.', {
      hint: 'For example `mlx-storage-pr bump --to v0.32.1 --allow-older`.',
    });
  const data = options.continue
    ? await continueBump(ctx)
    : options.abort
      ? await abortBump(ctx)
      : await bumpTo(ctx, ref as string, { allowOlder: options.allowOlder });
  const lines: string[] = [];
  const to = `${data.to.commit.slice(0, 12)} (MLX ${data.to.version})`;
  for (const p of data.patches) lines.push(`${p.result.padEnd(8)} patches/${p.patch}: ${p.file}`);
  switch (data.status) {
    case 'already-pinned':
      lines.push(`Already pinned to ${to}; nothing to do.`);
      break;
    case 'aborted':
      lines.push(
        `Gave up the bump to ${to}: the config, templates/ and patches/ are as they were, pinned to ${data.from.commit.slice(0, 12)} (MLX ${data.from.version}).`,
      );
      break;
    default:
      if (data.removed.length) lines.push(`Removed ${data.removed.join(', ')}: MLX ${to} already has the change.`);
      lines.push(
        `Moved the pin from ${data.from.commit.slice(0, 12)} (MLX ${data.from.version}) to ${to}; rewrote ${data.written.join(', ')}.`,
      );
      if (data.relation === 'older')
        lines.push('The new pin is older than the old one: one of its ancestors (--allow-older).');
      if (data.relation === 'side') lines.push('The new pin is not a descendant of the old pin (--allow-older).');
      if (data.head) lines.push(`The checkout holds the series on the new commit (${data.head.slice(0, 12)}).`);
      lines.push('Next: `mlx-storage-pr test` on the new commit.');
  }
  return { data, lines };
}
