/**
 * Every check `verify` reports (and `pr` runs before it pushes), in report
 * order: its id, the `--skip` group it belongs to, its title, whether a
 * failure fails verify, and how it runs. Adding or deleting a check is one
 * entry here.
 */
import { MUTANTS_TITLE } from '../build/mutants-run.js';
import type { SuiteOptions, TestData } from '../build/suite.js';
import { notCheckedItem, type ReportItem } from '../core/report-items.js';
import type { Context } from '../series/context.js';
import { linuxBuild, mutantsCheck, sanitizerItem, twinItem, withoutImplementation } from './build-items.js';
import { docsItem } from './docs-build.js';
import { formatReportItem } from './format-versions.js';
import { runFormatting, type FormatRun } from './formatting.js';
import { metalTypeCheckItem } from './metal-lane.js';
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
}

/** A check's id, title and whether it is required, as declared here. */
export type CheckBase = Pick<ReportItem, 'id' | 'title' | 'required'>;

/** What a check runs with: the work several checks read (one formatting run, one Linux build) runs once per verify. */
export interface CheckRun {
  ctx: Context;
  options: ReadinessItemsOptions;
  /** Runs `work` the first time `key` is asked for in this verify run; later checks get the same promise. */
  once<T>(key: string, work: () => Promise<T>): Promise<T>;
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
function plain(options: ReadinessItemsOptions): SuiteOptions {
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
    run: async (r, check) =>
      mutantsCheck(r.ctx, plain(r.options), (await suite(r)).data, r.reported('metal-twin'), check),
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
  const shared = new Map<string, Promise<unknown>>();
  const items = new Map<string, ReportItem>();
  const run: CheckRun = {
    ctx,
    options,
    once: <T>(key: string, work: () => Promise<T>) => {
      if (!shared.has(key)) shared.set(key, work());
      return shared.get(key) as Promise<T>;
    },
    reported: (id) => items.get(id) ?? null,
  };
  for (const check of READINESS_CHECKS) {
    if (skipped.includes(check.id) || (check.enabled && !check.enabled(options))) continue;
    const item = await check.run(run, { id: check.id, title: check.title, required: check.required });
    items.set(item.id, item);
  }
  return [...items.values()];
}
