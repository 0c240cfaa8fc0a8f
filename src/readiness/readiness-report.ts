import { isUserError } from '../core/errors.js';
import { itemsPass, type ReportItem } from '../core/report-items.js';
import type { Context } from '../series/context.js';
import { runChecks, type ReadinessItemsOptions } from './registry.js';
import { readinessKey, readReadiness, saveReadiness, type ReadinessKey, type ReusedChecks } from './saved-readiness.js';
import { skippedItems } from './skip.js';

export type { ReadinessItemsOptions } from './registry.js';
export type { ReusedChecks } from './saved-readiness.js';

export interface VerifyOutcome {
  ready: boolean;
  checks: ReportItem[];
  /** Check ids left out with `--skip`. */
  skipped: string[];
  /** Where the checks come from when a saved passing run for the same inputs stood in for them; null when they ran. */
  reused: ReusedChecks | null;
}

/** Who runs the checks, and whether a saved passing run for exactly the same inputs may stand in for them. */
export interface ReadinessRun {
  command: 'verify' | 'pr';
  reuse?: boolean | undefined;
}

/**
 * Every check an upstream PR must pass, in the registry's order, less the
 * ones left out; ready when every required one passes. A passing run is saved
 * with everything the checks read; with `reuse`, a run saved for exactly the
 * same inputs is the result and no check runs.
 */
export async function readinessItems(
  ctx: Context,
  options: ReadinessItemsOptions,
  run: ReadinessRun = { command: 'verify' },
): Promise<VerifyOutcome> {
  const key = await keyOrNull(ctx, options);
  if (run.reuse && key !== null) {
    const saved = await readReadiness(ctx, key);
    if (saved !== null)
      return {
        ready: true,
        checks: saved.checks,
        skipped: saved.skipped,
        reused: { at: saved.at, command: saved.command, inputs: key.name },
      };
  }
  const skipped = skippedItems(options.skip ?? []);
  const checks = await runChecks(ctx, options, skipped);
  const ready = itemsPass(checks);
  if (ready) await saveReadiness(ctx, options, key, { command: run.command, checks, skipped });
  return { ready, checks, skipped, reused: null };
}

/** The inputs of this run; null when there is no checkout holding the current series to key a result on. */
async function keyOrNull(ctx: Context, options: ReadinessItemsOptions): Promise<ReadinessKey | null> {
  try {
    return await readinessKey(ctx, options);
  } catch (error) {
    if (isUserError(error)) return null;
    throw error;
  }
}
