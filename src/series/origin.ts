/**
 * Where a line of the applied checkout comes from: a line of a template, a
 * line a patch adds, or MLX's own text. Pure: works on the rendered plan.
 * Rendering keeps line numbers (variables are single-line values), so a line
 * of a rendered template or patch is the same line of the file in templates/
 * or patches/.
 */
import type { ApplyPlan } from './plan.js';

/**
 * `templates/<file>:<line>` or `patches/<name>:<line>` for line `line` of
 * `file` (a path in the checkout) after the whole series applied, or null
 * when the line is MLX's own.
 */
export function lineOrigin(plan: ApplyPlan, file: string, line: number): string | null {
  const template = plan.files.find((f) => f.path === file);
  if (template) return `templates/${template.template}:${line}`;

  // Walk the series backwards, mapping the line to the text before each patch.
  let current = line;
  for (const patch of [...plan.patches].reverse()) {
    const patchFile = patch.files.find((f) => f.path === file);
    if (!patchFile) continue;
    let shift = 0;
    let mapped: number | null = null;
    for (const hunk of patchFile.hunks) {
      // A range of no lines names the line before it (`@@ -5,0 +6,2 @@` adds after line 5).
      const newStart = hunk.newLines === 0 ? hunk.newStart + 1 : hunk.newStart;
      const oldStart = hunk.oldLines === 0 ? hunk.oldStart + 1 : hunk.oldStart;
      if (current >= newStart + hunk.newLines) {
        shift += hunk.newLines - hunk.oldLines;
        continue;
      }
      if (current < newStart) break;
      let newLine = newStart;
      let oldLine = oldStart;
      for (const [k, body] of hunk.lines.entries()) {
        const kind = body[0];
        if (kind === '+') {
          if (newLine === current) return `patches/${patch.name}:${hunk.at + 1 + k}`;
          newLine++;
        } else if (kind === ' ') {
          if (newLine === current) mapped = oldLine;
          newLine++;
          oldLine++;
        } else if (kind === '-') {
          oldLine++;
        }
        if (mapped !== null) break;
      }
      break;
    }
    current = mapped ?? current - shift;
  }
  return null;
}
