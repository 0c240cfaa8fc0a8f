import { defineCommand, type CommandSpec } from './spec.js';

export const formatSpec: CommandSpec = defineCommand({
  name: 'format',
  describe:
    "Check the PR's C++ with clang-format 21.1.8 and its CMake with cmake-format 0.6.13, as MLX's pre-commit does",
  builder: (y) =>
    y
      .option('fix', {
        type: 'boolean',
        default: false,
        describe:
          'Write the formatting into templates/ and patches/ (placeholders kept, only the lines a patch adds), then apply again',
      })
      .example('$0 format', 'print a diff of what clang-format and cmake-format would change')
      .example('$0 format --fix', 'fix templates/ and patches/ and refresh the checkout')
      .epilog(
        'New files are formatted whole; patched MLX files only on the lines the patch adds (clang-format line ranges), ' +
          "so MLX's own lines are never reformatted. Style comes from the checkout's .clang-format files at the pinned commit. " +
          'CMake files need cmake-format 0.6.13 on PATH (pip install cmakelang==0.6.13) or uvx/pipx; without it they are reported as not checked.',
      ),
  load: async () => {
    const { format } = await import('../commands/format.js');
    return (o) => format({ ...o, fix: o.fix === true });
  },
});
