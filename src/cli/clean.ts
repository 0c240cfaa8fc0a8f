import { defineCommand, type CommandSpec } from './spec.js';

export const cleanSpec: CommandSpec = defineCommand({
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
  load: async () => {
    const { clean } = await import('../commands/clean.js');
    return (o) => clean({ ...o, all: o.all === true, dryRun: o.dryRun === true });
  },
});
