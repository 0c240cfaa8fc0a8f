import { defineCommand, type CommandSpec } from './spec.js';

export const exportSpec: CommandSpec = defineCommand({
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
  load: async () => {
    const { exportCommand } = await import('../commands/export.js');
    return (o) => exportCommand({ ...o, dryRun: o.dryRun === true, includeNew: o.includeNew === true });
  },
});
