import { withUpstreamCi } from '../core/upstream-ci.js';
import { afterDashes, defineCommand, type CommandSpec } from './spec.js';

export const testSpec: CommandSpec = defineCommand({
  name: 'test',
  describe:
    'Build the applied MLX with CMake, run its C++ suite and compare with the unpatched baseline (extra CMake arguments after --)',
  builder: (y) =>
    y
      .option('tests', {
        type: 'string',
        describe: 'doctest filter: run only matching test cases (e.g. "*metal storage*")',
      })
      .option('debug', { type: 'boolean', default: false, describe: 'Debug build instead of Release' })
      .option('upstream-ci', {
        type: 'boolean',
        default: false,
        describe: "Build as MLX's Linux CI does, the baseline too: Debug, shared libraries, warnings as errors",
      })
      .option('offline', {
        type: 'boolean',
        default: false,
        describe: 'Build without network: dependencies from --deps-dir or system packages',
      })
      .option('deps-dir', {
        type: 'string',
        describe:
          'Folder with local copies of dependencies (json, doctest, fmt, gguflib, metal_cpp); implies --offline',
      })
      .option('metal-twin', {
        type: 'boolean',
        default: false,
        describe:
          "Also run the Metal-only cases on Linux against the host twin of metal-cpp (twin/): the PR's logic, not Metal itself",
      })
      .option('suite', {
        type: 'boolean',
        default: true,
        describe: 'Run the normal suite (the default; --no-suite with --metal-twin runs the twin alone)',
      })
      .check((argv) => {
        if (argv['suite'] === false && argv['metalTwin'] !== true)
          throw new Error('--no-suite needs --metal-twin: without it there is nothing to run.');
        return true;
      })
      .option('baseline', {
        type: 'boolean',
        default: true,
        describe: 'Compare with the unpatched pinned tree (the default; --no-baseline: every failure counts)',
      })
      .example('$0 test --offline', 'build and run the whole suite from system packages')
      .example('$0 test --tests "*storage*"', 'the quick loop on the new cases')
      .example('$0 test --offline --metal-twin --no-suite', 'the Metal-only cases on the host twin, alone')
      .example(
        '$0 test --offline --upstream-ci',
        "MLX's Linux CI leg: -DBUILD_SHARED_LIBS=ON -DCMAKE_COMPILE_WARNING_AS_ERROR=ON, Debug",
      )
      .example('$0 test -- -DMLX_METAL_DEBUG=ON', 'pass extra arguments to CMake'),
  load: async () => {
    const { test } = await import('../commands/test.js');
    return (o) =>
      test({
        ...o,
        tests: o.tests,
        offline: o.offline === true,
        depsDir: o.depsDir,
        baseline: o.baseline !== false,
        metalTwin: o.metalTwin === true,
        suite: o.suite !== false,
        ...withUpstreamCi({ debug: o.debug === true, cmakeArgs: afterDashes(o) }, o.upstreamCi === true),
      });
  },
});

export const doctorSpec: CommandSpec = defineCommand({
  name: 'doctor [commands..]',
  describe:
    'Check that the machine has what each command needs (all commands, or the ones named); exit 9 when one is not ready',
  builder: (y) =>
    y
      .positional('commands', {
        type: 'string',
        array: true,
        describe:
          'apply, test, format, check-metal, verify (status, reset, check, export, bump need what apply needs; pr what verify needs); none: all',
      })
      .option('offline', {
        type: 'boolean',
        default: false,
        describe: 'Require the local dependencies that test --offline needs',
      })
      .option('deps-dir', {
        type: 'string',
        describe: 'Folder with local copies of dependencies, as for test; implies --offline',
      })
      .example('$0 doctor', 'what every command needs, and which commands are ready')
      .example('$0 doctor test --offline', 'exit 0 only when test --offline can run here')
      .epilog(
        'Each check is listed under the first named command that needs it: ok, FAIL (the command cannot run without it) or opt (the command runs without it, ' +
          'and the line says what it then does). Exit 0 when every named command is ready, 9 when one is not.',
      ),
  load: async () => {
    const { doctor } = await import('../commands/doctor.js');
    return (o) =>
      doctor({
        ...o,
        commands: (o.commands ?? []).map(String),
        offline: o.offline === true,
        depsDir: o.depsDir,
      });
  },
});
