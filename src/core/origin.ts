/**
 * Where a line of the applied checkout comes from: a line of a template, a
 * line a patch adds, or MLX's own text. Pure: works on the rendered plan.
 * Rendering keeps line numbers (variables are single-line values), so a line
 * of a rendered template or patch is the same line of the file in templates/
 * or patches/.
 */
import type { ApplyPlan } from './plan.js';

/** The 1-based line of each hunk header of `file` in a unified diff, in order. */
function hunkHeaderLines(patchText: string, file: string): number[] {
  const lines = patchText.split('\n');
  const found: number[] = [];
  let current: string | null = null;
  for (const [index, line] of lines.entries()) {
    const target = /^\+\+\+ (\S+)/.exec(line);
    if (target) {
      const name = (target[1] as string).replace(/\t.*$/, '');
      current = name === '/dev/null' ? null : name.replace(/^b\//, '');
      continue;
    }
    if (/^diff --git /.test(line)) current = null;
    if (current === file && line.startsWith('@@ ')) found.push(index + 1);
  }
  return found;
}

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
    const headers = hunkHeaderLines(patch.text, file);
    let shift = 0;
    let mapped: number | null = null;
    for (const [h, hunk] of patchFile.hunks.entries()) {
      if (current >= hunk.newStart + hunk.newLines) {
        shift += hunk.newLines - hunk.oldLines;
        continue;
      }
      if (current < hunk.newStart) break;
      let newLine = hunk.newStart;
      let oldLine = hunk.oldStart;
      for (const [k, body] of hunk.lines.entries()) {
        const kind = body[0];
        if (kind === '+') {
          if (newLine === current) {
            const header = headers[h];
            return header === undefined ? `patches/${patch.name}` : `patches/${patch.name}:${header + 1 + k}`;
          }
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
