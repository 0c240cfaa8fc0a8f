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
 * Whether a run builds and runs the twin, and why (null: it does not).
 * `--metal-twin` runs it, and is refused where the twin cannot run.
 * Otherwise, with `twinWhenTestsMatch`, a `--tests` filter that matches a
 * case of the Metal-only test files in `checkout` runs it where it can.
 */
export async function chooseTwin(
  ctx: Context,
  checkout: string,
  spec: BuildSpec,
  options: { metalTwin?: boolean | undefined; twinWhenTestsMatch?: boolean | undefined; tests?: string | undefined },
): Promise<TwinChoice | null> {
  if (options.metalTwin) {
    await verifyTwinPossible(ctx, spec);
    return 'metal-twin';
  }
  if (!options.twinWhenTestsMatch || options.tests === undefined) return null;
  return (await twinForFilter(ctx, checkout, spec, options.tests)) ? 'tests' : null;
}

/**
 * True when `filter` matches a case of the Metal-only test files and the twin
 * can run here. When it matches one, one line says whether the twin runs.
 */
async function twinForFilter(ctx: Context, checkout: string, spec: BuildSpec, filter: string): Promise<boolean> {
  const metal = seriesRoles(ctx.config).metal;
  if (metal === null) return false;
  const matched = await metalCasesMatching(checkout, metal.tests, filter);
  if (matched === 0) return false;
  const found = `Metal twin: the filter matches ${matched} Metal-only case(s)`;
  try {
    await verifyTwinPossible(ctx, spec);
  } catch (error) {
    if (!isUserError(error)) throw error;
    ctx.log.info(`${found}, but the twin cannot run here: ${error.message.split('\n')[0] ?? ''}`);
    return false;
  }
  ctx.log.info(`${found}; running them on the host twin (--no-metal-twin leaves it out)`);
  return true;
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
