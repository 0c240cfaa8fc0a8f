import os from 'node:os';

import { SKIP_NAMES } from '../core/verify-skip.js';
import { afterDashes, defineCommand, jobsOption, parseJobs, type CommandSpec } from './spec.js';

export const verifySpec: CommandSpec = defineCommand({
  name: 'verify',
  describe: 'Report every upstream-readiness check: formatting, Metal type-check, PR policy, build and tests',
  builder: (y) =>
    y
      .option('metal-cpp', {
        type: 'string',
        describe: "Apple's metal-cpp 26 (folder or zip) for the Metal type-check; makes that check required",
      })
      .option('require-metal', {
        type: 'boolean',
        default: false,
        describe: 'Fail when the Metal type-check cannot run (tools or metal-cpp missing)',
      })
      .option('jobs', jobsOption('Compilers to run at once (default: the number of CPUs)', os.availableParallelism()))
      .option('offline', { type: 'boolean', default: false, describe: 'Build without network, as `test --offline`' })
      .option('deps-dir', { type: 'string', describe: 'Folder with local copies of dependencies, as for `test`' })
      .option('debug', { type: 'boolean', default: false, describe: 'Debug build instead of Release' })
      .option('include', {
        type: 'string',
        array: true,
        describe: 'Extra -isystem folder for the Metal type-check; repeatable',
      })
      .option('skip', {
        type: 'string',
        array: true,
        choices: SKIP_NAMES,
        describe:
          'Leave out checks: a group (format, metal-typecheck, pr-text, build) or one check id; listed in the report',
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
  load: async () => {
    const { verify } = await import('../commands/verify.js');
    return (o) =>
      verify({
        ...o,
        metalCpp: o.metalCpp,
        jobs: parseJobs(o.jobs),
        include: o.include,
        requireMetal: o.requireMetal === true,
        offline: o.offline === true,
        depsDir: o.depsDir,
        debug: o.debug === true,
        cmakeArgs: afterDashes(o),
        skip: o.skip,
      });
  },
});
