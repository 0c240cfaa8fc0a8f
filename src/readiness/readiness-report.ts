import { itemsPass, type ReportItem } from '../core/report-items.js';
import { isUserError } from '../core/errors.js';
import { policyItems } from './policy.js';
import { groupRuns, skippedItems } from './skip.js';
import type { Context } from '../series/context.js';
import { docsItem } from './docs-build.js';
import { FORMAT_CHECKS, formatReportItems } from './format-versions.js';
import { runFormatting } from './formatting.js';
import { typeCheckPr } from './metal-lane.js';
import { readPolicyFiles } from './policy-files.js';
import type { SuiteOptions } from '../build/suite.js';
import { buildItems } from './build-items.js';
import { NO_METAL_ROLE, seriesRoles } from '../series/config.js';

export interface ReadinessItemsOptions extends SuiteOptions {
  metalCpp?: string | undefined;
  jobs?: number | undefined;
  include?: string[] | undefined;
  /** Make the Metal type-check required even when its tools are missing. */
  requireMetal?: boolean | undefined;
  /** Groups or check ids to leave out (`--skip`). */
  skip?: string[] | undefined;
  /** Which mutants the mutant check runs (`--mutants`): mutants.json's, the generated ones, or both. */
  mutants?: 'listed' | 'generated' | 'all' | undefined;
}

export interface VerifyOutcome {
  ready: boolean;
  checks: ReportItem[];
  /** Check ids left out with `--skip`. */
  skipped: string[];
}

/** A check that could not run: the reason and its fix, from the error that stopped it. */
function notChecked(id: string, title: string, error: unknown, required: boolean): ReportItem {
  if (!isUserError(error)) throw error;
  return {
    id,
    title,
    status: 'not-checked',
    detail: error.message,
    ...(error.hint ? { fix: error.hint } : {}),
    required,
  };
}

async function formatStep(ctx: Context): Promise<ReportItem[]> {
  try {
    return formatReportItems((await runFormatting(ctx)).report);
  } catch (error) {
    return [
      notChecked(FORMAT_CHECKS.cpp.id, FORMAT_CHECKS.cpp.title, error, true),
      notChecked(FORMAT_CHECKS.cmake.id, FORMAT_CHECKS.cmake.title, error, true),
    ];
  }
}

/**
 * The Metal type-check is required once it runs, or when the user asks for
 * it (--metal-cpp or --require-metal). When its tools are missing and nobody
 * asked, it is reported as not checked without failing verify: the lane
 * needs clang 19 and metal-cpp, which a Linux-only contributor may not have.
 */
async function metalStep(ctx: Context, options: ReadinessItemsOptions): Promise<ReportItem> {
  const title = 'Metal type-check (check-metal)';
  const asked = options.metalCpp !== undefined || options.requireMetal === true;
  if (seriesRoles(ctx.config).metal === null)
    return { id: 'metal-typecheck', title, status: 'not-checked', required: false, detail: NO_METAL_ROLE };
  try {
    const lane = await typeCheckPr(ctx, {
      metalCpp: options.metalCpp,
      jobs: options.jobs,
      includes: options.include ?? [],
    });
    const summary = lane.summary.lines[lane.summary.lines.length - 1] ?? '';
    if (lane.summary.ok)
      return {
        id: 'metal-typecheck',
        title,
        status: 'pass',
        detail: `${lane.outcomes.map((o) => o.label).join(', ')} type-check (${lane.clang.command} ${lane.clang.version}, libc++ ${lane.clang.libcxx})`,
        required: true,
      };
    const failed = lane.outcomes
      .filter((o) => !o.good)
      .map((o) => `${o.label}: ${o.errors[0] ?? `exit ${o.exitCode}`}`);
    return {
      id: 'metal-typecheck',
      title,
      status: 'fail',
      detail: `${failed.join('; ')} (${summary})`,
      fix: 'mlx-storage-pr check-metal  (full errors; logs in the workdir)',
      required: true,
    };
  } catch (error) {
    return notChecked('metal-typecheck', title, error, asked);
  }
}

/** Every check an upstream PR must pass, in order, less the ones left out; ready when every required one passes. */
export async function readinessItems(ctx: Context, options: ReadinessItemsOptions): Promise<VerifyOutcome> {
  const skipped = skippedItems(options.skip ?? []);
  const checks: ReportItem[] = [
    ...(groupRuns('format', skipped) ? await formatStep(ctx) : []),
    ...(groupRuns('metal-typecheck', skipped) ? [await metalStep(ctx, options)] : []),
    ...(groupRuns('docs', skipped) ? [await docsItem(ctx, ctx.env)] : []),
    ...(groupRuns('pr-text', skipped) ? policyItems(await readPolicyFiles(ctx.projectRoot)) : []),
    ...(groupRuns('build', skipped) ? await buildItems(ctx, options, skipped) : []),
  ].filter((c) => !skipped.includes(c.id));
  return { ready: itemsPass(checks), checks, skipped };
}
