import { defineCommand, type CommandSpec } from './spec.js';

export const applySpec: CommandSpec = defineCommand({
  name: 'apply',
  describe: 'Fetch MLX at the pinned commit and apply templates/ and patches/',
  builder: (y) =>
    y
      .option('dry-run', { type: 'boolean', default: false, describe: 'Show what would change; write nothing' })
      .option('force', {
        type: 'boolean',
        default: false,
        describe: 'Save uncommitted edits (stash + backup ref) and apply anyway',
      })
      .option('3way', {
        type: 'boolean',
        default: false,
        describe: 'Fall back to a three-way merge when a patch does not apply exactly',
      })
      .example('$0 apply --mlx-repo ~/src/mlx', 'apply using a local MLX clone, no network')
      .example('$0 apply --dry-run --json', 'list what would change as JSON'),
  load: async () => {
    const { apply } = await import('../commands/apply.js');
    return (o) => apply({ ...o, dryRun: o.dryRun === true, force: o.force === true, threeWay: o['3way'] === true });
  },
});
