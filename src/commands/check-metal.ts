import { ExitCode } from '../core/errors.js';
import { LANE_BLIND_SPOTS } from '../readiness/metal-flags.js';
import { typeCheckPr, typeCheckSelfTest, type LaneOptions, type LaneResult } from '../readiness/metal-lane.js';
import { loadContext } from '../series/context.js';
import { NO_METAL_ROLE, seriesRoles } from '../series/config.js';
import { environmentSettings, includeOption, jobsOption, METAL_CPP_ENV } from './options.js';
import { type CommandResult, defineCommand, type GlobalOptions, parseJobs } from './spec.js';

export const checkMetalCommand = defineCommand({
  name: 'check-metal',
  describe: "Type-check the PR's Metal-only C++ on any OS (clang >= 19 + libc++, Apple's metal-cpp 26, shim headers)",
  builder: (y) =>
    includeOption(
      jobsOption(
        y.option('metal-cpp', {
          type: 'string',
          env: METAL_CPP_ENV,
          describe:
            "Apple's metal-cpp 26: a folder with Metal/Metal.hpp or the zip (default: the archive MLX's CMake downloads, cached in the workdir)",
        }),
      ),
    )
      .option('self-test', {
        type: 'boolean',
        default: false,
        describe:
          "Prove the lane: all of MLX's mlx/backend/metal/*.cpp at the pinned commit must pass and shims/selftest/broken.cpp must fail",
      })
      .example('$0 check-metal --metal-cpp ~/Downloads/metal-cpp', 'type-check the PR TUs in the applied checkout')
      .example('$0 check-metal --self-test --jobs 2', 'check that the lane itself is sound')
      .epilog(
        "Runs `clang++ -std=c++20 -stdlib=libc++ -fsyntax-only -fblocks` with the flags MLX's CMake gives Metal TUs, metal-cpp and shims/include " +
          "(stand-ins for the Apple system headers metal-cpp includes) over the files of the series' Metal role (roles.metal in the config; without one the lane does not apply). " +
          'Needs clang >= 19 and libc++ >= 19 (Debian/Ubuntu: sudo apt-get install clang-19 libc++-19-dev libc++abi-19-dev; CLANGXX picks the compiler, and then only that one is used), ' +
          "and fmt/doctest headers (libfmt-dev, doctest-dev, or --include). On macOS Xcode's clang and the SDK headers are used instead of the shims.\n\n" +
          'Blind spots: uint64_t is unsigned long on Linux but unsigned long long on macOS, so overloads and format strings that clash on one platform only ' +
          'are not caught; there is no link step (undefined symbols, missing Objective-C classes or selectors); the target is x86_64 Linux, so ' +
          'availability of macOS 26-only APIs and Metal shading language are not checked. See shims/README.md.',
      ),
  run: (o) => checkMetal({ ...o, jobs: parseJobs(o.jobs) }),
});

interface CheckMetalOptions extends GlobalOptions {
  metalCpp?: string | undefined;
  jobs?: number | undefined;
  include?: string[] | undefined;
  selfTest?: boolean | undefined;
}

export interface CheckMetalData extends Omit<LaneResult, 'summary'> {
  command: 'check-metal';
  passed: number;
  failed: number;
  mlx: LaneResult['summary']['mlx'];
  blindSpots: string[];
  code?: 'CHECK_FAILED';
}

/** A series without a Metal role has nothing for the lane to type-check. */
export interface CheckMetalNotApplicable {
  command: 'check-metal';
  notApplicable: string;
}

async function checkMetal(
  options: CheckMetalOptions,
): Promise<CommandResult<CheckMetalData | CheckMetalNotApplicable>> {
  const ctx = await loadContext(options);
  if (!options.selfTest && seriesRoles(ctx.config).metal === null)
    return { data: { command: 'check-metal', notApplicable: NO_METAL_ROLE }, lines: [`check-metal: ${NO_METAL_ROLE}`] };
  // check-metal takes no --offline: the setting made once (MLX_STORAGE_PR_OFFLINE) keeps it from downloading metal-cpp.
  const lane: LaneOptions = {
    metalCpp: options.metalCpp,
    jobs: options.jobs,
    includes: options.include ?? [],
    offline: environmentSettings(ctx.env).offline,
  };
  const result = options.selfTest ? await typeCheckSelfTest(ctx, lane) : await typeCheckPr(ctx, lane);
  const { summary, ...rest } = result;
  const lines = [...summary.lines];
  if (result.hint) lines.push(`hint: ${result.hint}`);
  if (!summary.ok) lines.push(`Full compiler output: ${result.logDir}`);
  const data: CheckMetalData = {
    command: 'check-metal',
    ...rest,
    passed: summary.passed,
    failed: summary.failed,
    mlx: summary.mlx,
    blindSpots: LANE_BLIND_SPOTS,
    ...(summary.ok ? {} : { code: 'CHECK_FAILED' as const }),
  };
  return { data, lines, ...(summary.ok ? {} : { exitCode: ExitCode.failure }) };
}
