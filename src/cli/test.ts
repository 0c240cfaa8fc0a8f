import type { CommandSpec } from './spec.js';

export const testSpec: CommandSpec = {
  name: 'test',
  describe: "Build the applied MLX with CMake, run its C++ suite and compare with the unpatched baseline (extra CMake arguments after --)",
  builder: (y) =>
    y
      .option('tests', { type: 'string', describe: 'doctest filter: run only matching test cases (e.g. "*metal storage*")' })
      .option('debug', { type: 'boolean', default: false, describe: 'Debug build instead of Release' })
      .option('offline', { type: 'boolean', default: false, describe: 'Build without network: dependencies from --deps-dir or system packages' })
      .option('deps-dir', { type: 'string', describe: 'Folder with local copies of dependencies (json, doctest, fmt, gguflib, metal_cpp); implies --offline' })
      .option('baseline', { type: 'boolean', default: true, describe: 'Compare with the unpatched pinned tree (--no-baseline: every failure counts)' })
      .example('$0 test --offline', 'build and run the whole suite from system packages')
      .example('$0 test --tests "*storage*"', 'the quick loop on the new cases')
      .example('$0 test -- -DMLX_METAL_DEBUG=ON', 'pass extra arguments to CMake'),
  load: async () => {
    const { test } = await import('../commands/test.js');
    return (o) =>
      test({
        ...o,
        tests: o['tests'] as string | undefined,
        debug: o['debug'] === true,
        offline: o['offline'] === true,
        depsDir: o['depsDir'] as string | undefined,
        baseline: o['baseline'] !== false,
        cmakeArgs: ((o['--'] as unknown[] | undefined) ?? []).map(String),
      });
  },
};

export const doctorSpec: CommandSpec = {
  name: 'doctor',
  describe: 'Check the machine: cmake, C++20 compiler, ninja, ccache, BLAS/LAPACK or Xcode, disk, offline dependencies',
  builder: (y) =>
    y
      .option('offline', { type: 'boolean', default: false, describe: 'Also check the dependencies an offline build needs' })
      .option('deps-dir', { type: 'string', describe: 'Folder with local copies of dependencies' }),
  load: async () => {
    const { doctor } = await import('../commands/doctor.js');
    return (o) => doctor({ ...o, offline: o['offline'] === true, depsDir: o['depsDir'] as string | undefined });
  },
};
