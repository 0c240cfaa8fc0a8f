import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { z } from 'zod';

import { makeMarkedFolder, readJsonFile } from '../adapters/files.js';
import type { ReportItem } from '../core/report-items.js';
import type { Context } from '../series/context.js';

/**
 * Results kept in the workdir for the next run (the baseline's test run, the
 * last `test` run, verify's checks that build, a passing run of all verify's
 * checks): each file holds the result
 * and `inputs`, a JSON text of everything the result depends on. One format,
 * one reader.
 */
const savedSchema = <T>(result: z.ZodType<T, z.ZodTypeDef, unknown>) => z.object({ inputs: z.string(), result });

/**
 * The result saved for exactly `inputs`, or null. A saved result that is
 * missing, unreadable, not JSON, not of `result`'s shape or for other inputs
 * is no saved result: the work runs again.
 */
export async function readSaved<T>(
  file: string,
  inputs: string,
  result: z.ZodType<T, z.ZodTypeDef, unknown>,
): Promise<T | null> {
  const saved = await readJsonFile(file, savedSchema(result));
  return saved?.inputs === inputs ? (saved.result as T) : null;
}

/** The text of a saved result (see `readSaved`). */
export function savedText(inputs: string, result: unknown): string {
  return JSON.stringify({ inputs, result });
}

const ReportItemSchema: z.ZodType<ReportItem, z.ZodTypeDef, unknown> = z
  .object({
    id: z.string(),
    title: z.string(),
    status: z.enum(['pass', 'fail', 'warn', 'not-checked']),
    detail: z.string(),
    fix: z.string().optional(),
    required: z.boolean(),
  })
  .transform(({ fix, ...rest }) => (fix === undefined ? rest : { ...rest, fix }));

/** A check's result as saved for exactly `inputs`, or null (see `readSaved`). */
export function readSavedItem(file: string, inputs: string): Promise<ReportItem | null> {
  return readSaved(file, inputs, ReportItemSchema);
}

/** Saves a check's result for `inputs`. Not saving only costs the next run the work again. */
export async function savePassedItem(ctx: Context, file: string, inputs: string, check: ReportItem): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true })
    .then(() => writeFile(file, savedText(inputs, check)))
    .catch((error: unknown) => ctx.log.debug(`could not save ${file}: ${(error as Error).message}`));
}

/** A passing run of verify's checks, as `verify` or `pr` ran them, for `pr` to reuse. */
export interface SavedChecks {
  /** When the checks finished (ISO 8601). */
  at: string;
  /** The command that ran them. */
  command: 'verify' | 'pr';
  checks: ReportItem[];
  /** Check ids left out with `--skip`. */
  skipped: string[];
}

const SavedChecksSchema: z.ZodType<SavedChecks, z.ZodTypeDef, unknown> = z.object({
  at: z.string(),
  command: z.enum(['verify', 'pr']),
  checks: z.array(ReportItemSchema),
  skipped: z.array(z.string()),
});

/** verify's checks as saved for exactly `inputs`, or null (see `readSaved`). */
export function readSavedChecks(file: string, inputs: string): Promise<SavedChecks | null> {
  return readSaved(file, inputs, SavedChecksSchema);
}

/**
 * Saves a run of verify's checks for `inputs` in a folder the tool marks as its
 * own, written beside the file first and then moved in, so a reader never
 * sees half of it. Not saving only costs the next run the checks again.
 */
export async function saveChecks(ctx: Context, file: string, inputs: string, result: SavedChecks): Promise<void> {
  const draft = `${file}.${process.pid}`;
  await makeMarkedFolder(path.dirname(file))
    .then(() => writeFile(draft, savedText(inputs, result)))
    .then(() => rename(draft, file))
    .catch(async (error: unknown) => {
      await rm(draft, { force: true }).catch(() => undefined);
      ctx.log.debug(`could not save ${file}: ${(error as Error).message}`);
    });
}
