import { checkExitCode, checkLines, checkMarkdown, type CheckData } from '../upkeep/drift-report.js';
import { UserError } from '../core/errors.js';
import { verifyRevisionOption } from '../core/git-values.js';
import type { Sanitizer } from '../suite/sanitize.js';
import { loadContext } from '../series/context.js';
import { verifyDepsDir } from '../suite/offline-deps.js';
import { checkAgainst } from '../upkeep/drift.js';
import { buildOptions, jobsOption } from './options.js';
import { afterDashes, type CommandResult, defineCommand, type GlobalOptions, parseJobs } from './spec.js';

export const checkCommand = defineCommand({
  name: 'check',
  describe:
    'Drift check: apply the series to other MLX commits (branches, tags, commit ids) and report each template and patch; --build also tests them',
  builder: (y) =>
    jobsOption(
      buildOptions(
        y
          .option('against', {
            type: 'string',
            array: true,
            demandOption: true,
            describe:
              'MLX branches, tags or commit ids to apply the series to (fetched from the MLX source when missing)',
          })
          .option('build', {
            type: 'boolean',
            default: false,
            describe:
              'On each commit the series applies to, build and run the suite as `test` does, against that commit (the build options need it)',
          })
          .option('tests', { type: 'string', describe: 'With --build: doctest filter, as for `test`' }),
      ).option('metal-twin', {
        type: 'boolean',
        default: false,
        describe: 'With --build: also run the Metal-only cases on the host twin, as `test --metal-twin`',
      }),
      'Commits to check at once (default: the number of CPUs)',
    )
      .check((argv) => {
        if (argv.tests !== undefined && argv.tests.trim() === '')
          throw new Error('--tests needs a doctest filter, e.g. --tests "test my op*".');
        return true;
      })
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
  run: (o) =>
    check({
      ...o,
      against: (o.against ?? []).map(String),
      cmakeArgs: afterDashes(o),
      jobs: parseJobs(o.jobs),
    }),
});

interface CheckCommandOptions extends GlobalOptions {
  against: string[];
  build: boolean;
  tests?: string | undefined;
  debug: boolean;
  offline: boolean;
  metalTwin: boolean;
  depsDir?: string | undefined;
  sanitize?: Sanitizer | undefined;
  cxx?: string | undefined;
  cmakeArgs: string[];
  jobs?: number | undefined;
  markdown: boolean;
}

async function check(options: CheckCommandOptions): Promise<CommandResult<CheckData>> {
  for (const ref of options.against) verifyRevisionOption('--against', ref.trim());
  const buildOnly = [
    options.tests !== undefined && '--tests',
    options.debug && '--debug',
    options.offline && '--offline',
    options.metalTwin && '--metal-twin',
    options.depsDir !== undefined && '--deps-dir',
    options.sanitize !== undefined && '--sanitize',
    options.cxx !== undefined && '--cxx',
    options.cmakeArgs.length > 0 && 'CMake arguments after --',
  ].filter((o): o is string => typeof o === 'string');
  if (!options.build && buildOnly.length > 0) {
    throw new UserError('USAGE', `${buildOnly.join(', ')}: only with --build.`, {
      hint: 'Add --build to build and test each commit, or leave them out.',
    });
  }
  if (options.build) verifyDepsDir(options.cwd, options.depsDir);
  const ctx = await loadContext(options);
  const data = await checkAgainst(ctx, {
    against: options.against,
    jobs: options.jobs,
    build: options.build
      ? {
          tests: options.tests,
          debug: options.debug,
          offline: options.offline,
          metalTwin: options.metalTwin,
          depsDir: options.depsDir,
          sanitize: options.sanitize,
          cxx: options.cxx,
          cmakeArgs: options.cmakeArgs,
        }
      : undefined,
  });
  return {
    data,
    lines: options.markdown ? checkMarkdown(data) : checkLines(data),
    exitCode: checkExitCode(data.refs),
  };
}
