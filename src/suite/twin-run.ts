import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

import { seriesRoles } from '../series/config.js';

import { ifAbsent } from '../adapters/files.js';
import { PACKAGE_ROOT } from '../adapters/package-root.js';
import { classify, summarize, type ClassifiedCase, type Summary } from './baseline.js';
import { isUserError, UserError } from '../core/errors.js';
import {
  missingTwinCalls,
  parseWeakened,
  sharedLibraryBuild,
  TWIN_BINARY,
  TWIN_CANNOT_SHOW,
  TWIN_SHOWS,
  TWIN_TARGET,
  TWIN_WEAKENED,
  twinCmakeArgs,
  type WeakenedSymbol,
} from './twin.js';
import { buildTarget, logFiles, runDoctest, type BuildSpec } from './cmake.js';
import type { SoloCase } from './sanitize.js';
import { runSanitized } from './sanitize-run.js';
import type { Context } from '../series/context.js';
import { inspectTwinTools } from './build-tools.js';

/** twin/ in this package: the twin header (Metal/Metal.hpp) and the CMake module that builds the twin. */
export const TWIN_DIR = path.join(PACKAGE_ROOT, 'twin');

/**
 * The CMake arguments that let a build make the twin test executable. Every
 * Linux build gets them, so the twin shares the suite's build folder; they
 * add a target that only `test --metal-twin` builds. None on macOS, where the
 * Metal-only cases run for real.
 */
export function twinBuildArgs(ctx: Context): string[] {
  const metal = seriesRoles(ctx.config).metal;
  if (ctx.platform === 'darwin' || metal === null) return [];
  return twinCmakeArgs({
    cmakeModule: path.join(TWIN_DIR, 'metal-twin.cmake'),
    includeDir: TWIN_DIR,
    library: ctx.config.build.library,
    testsTarget: ctx.config.build.target,
    main: ctx.config.build.testMain,
    sources: metal.sources,
    testSources: metal.tests,
  });
}

/** A hash of the twin's own files, so that a result made with other twin files is not reused. */
export async function twinFilesHash(): Promise<string> {
  const files = (await readdir(TWIN_DIR, { recursive: true, withFileTypes: true }))
    .filter((e) => e.isFile())
    .map((e) => path.relative(TWIN_DIR, path.join(e.parentPath, e.name)))
    .sort();
  const hash = createHash('sha256');
  for (const file of files) hash.update(`\0${file}\0${await readFile(path.join(TWIN_DIR, file), 'utf8')}`);
  return hash.digest('hex');
}

/** The twin's build of a tree: same folder and CMake cache as the suite, its own target, binary and logs. */
export function twinSpec(suite: BuildSpec): BuildSpec {
  return {
    ...suite,
    target: TWIN_TARGET,
    testBinary: TWIN_BINARY,
    label: `${suite.label} (Metal twin)`,
    logName: 'twin',
  };
}

export interface TwinData {
  binary: string;
  logs: { build: string; test: string };
  buildSeconds: number;
  buildSteps: number;
  /** The stub's definitions that the PR's Metal sources replace in the twin's copy of the library. */
  weakened: WeakenedSymbol[];
  complete: boolean;
  crashes: string[];
  /** Under a sanitizer: each case run alone, with its reports. */
  alone: SoloCase[] | null;
  shows: string;
  cannotShow: string;
  summary: Summary;
  cases: Array<{
    name: string;
    classification: ClassifiedCase['classification'];
    status: string;
    failures: Array<{ file: string; line: number; message: string }>;
  }>;
}

/** Refuses a twin build where it cannot work or is not needed, before anything is built. */
export async function verifyTwinPossible(ctx: Context, spec: BuildSpec): Promise<void> {
  if (ctx.platform === 'darwin') {
    throw new UserError(
      'USAGE',
      'The Metal twin is for machines without Metal: on macOS `test` runs the Metal-only cases for real.',
      {
        hint: 'Run `mlx-storage-pr test` without --metal-twin.',
      },
    );
  }
  const cache = await ifAbsent(readFile(path.join(spec.buildDir, 'CMakeCache.txt'), 'utf8'), '');
  const args = spec.cmakeArgs.map((a) => a.replace(/^-D/, '')).join('\n');
  if (sharedLibraryBuild(`${cache}\n${args}`)) {
    throw new UserError(
      'USAGE',
      `The Metal twin links a copy of the static ${ctx.config.build.library} library with the stub's symbols made weak; this build makes shared libraries (--upstream-ci or -DBUILD_SHARED_LIBS=ON).`,
      { hint: 'Run the twin on the default static build: `mlx-storage-pr test --metal-twin` without --upstream-ci.' },
    );
  }
  // CMake keeps the last value given: a CMAKE_PROJECT_INCLUDE after the twin's replaces its module, and with it the target.
  const module = path.join(TWIN_DIR, 'metal-twin.cmake');
  const last = spec.cmakeArgs.filter((a) => /^-DCMAKE_PROJECT_INCLUDE(?::\w+)?=/.test(a)).at(-1);
  if (last !== undefined && last.slice(last.indexOf('=') + 1) !== module)
    throw new UserError(
      'USAGE',
      `${last}: the Metal twin loads its CMake module (${module}) through CMAKE_PROJECT_INCLUDE, and this argument would replace it.`,
      {
        hint: 'Give your file as -DCMAKE_PROJECT_TOP_LEVEL_INCLUDES=<file> or -DCMAKE_PROJECT_<project>_INCLUDE=<file> instead, or run the twin without it.',
      },
    );
  const tools = await inspectTwinTools(ctx.env, ctx.platform);
  if (tools.status !== 'pass')
    throw new UserError('TOOL_MISSING', `${tools.title}: ${tools.detail}.`, { hint: tools.fix ?? 'Install binutils.' });
}

/**
 * Builds the twin test executable in the suite's build folder and runs it;
 * every case is a new case. The caller has checked verifyTwinPossible.
 */
export async function runTwin(
  ctx: Context,
  suite: BuildSpec,
  options: { filter?: string | undefined; sanitized?: boolean | undefined },
): Promise<TwinData> {
  const spec = twinSpec(suite);
  let built: { seconds: number; steps: number };
  try {
    built = await buildTarget(spec, ctx.log, ctx.log.stream);
  } catch (error) {
    throw explainTwinBuildError(error);
  }
  const weakened = parseWeakened(await ifAbsent(readFile(path.join(suite.buildDir, TWIN_WEAKENED), 'utf8'), ''));
  // Under a sanitizer each case runs alone, so that each report is tied to its case.
  const sanitized = options.sanitized
    ? await runSanitized(spec, ctx.log, { filter: options.filter, known: new Set(), where: 'twin' })
    : null;
  const run = sanitized?.run ?? (await runDoctest(spec, ctx.log, { filter: options.filter }));
  // The Metal-only test file is new in the PR: against the empty baseline every case is a new test.
  const classified = classify(run.cases, []);
  const logs = logFiles(suite.buildDir, spec.logName);
  return {
    binary: path.join(suite.buildDir, TWIN_BINARY),
    logs: { build: logs.build, test: logs.test },
    buildSeconds: built.seconds,
    buildSteps: built.steps,
    weakened,
    complete: run.complete,
    crashes: run.crashes,
    alone: sanitized?.alone ?? null,
    shows: TWIN_SHOWS,
    cannotShow: TWIN_CANNOT_SHOW,
    summary: summarize(classified),
    cases: classified.map((c) => ({
      name: c.name,
      classification: c.classification,
      status: c.patched.status,
      failures: c.patched.failures,
    })),
  };
}

/** A twin build error that comes from a metal-cpp call the twin header lacks names that call. */
export function explainTwinBuildError(error: unknown): unknown {
  if (!isUserError(error) || error.code !== 'BUILD_FAILED') return error;
  const errors = (error.details as { errors?: string[] } | undefined)?.errors ?? [];
  const calls = missingTwinCalls(errors);
  if (calls.length === 0) return error;
  return new UserError(
    'BUILD_FAILED',
    `The PR's Metal code calls ${calls.join(', ')}, which the Metal twin (twin/Metal/Metal.hpp) does not stand in for:\n${errors
      .slice(0, 5)
      .map((l) => `  ${l}`)
      .join('\n')}`,
    {
      hint: `check-metal still checks ${calls.join(', ')} against the real metal-cpp. Add ${calls.length > 1 ? 'them' : 'it'} to twin/Metal/Metal.hpp only if MLX's CPU allocator layout makes a faithful stand-in (see the comment at the top of that file); otherwise these cases can only run on a Mac.`,
      details: { ...(error.details as object), missing: calls },
    },
  );
}
