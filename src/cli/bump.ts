import { defineCommand, type CommandSpec } from './spec.js';

export const bumpSpec: CommandSpec = defineCommand({
  name: 'bump',
  describe:
    'Move the pin to a newer MLX commit and the series with it (--to), then --continue or --abort after a conflict',
  builder: (y) =>
    y
      .option('to', {
        type: 'string',
        describe: 'The MLX commit, tag or branch to move to (fetched from the MLX source)',
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
  load: async () => {
    const { bump } = await import('../commands/bump.js');
    return (o) => bump({ ...o, to: o.to, continue: o.continue === true, abort: o.abort === true });
  },
});
