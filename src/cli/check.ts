import os from 'node:os';

import { afterDashes, defineCommand, jobsOption, parseJobs, type CommandSpec } from './spec.js';

export const checkSpec: CommandSpec = defineCommand({
  name: 'check',
  describe:
    'Drift check: apply the series to other MLX commits (branches, tags, commit ids) and report each template and patch; --build also tests them',
  builder: (y) =>
    y
      .option('against', {
        type: 'string',
        array: true,
        demandOption: true,
        describe: 'MLX branches, tags or commit ids to apply the series to (fetched from the MLX source when missing)',
      })
      .option('build', {
        type: 'boolean',
        default: false,
        describe: 'On each commit the series applies to, build and run the suite as `test` does, against that commit',
      })
      .option('tests', { type: 'string', describe: 'With --build: doctest filter, as for `test`' })
      .option('debug', { type: 'boolean', default: false, describe: 'With --build: Debug build instead of Release' })
      .option('offline', {
        type: 'boolean',
        default: false,
        describe: 'With --build: build without network, as `test --offline`',
      })
      .option('metal-twin', {
        type: 'boolean',
        default: false,
        describe: 'With --build: also run the Metal-only cases on the host twin, as `test --metal-twin`',
      })
      .option('deps-dir', { type: 'string', describe: 'With --build: folder with local copies of dependencies' })
      .option('jobs', jobsOption('Commits to check at once (default: the number of CPUs)', os.availableParallelism()))
      .option('markdown', {
        type: 'boolean',
        default: false,
        describe: 'Print the report as Markdown (for a CI job summary) instead of plain lines',
      })
      .example('$0 check --against main v0.32.0', "upstream's default branch and a release")
      .example('$0 check --against main --markdown >> "$GITHUB_STEP_SUMMARY"', 'the report in a GitHub job summary')
      .example('$0 check --against main --build --offline', 'also build and run the suite on it')
      .epilog(
        'Each template and patch is clean, three-way (applies only with a three-way merge), already-upstream or conflict; ' +
          'each reason names the file and hunk, and says upstream_changed (upstream changed the file: it differs from the pinned commit) or ' +
          'patch_changed (the file is as at the pinned commit: the patch itself does not apply). The checkout in the workdir is never ' +
          'touched: the commits are fetched (depth 1) into <workdir>/check/. Exit 4 when a patch does not apply to some commit, even ' +
          'with a three-way merge; with --build, 8 when tests fail; 0 otherwise.',
      ),
  load: async () => {
    const { check } = await import('../commands/check.js');
    return (o) =>
      check({
        ...o,
        against: (o.against ?? []).map(String),
        build: o.build === true,
        tests: o.tests,
        debug: o.debug === true,
        offline: o.offline === true,
        metalTwin: o.metalTwin === true,
        depsDir: o.depsDir,
        cmakeArgs: afterDashes(o),
        jobs: parseJobs(o.jobs),
        markdown: o.markdown === true,
      });
  },
});
