import { exportEdits, type ExportData, type NotExportedReason } from '../ops/export.js';
import { loadContext, type CommandResult, type GlobalOptions } from './context.js';

export type { ExportData } from '../ops/export.js';

export interface ExportOptions extends GlobalOptions {
  dryRun?: boolean | undefined;
  includeNew?: boolean | undefined;
}

const reasonText: Record<NotExportedReason, string> = {
  'new-file': 'new file (add it with --include-new)',
  'changed-mlx-file': 'MLX file no patch changes (add a patch for it with --include-new)',
  deleted: 'deleted MLX file (export never deletes MLX files)',
};

export async function exportCommand(options: ExportOptions): Promise<CommandResult<ExportData>> {
  const data = await exportEdits(await loadContext(options), options);
  const lines: string[] = [];
  if (data.status === 'would-export' && data.diff) lines.push(data.diff.trimEnd());
  for (const e of data.exported) lines.push(`${e.path} -> ${e.into.join(', ')}`);
  for (const n of data.notExported) lines.push(`not exported: ${n.path}: ${reasonText[n.reason]}`);
  const against = `${data.base.slice(0, 12)}${data.bump ? ', the commit of the bump in progress' : ''}`;
  const files = [...data.written, ...data.removed.map((f) => `${f} (removed)`)];
  switch (data.status) {
    case 'nothing-to-export':
      lines.push(`Nothing to export: templates/ and patches/ already hold the checkout's edits (against ${against}).`);
      break;
    case 'would-export':
      lines.push(
        files.length
          ? `Would write ${files.join(', ')} (against ${against}). Run without --dry-run to write them.`
          : `Nothing to export (against ${against}).`,
      );
      break;
    case 'exported':
      lines.push(`Wrote ${files.join(', ')} (against ${against}).`);
      if (data.head) lines.push(`The checkout is on the new series commit ${data.head.slice(0, 12)}.`);
      if (data.savedHead)
        lines.push(
          `Your commits on top of the old series commit are kept: ${data.savedHead.ref} (${data.savedHead.commit.slice(0, 12)}).`,
        );
      if (data.bump) lines.push('Next: `mlx-storage-pr bump --continue`.');
      break;
  }
  return { data, lines };
}
