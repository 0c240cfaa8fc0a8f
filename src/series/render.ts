import { UserError } from '../core/errors.js';

export type Variables = Readonly<Record<string, string>>;

/** A `{{name}}` placeholder; the name is group 1. */
export const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

/** Names of all `{{variable}}` placeholders in `text`, in order of first use. */
export function placeholdersIn(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1] as string))];
}

/**
 * Replaces every `{{name}}` in `text`. Strict: a name without a value, or a
 * stray `{{` / `}}` left after rendering, is an error that names the file.
 */
export function renderString(text: string, variables: Variables, file: string): string {
  const rendered = text.replace(PLACEHOLDER, (_match, name: string, offset: number) => {
    const value = Object.hasOwn(variables, name) ? variables[name] : undefined;
    if (value === undefined) {
      const line = text.slice(0, offset).split('\n').length;
      throw new UserError('TEMPLATE_VARIABLE', `${file}:${line}: unknown template variable "${name}".`, {
        hint: `Add "${name}" to "variables" in mlx-storage-pr.config.json, or fix the name. Known variables: ${Object.keys(variables).sort().join(', ')}.`,
        details: { file, line, variable: name },
      });
    }
    return value;
  });
  const stray = /\{\{|\}\}/.exec(rendered);
  if (stray) {
    const line = rendered.slice(0, stray.index).split('\n').length;
    throw new UserError(
      'TEMPLATE_SYNTAX',
      `${file}:${line}: malformed placeholder near "${rendered.slice(stray.index, stray.index + 20)}".`,
      {
        hint: 'Placeholders look like {{name}} with a name of letters, digits and underscores.',
        details: { file, line },
      },
    );
  }
  return rendered;
}
