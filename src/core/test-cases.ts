/**
 * The doctest cases of a test file: which an edit touches, and which a
 * `--test-case` filter matches. Pure: texts in, names out.
 */

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
  const starts = caseStarts(text);
  const names = new Set<string>();
  for (const line of lines) {
    const owner = starts.filter((s) => s.line <= line).pop();
    if (owner) names.add(owner.name);
  }
  return [...names];
}

/** The name of each `TEST_CASE` of `text` and its line (1-based), in order; escapes in the name undone. */
function caseStarts(text: string): Array<{ line: number; name: string }> {
  const starts: Array<{ line: number; name: string }> = [];
  text.split('\n').forEach((line, index) => {
    const match = TEST_CASE.exec(line);
    if (match) starts.push({ line: index + 1, name: (match[1] as string).replace(/\\(.)/g, '$1') });
  });
  return starts;
}

/** The names of the `TEST_CASE`s of a test file, in order. */
export function caseNames(text: string): string[] {
  return caseStarts(text).map((s) => s.name);
}

/**
 * The patterns of a doctest filter (`--test-case=`): split at each comma
 * that no backslash escapes; `\,` is a comma and `\\` one backslash, any
 * other backslash stays; empty patterns are dropped (doctest's
 * parseCommaSepArgs).
 */
function filterPatterns(filter: string): string[] {
  const patterns: string[] = [];
  let current = '';
  for (let i = 0; i < filter.length; i++) {
    const c = filter[i] as string;
    const next = filter[i + 1];
    if (c === '\\' && (next === ',' || next === '\\')) {
      current += next;
      i++;
    } else if (c === ',') {
      patterns.push(current);
      current = '';
    } else current += c;
  }
  patterns.push(current);
  return patterns.filter((p) => p !== '');
}

const encoder = new TextEncoder();

/** UTF-8 bytes with ASCII letters folded to small ones: what doctest compares without -cs (tolower, C locale). */
function folded(text: string): Uint8Array {
  return encoder.encode(text).map((b) => (b >= 0x41 && b <= 0x5a ? b + 0x20 : b));
}

const STAR = 0x2a;
const QUESTION = 0x3f;

/** doctest's wildcmp: `*` any run of bytes (also none), `?` exactly one, over the whole name. */
function wildcardMatches(name: Uint8Array, pattern: Uint8Array): boolean {
  let n = 0;
  let p = 0;
  // Where the last `*` was, and the name position it is tried against next.
  let star = -1;
  let retry = 0;
  while (n < name.length) {
    // A `*` in the pattern is a wildcard even where the name holds a `*` too.
    if (p < pattern.length && pattern[p] === STAR) {
      star = p++;
      retry = n;
    } else if (p < pattern.length && (pattern[p] === QUESTION || pattern[p] === name[n])) {
      n++;
      p++;
    } else if (star >= 0) {
      p = star + 1;
      n = ++retry;
    } else return false;
  }
  while (pattern[p] === STAR) p++;
  return p === pattern.length;
}

/**
 * True when doctest's `--test-case=<filter>` runs the case `name`: one of the
 * filter's comma-separated patterns matches the whole name, ignoring the case
 * of ASCII letters, with `*` and `?` wildcards.
 */
export function matchesDoctestFilter(filter: string, name: string): boolean {
  const bytes = folded(name);
  return filterPatterns(filter).some((p) => wildcardMatches(bytes, folded(p)));
}
