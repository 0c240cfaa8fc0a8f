import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

import type { CheckResult } from '../core/checks.js';
import type { Context } from '../series/context.js';

/**
 * A check's result as saved for exactly `inputs` (a JSON text of what the
 * result depends on), or null. A saved result that is missing, unreadable or
 * not JSON is no saved result: the check runs again.
 */
export async function readSavedCheck(file: string, inputs: string): Promise<CheckResult | null> {
  const saved = await readFile(file, 'utf8')
    .then((t) => JSON.parse(t) as { inputs: string; check: CheckResult })
    .catch(() => null);
  return saved?.inputs === inputs ? saved.check : null;
}

/** Saves a check's result for `inputs`. Not saving only costs the next run the work again. */
export async function saveCheck(ctx: Context, file: string, inputs: string, check: CheckResult): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true })
    .then(() => writeFile(file, JSON.stringify({ inputs, check })))
    .catch((error: unknown) => ctx.log.debug(`could not save ${file}: ${(error as Error).message}`));
}
