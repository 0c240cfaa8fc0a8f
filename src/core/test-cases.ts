/** Which doctest cases an edit of a test file touches. Pure: texts in, names out. */

const TEST_CASE = /^\s*TEST_CASE\s*\(\s*"((?:[^"\\]|\\.)*)"/;
const HUNK = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/;

/** Lines of the new file that a `git diff -U0` changed (for a pure deletion: the line after it). */
export function changedLines(unifiedZeroContext: string): number[] {
  const lines: number[] = [];
  for (const line of unifiedZeroContext.split('\n')) {
    const hunk = HUNK.exec(line);
    if (!hunk) continue;
    const start = Number(hunk[1]);
    const count = hunk[2] === undefined ? 1 : Number(hunk[2]);
    if (count === 0) lines.push(start + 1);
    for (let i = 0; i < count; i++) lines.push(start + i);
  }
  return lines;
}

/**
 * The names of the `TEST_CASE`s whose lines (from the `TEST_CASE` line up to
 * the next one) hold one of `lines` (1-based) of `text`.
 */
export function casesAtLines(text: string, lines: readonly number[]): string[] {
  const starts: Array<{ line: number; name: string }> = [];
  text.split('\n').forEach((line, index) => {
    const match = TEST_CASE.exec(line);
    if (match) starts.push({ line: index + 1, name: (match[1] as string).replace(/\\(.)/g, '$1') });
  });
  const names = new Set<string>();
  for (const line of lines) {
    const owner = starts.filter((s) => s.line <= line).pop();
    if (owner) names.add(owner.name);
  }
  return [...names];
}
