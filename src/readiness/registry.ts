/**
 * The readiness checks, in report order, each with its id, group, title,
 * whether it is required, and how it runs: the checks `verify` reports (and
 * `pr` runs before it pushes), then the machine checks `doctor` runs for each
 * command. Adding or deleting a check is one entry here.
 */
import type { Env } from '../adapters/env.js';
import type { Logger } from '../adapters/log.js';
import { MUTANTS_TITLE, type MutantSelection } from '../suite/mutants-run.js';
import { probeOffline } from '../suite/offline-deps.js';
import type { SuiteOptions, TestData } from '../suite/suite.js';
import { notCheckedItem, type ReportItem } from '../core/report-items.js';
import type { Context } from '../series/context.js';
import {
  linuxBuild,
  mutantsCheck,
  sanitizerItem,
  twinItem,
  withoutImplementation,
  type BuildItemOptions,
} from './build-items.js';
import { docsItem } from './docs-build.js';
import {
  inspectBlas,
  inspectCcache,
  inspectCmake,
  inspectCompiler,
  inspectDisk,
  inspectNinja,
  inspectOffline,
  inspectSanitizers,
  inspectTwinTools,
  inspectUpstreamCompiler,
  inspectXcode,
} from '../suite/build-tools.js';
import { formatReportItem } from './format-versions.js';
import { DEFAULT_CMAKE_FORMAT, runFormatting, type FormatRun } from './formatting.js';
import { inspectClangFormat, inspectCMakeFormat, inspectGit, inspectSphinx } from './machine.js';
import { metalTypeCheckItem } from './metal-lane.js';
import { CLANG_TITLE, inspectMetalCpp, LIBCXX_TITLE, METAL_CPP_TITLE, metalToolchainItems } from './metal-toolchain.js';
import { readPolicyFiles } from './policy-files.js';
import { policyItems } from './policy.js';

export interface ReadinessItemsOptions extends SuiteOptions {
  metalCpp?: string | undefined;
  jobs?: number | undefined;
  include?: string[] | undefined;
  /** Make the Metal type-check required even when its tools are missing. */
  requireMetal?: boolean | undefined;
  /** Groups or check ids to leave out (`--skip`). */
  skip?: string[] | undefined;
  /** Which mutants the mutant check runs (`--mutants`): mutants.json's, the generated ones, or both. */
  mutants?: MutantSelection | undefined;
}

/** A check's id, title and whether it is required, as declared here. */
export type CheckBase = Pick<ReportItem, 'id' | 'title' | 'required'>;

/** What a check runs with: the work several checks read (one formatting run, one Linux build) runs once per verify. */
export interface CheckRun {
  ctx: Context;
  options: ReadinessItemsOptions;
  once: Once;
  /** The item an earlier check of this run reported; null when it was left out. */
  reported(id: string): ReportItem | null;
}

export interface ReadinessCheck {
  id: string;
  /** The `--skip` group that leaves it out along with the rest of the group. */
  group: string;
  /** As reported (the sanitizer check also names the sanitizer it ran). */
  title: string;
  /** A failure fails verify; a check that does not apply, or whose tools nobody asked for, reports itself as not required. */
  required: boolean;
  /** Listed only when this holds (the sanitizer check: only with --sanitize). */
  enabled?: (options: ReadinessItemsOptions) => boolean;
  run: (run: CheckRun, check: CheckBase) => Promise<ReportItem>;
}

/** One formatting run for both formatting checks; a run that cannot start leaves both not checked. */
const formatCheck =
  (tool: 'clang-format' | 'cmake-format') =>
  async (r: CheckRun, check: CheckBase): Promise<ReportItem> => {
    try {
      const run = await r.once<FormatRun>('format', () => runFormatting(r.ctx));
      return formatReportItem(run.report, tool, check);
    } catch (error) {
      return notCheckedItem(check, error);
    }
  };

/** The three PR text checks read pr/ once. */
async function policyCheck(r: CheckRun, check: CheckBase): Promise<ReportItem> {
  const items = await r.once('pr-text', async () => policyItems(await readPolicyFiles(r.ctx.projectRoot)));
  const item = items.find((i) => i.id === check.id);
  if (item === undefined) throw new Error(`the PR text checks report no ${check.id}`);
  return item;
}

/** The build checks build as they do without --sanitize; the sanitizer check adds its own build. */
function plain(options: ReadinessItemsOptions): BuildItemOptions {
  const { sanitize: _sanitize, ...rest } = options;
  return rest;
}

const LINUX_BUILD: CheckBase = {
  id: 'linux-build',
  title: 'Linux build and test suite against the baseline',
  required: true,
};

/** The Linux build and suite the other build checks start from; null data when it could not run. */
const suite = (r: CheckRun): Promise<{ check: ReportItem; data: TestData | null }> =>
  r.once('linux-build', () => linuxBuild(r.ctx, plain(r.options), LINUX_BUILD));

export const READINESS_CHECKS: readonly ReadinessCheck[] = [
  {
    id: 'format-cpp',
    group: 'format',
    title: 'C++ formatting (clang-format)',
    required: true,
    run: formatCheck('clang-format'),
  },
  {
    id: 'format-cmake',
    group: 'format',
    title: 'CMake formatting (cmake-format)',
    required: true,
    run: formatCheck('cmake-format'),
  },
  {
    id: 'metal-typecheck',
    group: 'metal-typecheck',
    title: 'Metal type-check (check-metal)',
    required: true,
    run: (r, check) => metalTypeCheckItem(r.ctx, r.options, check),
  },
  { id: 'docs', group: 'docs', title: 'Docs build (Sphinx)', required: true, run: (r) => docsItem(r.ctx, r.ctx.env) },
  { id: 'pr-files', group: 'pr-text', title: 'PR text files present', required: true, run: policyCheck },
  { id: 'pr-placeholders', group: 'pr-text', title: 'Text written by you', required: true, run: policyCheck },
  { id: 'pr-ai-disclosure', group: 'pr-text', title: 'AI use disclosure', required: true, run: policyCheck },
  { ...LINUX_BUILD, group: 'build', run: async (r) => (await suite(r)).check },
  {
    id: 'tests-fail-without-implementation',
    group: 'build',
    title: 'New or changed tests fail without the implementation',
    required: true,
    run: async (r, check) => withoutImplementation(r.ctx, plain(r.options), (await suite(r)).data, check),
  },
  {
    id: 'metal-twin',
    group: 'build',
    title: 'Metal-only cases on the host twin (not a Metal run)',
    required: true,
    run: async (r, check) => twinItem(r.ctx, plain(r.options), (await suite(r)).data, check),
  },
  {
    id: 'mutants',
    group: 'build',
    title: MUTANTS_TITLE,
    required: true,
    // Mutants are judged by passing cases: a Linux build with new failures blocks them, as a failed twin does.
    run: async (r, check) => {
      const build = await suite(r);
      const full = build.check.status === 'fail' ? null : build.data;
      return mutantsCheck(r.ctx, plain(r.options), full, r.reported('metal-twin'), check);
    },
  },
  {
    id: 'sanitizer',
    group: 'build',
    title: 'Suite and Metal twin under a sanitizer (--sanitize)',
    required: true,
    enabled: (options) => options.sanitize !== undefined,
    run: (r) => sanitizerItem(r.ctx, plain(r.options), r.options.sanitize!),
  },
];

/** Runs the checks in order, less the ids in `skipped` and the ones not enabled. */
export async function runChecks(
  ctx: Context,
  options: ReadinessItemsOptions,
  skipped: readonly string[],
): Promise<ReportItem[]> {
  const items = new Map<string, ReportItem>();
  const run: CheckRun = {
    ctx,
    options,
    once: onceMap(),
    reported: (id) => items.get(id) ?? null,
  };
  for (const check of READINESS_CHECKS) {
    if (skipped.includes(check.id) || (check.enabled && !check.enabled(options))) continue;
    const item = await check.run(run, { id: check.id, title: check.title, required: check.required });
    items.set(item.id, item);
  }
  return [...items.values()];
}

/** Commands `doctor` can be asked about, in the order it reports them. */
export const DOCTOR_COMMANDS = ['apply', 'test', 'format', 'check-metal', 'verify'] as const;
export type DoctorCommand = (typeof DOCTOR_COMMANDS)[number];

/** How a command needs a machine check: required, or optional with what the command does without it. */
export interface MachineNeed {
  required: boolean;
  /** For an optional check whose detail does not say it: what the command does without it. */
  without?: string;
}

export type MachineNeeds = Partial<Record<DoctorCommand, MachineNeed>>;

/** Runs `work` the first time `key` is asked for in one run of the checks; later callers get the same promise. */
type Once = <T>(key: string, work: () => Promise<T>) => Promise<T>;

/** A fresh `Once` for one run of the checks. */
function onceMap(): Once {
  const shared = new Map<string, Promise<unknown>>();
  return <T>(key: string, work: () => Promise<T>) => {
    if (!shared.has(key)) shared.set(key, work());
    return shared.get(key) as Promise<T>;
  };
}

export interface MachineOptions {
  env: Env;
  platform: NodeJS.Platform;
  workdir: string;
  log: Logger;
  depsDir: string | undefined;
  generatedRoot: string;
  /** Where check-metal unpacks metal-cpp, and the archive the config pins. */
  metalCppCache: string;
  metalCppPin?: { url: string; sha256?: string | undefined } | undefined;
  /** Offline: nothing is downloaded, so no download host is probed. */
  offline: boolean;
  /** The metal-cpp folder or zip set once in the environment, an absolute path; null when unset. */
  metalCppGiven: string | null;
}

/** One check of the machine (`doctor`): what it checks, which commands need it, how it runs. */
export interface MachineCheck {
  /** The check's id, or a prefix ending in `-` for a family of checks (`offline-<dependency>`). */
  id: string;
  /** The readiness group (or `apply`) the tool serves. */
  group: string;
  /** As reported (on macOS some checks say what they find there). */
  title: string;
  /** The commands that need it; the offline dependencies are required only with --offline. */
  needs: MachineNeeds | ((options: { offline: boolean }) => MachineNeeds);
  /** Its items: none when it does not apply here (Xcode on Linux), several for a family. */
  run: (options: MachineOptions, once: Once) => Promise<ReportItem[]>;
}

const REQUIRED: MachineNeed = { required: true };
const optional = (without?: string): MachineNeed => ({ required: false, ...(without ? { without } : {}) });
const ALL_COMMANDS: MachineNeeds = Object.fromEntries(DOCTOR_COMMANDS.map((c) => [c, REQUIRED]));
const BUILD: MachineNeeds = { test: REQUIRED, verify: REQUIRED };
const BUILD_OPTIONAL = (without?: string): MachineNeeds => ({ test: optional(without), verify: optional(without) });
const METAL_OPTIONAL = optional('the Metal type-check is not checked (required with --metal-cpp or --require-metal)');

const one = (item: Promise<ReportItem>) => item.then((i) => [i]);
/** The item with this id from a probe that reports several (Xcode and Metal; clang and libc++). */
const pick = async (items: Promise<ReportItem[]>, id: string) => (await items).filter((i) => i.id === id);
const xcode = (o: MachineOptions, once: Once) => once('xcode', () => inspectXcode(o.env, o.platform));
const metalToolchain = (o: MachineOptions, once: Once) =>
  once('metal-toolchain', () => metalToolchainItems({ env: o.env, log: o.log, platform: o.platform }));

export const MACHINE_CHECKS: readonly MachineCheck[] = [
  { id: 'git', group: 'apply', title: 'git', needs: ALL_COMMANDS, run: (o) => one(inspectGit(o.env, o.platform)) },
  {
    id: 'cmake',
    group: 'build',
    title: 'CMake >= 3.25',
    needs: BUILD,
    run: (o) => one(inspectCmake(o.env, o.platform)),
  },
  {
    id: 'compiler',
    group: 'build',
    title: 'C++20 compiler',
    needs: BUILD,
    run: (o) => one(inspectCompiler(o.env, o.platform)),
  },
  {
    id: 'blas',
    group: 'build',
    title: 'BLAS/LAPACK headers and libraries',
    needs: BUILD,
    run: (o) => one(inspectBlas(o.env, o.platform)),
  },
  {
    id: 'xcode',
    group: 'build',
    title: 'Xcode command-line tools',
    needs: BUILD,
    run: (o, once) => pick(xcode(o, once), 'xcode'),
  },
  {
    id: 'metal',
    group: 'build',
    title: 'Metal shader compiler',
    needs: BUILD,
    run: (o, once) => pick(xcode(o, once), 'metal'),
  },
  { id: 'disk', group: 'build', title: 'Free disk', needs: BUILD, run: (o) => one(inspectDisk(o.workdir)) },
  {
    id: 'ninja',
    group: 'build',
    title: 'Ninja',
    needs: BUILD_OPTIONAL(),
    run: (o) => one(inspectNinja(o.env, o.platform)),
  },
  {
    id: 'ccache',
    group: 'build',
    title: 'ccache',
    needs: BUILD_OPTIONAL(),
    run: (o) => one(inspectCcache(o.env, o.platform)),
  },
  {
    id: 'gxx-11',
    group: 'build',
    title: "g++ 11 (MLX's Linux CI compiler)",
    needs: BUILD_OPTIONAL("test --upstream-ci builds with the default compiler, not MLX's g++ 11"),
    run: (o) => one(inspectUpstreamCompiler(o.env, o.platform)),
  },
  {
    id: 'sanitizers',
    group: 'build',
    title: 'Sanitizer runtimes (libasan, libubsan)',
    needs: BUILD_OPTIONAL('test --sanitize cannot run'),
    run: (o) => one(inspectSanitizers(o.env, o.platform)),
  },
  {
    id: 'twin',
    group: 'build',
    title: 'Metal twin tools (nm, objcopy)',
    needs: { test: optional('test --metal-twin cannot run'), verify: REQUIRED },
    run: (o) => one(inspectTwinTools(o.env, o.platform)),
  },
  {
    id: 'offline-',
    group: 'build',
    title: 'offline <dependency>',
    needs: ({ offline }) => (offline ? BUILD : BUILD_OPTIONAL('needed only for --offline')),
    run: (o) => Promise.resolve(inspectOffline(probeOffline(o.depsDir, o.generatedRoot, o.platform))),
  },
  {
    id: 'clang-format',
    group: 'format',
    title: 'clang-format',
    needs: { format: REQUIRED, verify: REQUIRED },
    run: () => one(inspectClangFormat()),
  },
  {
    id: 'cmake-format',
    group: 'format',
    title: `cmake-format ${DEFAULT_CMAKE_FORMAT}`,
    needs: { format: optional('CMake files are reported as not checked'), verify: REQUIRED },
    run: (o) => one(inspectCMakeFormat(o.env, o.log, o.platform)),
  },
  {
    id: 'sphinx',
    group: 'docs',
    title: 'Sphinx (sphinx-build)',
    needs: { verify: REQUIRED },
    run: (o) => one(inspectSphinx(o.env, o.log, o.platform)),
  },
  {
    id: 'metal-clang',
    group: 'metal-typecheck',
    title: CLANG_TITLE,
    needs: { 'check-metal': REQUIRED, verify: METAL_OPTIONAL },
    run: (o, once) => pick(metalToolchain(o, once), 'metal-clang'),
  },
  {
    id: 'metal-libcxx',
    group: 'metal-typecheck',
    title: LIBCXX_TITLE,
    needs: { 'check-metal': REQUIRED, verify: METAL_OPTIONAL },
    run: (o, once) => pick(metalToolchain(o, once), 'metal-libcxx'),
  },
  {
    id: 'metal-cpp',
    group: 'metal-typecheck',
    title: METAL_CPP_TITLE,
    needs: { 'check-metal': REQUIRED, verify: optional('the Metal type-check is not checked without --metal-cpp') },
    run: (o) =>
      one(
        inspectMetalCpp({
          cacheDir: o.metalCppCache,
          pin: o.metalCppPin,
          env: o.env,
          offline: o.offline,
          given: o.metalCppGiven,
        }),
      ),
  },
];

/** How each machine check is needed by `command`. */
export function machineNeeds(
  command: DoctorCommand,
  options: { offline: boolean },
): Array<{ check: MachineCheck; need: MachineNeed }> {
  return MACHINE_CHECKS.flatMap((check) => {
    const need = (typeof check.needs === 'function' ? check.needs(options) : check.needs)[command];
    return need ? [{ check, need }] : [];
  });
}

/** Runs the machine checks whose ids are in `wanted`, all at once; the items come in the registry's order. */
export async function runMachineChecks(wanted: ReadonlySet<string>, options: MachineOptions): Promise<ReportItem[]> {
  const once = onceMap();
  const items = await Promise.all(
    MACHINE_CHECKS.map((check) => (wanted.has(check.id) ? check.run(options, once) : Promise.resolve([]))),
  );
  return items.flat();
}
