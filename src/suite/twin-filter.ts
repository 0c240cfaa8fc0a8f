import { readInside } from '../adapters/files.js';
import { caseNames, matchesDoctestFilter } from '../core/test-cases.js';
import { isUserError } from '../core/errors.js';
import { seriesRoles } from '../series/config.js';
import type { Context } from '../series/context.js';
import type { BuildSpec } from './cmake.js';
import { verifyTwinPossible } from './twin-run.js';

/** Why the twin runs: `--metal-twin`, or a `--tests` filter that matches Metal-only cases. */
export type TwinChoice = 'metal-twin' | 'tests';

/**
 * Whether the twin runs and why (`chosenBy`; null: it does not). `declined`:
 * the filter matches Metal-only cases, but the twin cannot run here (`why`).
 */
export interface TwinDecision {
  chosenBy: TwinChoice | null;
  declined: { matched: number; why: string; hint: string | undefined } | null;
}

/**
 * Whether a run builds and runs the twin, and why.
 * `--metal-twin` runs it, and is refused where the twin cannot run.
 * Otherwise, with `twinWhenTestsMatch`, a `--tests` filter that matches a
 * case of the Metal-only test files in `checkout` runs it where it can.
 */
export async function chooseTwin(
  ctx: Context,
  checkout: string,
  spec: BuildSpec,
  options: { metalTwin?: boolean | undefined; twinWhenTestsMatch?: boolean | undefined; tests?: string | undefined },
): Promise<TwinDecision> {
  if (options.metalTwin) {
    await verifyTwinPossible(ctx, spec);
    return { chosenBy: 'metal-twin', declined: null };
  }
  if (!options.twinWhenTestsMatch || options.tests === undefined) return { chosenBy: null, declined: null };
  return twinForFilter(ctx, checkout, spec, options.tests);
}

/**
 * The twin runs when `filter` matches a case of the Metal-only test files and
 * the twin can run here. When it matches one, one line says whether it runs.
 */
async function twinForFilter(ctx: Context, checkout: string, spec: BuildSpec, filter: string): Promise<TwinDecision> {
  const none = { chosenBy: null, declined: null };
  const metal = seriesRoles(ctx.config).metal;
  if (metal === null) return none;
  const matched = await metalCasesMatching(checkout, metal.tests, filter);
  if (matched === 0) return none;
  const found = `Metal twin: the filter matches ${matched} Metal-only case(s)`;
  try {
    await verifyTwinPossible(ctx, spec);
  } catch (error) {
    if (!isUserError(error)) throw error;
    const why = error.message.split('\n')[0] ?? '';
    ctx.log.info(`${found}, but the twin cannot run here: ${why}`);
    return { chosenBy: null, declined: { matched, why, hint: error.hint } };
  }
  ctx.log.info(`${found}; running them on the host twin (--no-metal-twin leaves it out)`);
  return { chosenBy: 'tests', declined: null };
}

/** How many cases of the test files `files` (in `checkout`, never through a link) `filter` matches. */
async function metalCasesMatching(checkout: string, files: readonly string[], filter: string): Promise<number> {
  let matched = 0;
  for (const file of files) {
    const found = await readInside(checkout, file);
    if (found.kind !== 'file') continue;
    matched += caseNames(found.bytes.toString('utf8')).filter((name) => matchesDoctestFilter(filter, name)).length;
  }
  return matched;
}
