import os from 'node:os';

import type { Env } from '../adapters/env.js';
import { environmentValue, type Argv } from '../core/command-line.js';

import { SANITIZERS } from '../suite/sanitize.js';
import { UPSTREAM_LINUX_CI } from '../suite/upstream-ci.js';

/** Option groups that several commands take, declared once so that they read the same in every command's help. */

/** Set once, these stand for `--offline` and `--metal-cpp` in every command that takes them. */
export const OFFLINE_ENV = 'MLX_STORAGE_PR_OFFLINE';
export const METAL_CPP_ENV = 'MLX_STORAGE_PR_METAL_CPP';

/** What the environment sets once for every command: offline builds, and the metal-cpp folder or zip. */
export function environmentSettings(env: Env): { offline: boolean; metalCpp: string | null } {
  return {
    offline: environmentValue('boolean', env[OFFLINE_ENV]) === true,
    metalCpp: (environmentValue('string', env[METAL_CPP_ENV]) as string | undefined) ?? null,
  };
}

/** `--jobs`, read as text so that a bad value can be quoted back; `parseJobs` checks it. */
export function jobsOption<T>(y: Argv<T>, describe = 'Compilers to run at once (default: the number of CPUs)') {
  return y.option('jobs', {
    alias: 'j',
    type: 'string',
    placeholder: 'n',
    default: String(os.availableParallelism()),
    describe,
  });
}

/** `--include`: extra header folders for the Metal type-check. */
export function includeOption<T>(y: Argv<T>) {
  return y.option('include', {
    type: 'string',
    placeholder: 'dir',
    array: true,
    describe: 'Extra -isystem folder for the Metal type-check (fmt, doctest headers); repeatable',
  });
}

/** How the C++ suite is built: `test`, `verify`, `pr` and `check --build`. */
export function buildOptions<T>(y: Argv<T>) {
  return y
    .option('offline', {
      type: 'boolean',
      default: false,
      env: OFFLINE_ENV,
      describe: 'Build without network: dependencies from --deps-dir or system packages',
    })
    .option('deps-dir', {
      type: 'string',
      placeholder: 'dir',
      describe: 'Folder with local copies of dependencies (json, doctest, fmt, gguflib, metal_cpp); implies --offline',
    })
    .option('debug', { type: 'boolean', default: false, describe: 'Debug build instead of Release' })
    .option('sanitize', {
      type: 'string',
      choices: SANITIZERS,
      describe:
        "Build both trees as MLX's sanitizer job does (Debug, -DCMAKE_COMPILE_WARNING_AS_ERROR=ON, -DUSE_ASAN=ON or -DUSE_UBSAN=ON) and attribute each report to a case",
    })
    .option('cxx', {
      type: 'string',
      placeholder: 'compiler',
      describe:
        "C++ compiler for both trees (path or name on PATH; default: CMake's choice, or g++-11 with --upstream-ci)",
    })
    .check((argv) => {
      if (argv.cxx !== undefined && argv.cxx.trim() === '')
        throw new Error('--cxx needs a compiler, e.g. --cxx g++-11 or --cxx /usr/bin/clang++.');
      return true;
    });
}

/** `--upstream-ci`: build as MLX's Linux CI does (`test`, `verify`, `pr`). */
export function upstreamCiOption<T>(y: Argv<T>) {
  return y
    .option('upstream-ci', {
      type: 'boolean',
      default: false,
      describe: `Build as MLX's Linux CI does, the baseline too: Debug, ${UPSTREAM_LINUX_CI.cmakeArgs.join(' ')}, g++-11 when on PATH (or --cxx)`,
    })
    .check((argv) => {
      if (argv.upstreamCi && (argv as Record<string, unknown>)['sanitize'] !== undefined)
        throw new Error(
          "--sanitize and --upstream-ci are two of MLX's CI jobs: the sanitizer job is a static Debug build, the Linux job a shared one. Run them one at a time.",
        );
      return true;
    });
}

/** The Metal type-check as a readiness item of `verify` and `pr`. */
export function metalOptions<T>(y: Argv<T>) {
  return includeOption(
    jobsOption(
      y
        .option('metal-cpp', {
          type: 'string',
          placeholder: 'dir|zip',
          env: METAL_CPP_ENV,
          describe: "Apple's metal-cpp 26 (folder or zip) for the Metal type-check; makes that check required",
        })
        .option('require-metal', {
          type: 'boolean',
          default: false,
          describe: 'Fail when the Metal type-check cannot run (tools or metal-cpp missing)',
        }),
    ),
  );
}
