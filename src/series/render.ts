import { closestName } from '../core/closest.js';
import { UserError } from '../core/errors.js';

export type Variables = Readonly<Record<string, string>>;

/**
 * A `{{name}}` placeholder, exactly: no spaces inside the braces. Whether it
 * is a placeholder also depends on the name being declared; every other `{{`
 * and `}}` is text (MLX's `{{0, 1}}`, Jinja's `{{ name }}`).
 */
export const PLACEHOLDER = /\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}/g;

/** Names of the declared `{{variable}}` placeholders in `text`, in order of first use. */
export function placeholdersIn(text: string, variables: Variables): string[] {
  return [
    ...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1] as string).filter((n) => Object.hasOwn(variables, n))),
  ];
}

/** Replaces each declared `{{name}}`; anything else stays as it is. */
export function renderDeclared(text: string, variables: Variables): string {
  return text.replace(PLACEHOLDER, (match, name: string) =>
    Object.hasOwn(variables, name) ? (variables[name] as string) : match,
  );
}

/** "; did you mean {{x}}?" for an undeclared name, or nothing when no variable is declared. */
function suggestion(name: string, variables: Variables): string {
  const near = closestName(name, Object.keys(variables));
  return near === null ? '' : ` (closest declared name: "${near}")`;
}

/**
 * Renders a template's text or file name. Every `{{identifier}}` in a
 * template is meant as a placeholder, so an undeclared one is an error that
 * names the closest declared name.
 */
export function renderTemplateText(text: string, variables: Variables, file: string): string {
  for (const match of text.matchAll(PLACEHOLDER)) {
    const name = match[1] as string;
    if (Object.hasOwn(variables, name)) continue;
    const line = text.slice(0, match.index).split('\n').length;
    throw new UserError(
      'TEMPLATE_VARIABLE',
      `${file}:${line}: unknown template variable "${name}"${suggestion(name, variables)}.`,
      {
        hint: `Declare "${name}" in "variables" (or "derived") of mlx-storage-pr.config.json, or fix the name.`,
        details: { file, line, variable: name, closest: closestName(name, Object.keys(variables)) },
      },
    );
  }
  return renderDeclared(text, variables);
}

/**
 * Renders a patch. Only declared names are placeholders: MLX code may hold
 * `{{identifier}}` of its own. An undeclared one on an added line may be a
 * typo, so it is reported as a warning (file, line, closest declared name).
 */
export function renderPatchText(
  text: string,
  variables: Variables,
  file: string,
): { text: string; warnings: string[] } {
  const warnings: string[] = [];
  text.split('\n').forEach((line, index) => {
    if (!line.startsWith('+') || line.startsWith('+++ ')) return;
    for (const match of line.matchAll(PLACEHOLDER)) {
      const name = match[1] as string;
      if (!Object.hasOwn(variables, name))
        warnings.push(
          `${file}:${index + 1}: "{{${name}}}" is not a declared variable, so it stays as text${suggestion(name, variables)}.`,
        );
    }
  });
  return { text: renderDeclared(text, variables), warnings };
}
