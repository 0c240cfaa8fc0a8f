import { z } from 'zod';

import { UserError } from '../core/errors.js';
import { parseJsonFile } from '../core/json.js';
import { renderString, type Variables } from '../series/render.js';

/** The file in the project that lists the mutants. */
export const MUTANTS_FILE = 'mutants.json';

const MutantSchema = z
  .object({
    name: z.string().min(1).describe('Short name, unique in the file.'),
    file: z.string().min(1).describe('Checkout path of the file to edit; may use template variables.'),
    find: z.string().min(1).describe('Text that occurs exactly once in the file; may use template variables.'),
    replace: z.string().describe('What replaces it; may use template variables.'),
    why: z.string().min(1).describe('What behaviour the tests must pin for this mutant to die.'),
  })
  .strict();

export const MutantsSchema = z
  .object({
    $schema: z.string().optional(),
    mutants: z.array(MutantSchema).min(1),
  })
  .strict();

export type MutantSpec = z.infer<typeof MutantSchema>;

/** A mutant with its variables rendered. */
export interface Mutant {
  name: string;
  file: string;
  find: string;
  replace: string;
  why: string;
}

/** Parses mutants.json and renders every field with the template variables. */
export function parseMutants(text: string, file: string, variables: Variables): Mutant[] {
  const raw = parseJsonFile(text, file);
  const parsed = MutantsSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new UserError('CONFIG_INVALID', `${file} is invalid:\n  ${problems.join('\n  ')}`, {
      hint: 'Each mutant needs name, file, find, replace and why (README: "Mutants").',
    });
  }
  const seen = new Set<string>();
  return parsed.data.mutants.map((m) => {
    if (seen.has(m.name))
      throw new UserError('CONFIG_INVALID', `${file}: two mutants are named "${m.name}".`, {
        hint: 'Give every mutant its own name.',
      });
    seen.add(m.name);
    const where = `${file} (mutant "${m.name}")`;
    return {
      name: m.name,
      file: renderString(m.file, variables, where),
      find: renderString(m.find, variables, where),
      replace: renderString(m.replace, variables, where),
      why: m.why,
    };
  });
}

/** The mutated text, or why the mutant no longer fits the source. */
export function mutate(source: string, mutant: Mutant): { text: string } | { problem: string } {
  const first = source.indexOf(mutant.find);
  if (first < 0) return { problem: `its text is no longer in ${mutant.file}` };
  if (source.indexOf(mutant.find, first + 1) >= 0)
    return { problem: `its text occurs more than once in ${mutant.file}: make "find" longer` };
  if (mutant.find === mutant.replace) return { problem: 'its replacement equals its text' };
  return { text: source.slice(0, first) + mutant.replace + source.slice(first + mutant.find.length) };
}
