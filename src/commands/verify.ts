import { formatItems, type ReportItem } from '../core/report-items.js';
import { ExitCode, UserError } from '../core/errors.js';
import { withUpstreamCi } from '../suite/upstream-ci.js';
import { SKIP_NAMES, VERIFY_GROUP_NAMES } from '../readiness/skip.js';
import { readinessItems, type ReadinessItemsOptions } from '../readiness/readiness-report.js';
import { loadContext } from '../series/context.js';
import { verifyDepsDir } from '../suite/offline-deps.js';
import { verifySeriesNotEmpty } from '../series/plan.js';
import { seriesRoles } from '../series/config.js';
import { buildOptions, metalOptions, upstreamCiOption } from './options.js';
import { afterDashes, type CommandResult, defineCommand, type GlobalOptions, parseJobs } from './spec.js';

interface VerifyOptions extends GlobalOptions, ReadinessItemsOptions {}

export interface VerifyData {
  command: 'verify';
  ready: boolean;
  checks: ReportItem[];
  /** Check ids left out with `--skip`. */
  skipped: string[];
  /** Check ids that do not apply to this series (no Metal role, no mutants, no test change). */
  notApplicable: string[];
}

export const verifyCommand = defineCommand({
  name: 'verify',
  describe: 'Report every upstream-readiness check: formatting, Metal type-check, PR policy, build and tests',
  builder: (y) =>
    upstreamCiOption(buildOptions(metalOptions(y)))
      .option('skip', {
        type: 'string',
        array: true,
        choices: SKIP_NAMES,
        describe: `Leave out checks: a group (${VERIFY_GROUP_NAMES.join(', ')}) or one check id; listed in the report`,
      })
      .option('mutants', {
        type: 'string',
        choices: ['listed', 'generated', 'all'],
        default: 'all',
        describe:
          "Which mutants the mutant check runs: mutants.json's, those generated from the implementation's added lines, or both",
      })
      .example('$0 verify', 'one report of every check')
      .example('$0 verify --json --metal-cpp ~/metal-cpp', 'machine-readable, with the Metal type-check required')
      .example('$0 verify --skip pr-text', 'every check but the PR text (a CI where nobody writes pr/)')
      .epilog(
        'Each check is ok, FAIL or n/c (not checked, with the reason). Exit 1 when a required check is not ok. ' +
          'The Metal type-check is required when it runs or when --metal-cpp/--require-metal is given; when clang 19, libc++ 19 or metal-cpp ' +
          'are missing otherwise, it is reported as not checked and does not fail verify. CMake formatting without cmake-format 0.6.13 is ' +
          'not checked and does fail verify (pip install cmakelang==0.6.13). The PR text checks read pr/ (see pr/README.md). ' +
          'The docs check builds each .rst page the PR adds or changes with Sphinx (dummy builder, minimal configuration) and fails on ' +
          'warnings the pinned page does not have; without sphinx-build (SPHINXBUILD or PATH) it is not checked and fails verify ' +
          '(sudo apt-get install python3-sphinx).',
      ),
  run: (o) =>
    verify({
      ...o,
      jobs: parseJobs(o.jobs),
      skip: o.skip,
      mutants: o.mutants,
      sanitize: o.sanitize,
      cxx: o.cxx,
      upstreamCi: o.upstreamCi,
      ...withUpstreamCi({ debug: o.debug, cmakeArgs: afterDashes(o) }, o.upstreamCi),
    }),
});

async function verify(options: VerifyOptions): Promise<CommandResult<VerifyData>> {
  verifyDepsDir(options.cwd, options.depsDir);
  const ctx = await loadContext(options);
  verifySeriesNotEmpty((await ctx.project()).plan, 'verify');
  if (options.requireMetal && seriesRoles(ctx.config).metal === null)
    throw new UserError(
      'NO_METAL_ROLE',
      '--require-metal: the series has no Metal role, so there is no Metal lane to require.',
      {
        hint: 'Declare the Metal-only files in roles.metal of mlx-storage-pr.config.json, or leave out --require-metal.',
      },
    );
  const { ready, checks, skipped } = await readinessItems(ctx, options, { command: 'verify' });
  const notApplicable = checks.filter((c) => c.detail.startsWith('not applicable')).map((c) => c.id);
  const blocking = checks.filter((c) => c.required && c.status !== 'pass').length;
  const lines = [
    `Lanes for this series: ${checks
      .filter((c) => !notApplicable.includes(c.id))
      .map((c) => c.id)
      .join(', ')}${notApplicable.length ? `; not applicable: ${notApplicable.join(', ')}` : ''}`,
    ...formatItems(checks),
    ...(skipped.length ? [`left out (--skip): ${skipped.join(', ')}`] : []),
    ready ? 'Ready: every required check passes.' : `Not ready: ${blocking} required check(s) did not pass.`,
  ];
  return {
    data: { command: 'verify', ready, checks, skipped, notApplicable },
    lines,
    ...(ready ? {} : { exitCode: ExitCode.failure }),
  };
}
