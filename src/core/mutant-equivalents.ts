/**
 * The checked-in list of generated mutants that no test can kill because
 * they behave exactly as the original: each entry names a mutant by its id
 * and mutated line, with the reason. Pure.
 */
import { z } from 'zod';

import { UserError } from './errors.js';
import { parseJsonFile } from './json.js';
import type { GeneratedMutant } from './mutant-operators.js';

/** The file in the project that lists the equivalent generated mutants. */
export const EQUIVALENTS_FILE = 'mutants-equivalent.json';

const EquivalentSchema = z
  .object({
    id: z.string().min(1).describe('The generated mutant id: file:line:column:operator[:variant].'),
    mutated: z.string().min(1).describe('The mutated line (trimmed), so that an entry for moved code is stale.'),
    reason: z.string().min(10).describe('Why the mutant behaves exactly as the original.'),
  })
  .strict();

export const EquivalentsSchema = z
  .object({ $schema: z.string().optional(), equivalent: z.array(EquivalentSchema) })
  .strict();

export type Equivalent = z.infer<typeof EquivalentSchema>;

export function parseEquivalents(text: string, file: string): Equivalent[] {
  const parsed = EquivalentsSchema.safeParse(parseJsonFile(text, file));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new UserError('CONFIG_INVALID', `${file} is invalid:\n  ${problems.join('\n  ')}`, {
      hint: 'Each entry needs id, mutated and a reason of at least 10 characters (docs/metal.md, "Generated mutants").',
    });
  }
  const seen = new Set<string>();
  for (const e of parsed.data.equivalent) {
    if (seen.has(e.id))
      throw new UserError('CONFIG_INVALID', `${file}: "${e.id}" is listed twice.`, {
        hint: 'Keep one entry per mutant.',
      });
    seen.add(e.id);
  }
  return parsed.data.equivalent;
}

/** Splits the entries into those that match a generated mutant (by id and mutated line) and stale ones. */
export function matchEquivalents(
  entries: readonly Equivalent[],
  mutants: readonly GeneratedMutant[],
): { equivalent: Map<string, Equivalent>; stale: Equivalent[] } {
  const byId = new Map(mutants.map((m) => [m.id, m]));
  const equivalent = new Map<string, Equivalent>();
  const stale: Equivalent[] = [];
  for (const e of entries) {
    const m = byId.get(e.id);
    if (m !== undefined && m.mutated.trim() === e.mutated.trim()) equivalent.set(e.id, e);
    else stale.push(e);
  }
  return { equivalent, stale };
}
