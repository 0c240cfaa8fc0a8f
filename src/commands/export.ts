import { exportEdits, type ExportData } from '../upkeep/export-edits.js';
import type { NotExportedReason } from '../upkeep/series-rewrite.js';
import { loadContext } from '../series/context.js';
import { type CommandResult, defineCommand, type GlobalOptions } from './spec.js';

interface ExportOptions extends GlobalOptions {
  dryRun: boolean;
  includeNew: boolean;
}

export const exportCommand = defineCommand({
  name: 'export',
  describe: 'Write the edits made in the MLX checkout back into templates/ and patches/',
  builder: (y) =>
    y
      .option('dry-run', {
        type: 'boolean',
        default: false,
        describe: 'Print the diff of templates/ and patches/ that export would write; write nothing',
      })
      .option('include-new', {
        type: 'boolean',
        default: false,
        describe:
          'Also take new files (into templates/) and edits to MLX files no patch changes (into a new patch at the end of the series)',
      })
      .example('$0 export --dry-run', 'show what export would write')
      .example('$0 export --include-new --json', 'export everything, new files included')
      .epilog(
        'Takes uncommitted edits and commits on top of the series commit. Files made from templates go back into templates/ ' +
          'with their {{placeholders}}; edits to MLX files regenerate the patch that changes them with `git diff` against the pinned commit. ' +
          'Refuses, writing nothing, when a value of a variable appears ambiguously or an edit cannot be placed in one patch. ' +
          'During a bump it reads the bump worktree and writes the series against the new commit.',
      ),
  run: (o) => exportEditsCommand(o),
});

const reasonText: Record<NotExportedReason, string> = {
  'new-file': 'new file (add it with --include-new)',
  'changed-mlx-file': 'MLX file no patch changes (add a patch for it with --include-new)',
  deleted: 'deleted MLX file (export never deletes MLX files)',
};

async function exportEditsCommand(options: ExportOptions): Promise<CommandResult<ExportData>> {
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
