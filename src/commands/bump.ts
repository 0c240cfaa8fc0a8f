import { UserError } from '../core/errors.js';
import { abortBump, bumpTo, continueBump, type BumpData } from '../ops/bump.js';
import { loadContext, type CommandResult, type GlobalOptions } from './context.js';

export type { BumpData } from '../ops/bump.js';

export interface BumpOptions extends GlobalOptions {
  to?: string | undefined;
  continue?: boolean | undefined;
  abort?: boolean | undefined;
}

export async function bump(options: BumpOptions): Promise<CommandResult<BumpData>> {
  const ctx = await loadContext(options);
  const ref = options.to?.trim();
  if ([ref !== undefined, options.continue === true, options.abort === true].filter(Boolean).length !== 1 || ref === '')
    throw new UserError('USAGE', 'bump needs exactly one of --to <ref>, --continue and --abort.', {
      hint: 'For example `mlx-storage-pr bump --to v0.33.0`, or `mlx-storage-pr bump --continue` after a conflict.',
    });
  const data = options.continue
    ? await continueBump(ctx)
    : options.abort
      ? await abortBump(ctx)
      : await bumpTo(ctx, ref as string);
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
      if (data.head) lines.push(`The checkout holds the series on the new commit (${data.head.slice(0, 12)}).`);
      lines.push('Next: `mlx-storage-pr test` on the new commit.');
  }
  return { data, lines };
}
