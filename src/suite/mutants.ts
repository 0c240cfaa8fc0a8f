import { z } from 'zod';

import { UserError } from '../core/errors.js';
import { parseJsonFile } from '../core/json.js';
import { renderDeclared, type Variables } from '../series/render.js';

/** The file in the project that lists the mutants. */
export const MUTANTS_FILE = 'mutants.json';

const MutantSchema = z
  .object({
    name: z.string().min(1).describe('Short name, unique in the file.'),
    file: z.string().min(1).describe('Checkout path of the file to edit; may use template variables.'),
    find: z.string().min(1).describe('Text that occurs exactly once in the file; may use template variables.'),
    replace: z.string().describe('What replaces it; may use template variables.'),
    why: z.string().min(1).describe('What behaviour the tests must pin for this mutant to die.'),
    judge: z
      .union([
        z
          .literal('twin')
          .describe("The Metal-only cases on the host twin (on a Mac: on Metal); needs the config's Metal role."),
        z
          .object({ tests: z.string().min(1).describe('A doctest test-case filter, e.g. "test my op*".') })
          .strict()
          .describe('The suite cases that match this filter.'),
      ])
      .optional()
      .describe('Which cases must kill the mutant. Default: the cases of the test files the series changes.'),
  })
  .strict();

export const MutantsSchema = z
  .object({
    $schema: z.string().optional(),
    mutants: z.array(MutantSchema).describe('Empty: the mutant check does not apply to the series.'),
  })
  .strict();

export type MutantSpec = z.infer<typeof MutantSchema>;

/** Which cases judge a mutant: the Metal twin, a doctest filter, or the cases of the series' own test files. */
export type Judge = { kind: 'twin' } | { kind: 'tests'; filter: string } | { kind: 'series-tests' };

/** A mutant with its variables rendered. */
export interface Mutant {
  name: string;
  file: string;
  find: string;
  replace: string;
  why: string;
  judge: Judge;
}

/** Parses mutants.json and renders every field with the template variables. */
export function parseMutants(text: string, file: string, variables: Variables): Mutant[] {
  const raw = parseJsonFile(text, file);
  const parsed = MutantsSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
    throw new UserError('CONFIG_INVALID', `${file} is invalid:\n  ${problems.join('\n  ')}`, {
      hint: 'Each mutant needs name, file, find, replace and why, and may name its judge (docs/metal.md, "Mutants").',
    });
  }
  const seen = new Set<string>();
  return parsed.data.mutants.map((m) => {
    if (seen.has(m.name))
      throw new UserError('CONFIG_INVALID', `${file}: two mutants are named "${m.name}".`, {
        hint: 'Give every mutant its own name.',
      });
    seen.add(m.name);
    return {
      name: m.name,
      file: renderDeclared(m.file, variables),
      find: renderDeclared(m.find, variables),
      replace: renderDeclared(m.replace, variables),
      why: m.why,
      judge:
        m.judge === undefined
          ? { kind: 'series-tests' }
          : m.judge === 'twin'
            ? { kind: 'twin' }
            : { kind: 'tests', filter: renderDeclared(m.judge.tests, variables) },
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
