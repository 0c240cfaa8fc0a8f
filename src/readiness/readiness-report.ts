import { itemsPass, type ReportItem } from '../core/report-items.js';
import type { Context } from '../series/context.js';
import { runChecks, type ReadinessItemsOptions } from './registry.js';
import { skippedItems } from './skip.js';

export type { ReadinessItemsOptions } from './registry.js';

export interface VerifyOutcome {
  ready: boolean;
  checks: ReportItem[];
  /** Check ids left out with `--skip`. */
  skipped: string[];
}

/** Every check an upstream PR must pass, in the registry's order, less the ones left out; ready when every required one passes. */
export async function readinessItems(ctx: Context, options: ReadinessItemsOptions): Promise<VerifyOutcome> {
  const skipped = skippedItems(options.skip ?? []);
  const checks = await runChecks(ctx, options, skipped);
  return { ready: itemsPass(checks), checks, skipped };
}
