/** Mapping formatted text back to templates with `{{placeholders}}`. */

import { diffArrays } from 'diff';

import { UserError, type ErrorCode } from '../core/errors.js';
import { PLACEHOLDER, placeholdersIn, renderDeclared, type Variables } from './render.js';

interface Segment {
  text: string;
  name: string | null;
}

function segments(raw: string, variables: Variables): Segment[] {
  const out: Segment[] = [];
  let last = 0;
  for (const match of raw.matchAll(PLACEHOLDER)) {
    const name = match[1] as string;
    // An undeclared {{name}} is text (MLX code), not a placeholder.
    if (!Object.hasOwn(variables, name)) continue;
    if (match.index > last) out.push({ text: raw.slice(last, match.index), name: null });
    out.push({ text: variables[name] as string, name });
    last = match.index + match[0].length;
  }
  if (last < raw.length) out.push({ text: raw.slice(last), name: null });
  return out;
}

/** Non-overlapping occurrences of `value` in `text` outside `claimed` spans. */
function occurrences(text: string, value: string, claimed: Array<[number, number]>): number[] {
  const found: number[] = [];
  for (let at = text.indexOf(value); at >= 0; at = text.indexOf(value, at + 1)) {
    const end = at + value.length;
    if (claimed.some(([s, e]) => at < e && end > s)) continue;
    if (found.length > 0 && at < (found[found.length - 1] as number) + value.length) continue;
    found.push(at);
  }
  return found;
}

/** For every occurrence of each value: the placeholder it came from, `null` for literal text, `'?'` for a partial overlap. */
function tagOccurrences(
  raw: string,
  variables: Variables,
  values: readonly string[],
): Map<string, Array<string | null>> {
  const segs = segments(raw, variables);
  const text = segs.map((s) => s.text).join('');
  const spans: Array<{ start: number; end: number; name: string | null }> = [];
  let pos = 0;
  for (const s of segs) {
    spans.push({ start: pos, end: pos + s.text.length, name: s.name });
    pos += s.text.length;
  }
  const claimed: Array<[number, number]> = [];
  const tags = new Map<string, Array<string | null>>();
  for (const value of values) {
    const list: Array<string | null> = [];
    for (const at of occurrences(text, value, claimed)) {
      const end = at + value.length;
      claimed.push([at, end]);
      const exact = spans.find((s) => s.name !== null && s.start === at && s.end === end);
      const overlaps = spans.some((s) => s.name !== null && at < s.end && end > s.start);
      list.push(exact ? exact.name : overlaps ? '?' : null);
    }
    tags.set(value, list);
  }
  return tags;
}

/**
 * How a caller names the text it maps back: `format --fix` maps formatted text
 * (CHECK_FAILED), `export` maps the user's edits (EXPORT_REFUSED). `hint`
 * names the fix for `origin`.
 */
export interface MapBackWording {
  what: string;
  code: ErrorCode;
  hint: (origin: string) => string;
}

export const FORMAT_WORDING: MapBackWording = {
  what: 'formatted',
  code: 'CHECK_FAILED',
  hint: (origin) =>
    `Apply the diff that \`mlx-storage-pr format\` prints to ${origin} by hand, keeping the placeholders.`,
};

/** Thrown when a changed line holds a variable's value and it is unclear whether that text is a placeholder. */
function unmappable(
  origin: string,
  line: number,
  text: string,
  value: string,
  names: string[],
  wording: MapBackWording,
): UserError {
  return new UserError(
    wording.code,
    `${origin}: cannot map ${wording.what} line ${line} back to the template: "${text.trim()}" holds "${value}", the value of ${names.map((n) => `{{${n}}}`).join('/')}, and the template uses that text both as a placeholder and literally there.`,
    { hint: wording.hint(origin), details: { origin, line, value, names } },
  );
}

/**
 * Given a template's lines (`raw`, with placeholders), the lines it renders
 * to and the formatted (or, for `export`, edited) version of those, returns
 * template lines that render to the new text. Only changed regions are touched. In a changed
 * region, the k-th occurrence of a variable's value in the new text becomes
 * the placeholder when the k-th occurrence in the old text was one (formatting
 * keeps the order of tokens). When formatting adds or drops an occurrence
 * (clang-format adds `// namespace x` comments), the whole file must use the
 * value only through one placeholder, or the mapping is refused.
 */
export function mapFormattedBack(
  raw: readonly string[],
  rendered: readonly string[],
  formatted: readonly string[],
  variables: Variables,
  origin: string,
  wording: MapBackWording = FORMAT_WORDING,
): string[] {
  if (raw.length !== rendered.length) throw new Error(`${origin}: template and rendered text differ in line count`);
  const whole = raw.join('\n');
  const used = placeholdersIn(whole, variables);
  const values = [
    ...new Set(used.map((n) => variables[n]).filter((v): v is string => v !== undefined && v.length > 0)),
  ].sort((a, b) => b.length - a.length);
  const fileTags = tagOccurrences(whole, variables, values);

  const out: string[] = [];
  let oldIndex = 0;
  let newIndex = 0;
  const changes = diffArrays([...rendered], [...formatted]);
  for (let c = 0; c < changes.length; c++) {
    const change = changes[c]!;
    if (!change.added && !change.removed) {
      out.push(...raw.slice(oldIndex, oldIndex + change.count));
      oldIndex += change.count;
      newIndex += change.count;
      continue;
    }
    let removed = 0;
    let addedLines: string[] = [];
    for (; c < changes.length && (changes[c]!.added || changes[c]!.removed); c++) {
      const part = changes[c]!;
      if (part.removed) removed += part.count;
      else addedLines = addedLines.concat(part.value);
    }
    c--;
    const oldRaw = raw.slice(oldIndex, oldIndex + removed).join('\n');
    const newText = addedLines.join('\n');
    const oldTags = tagOccurrences(oldRaw, variables, values);
    const claimed: Array<[number, number]> = [];
    const replacements: Array<{ at: number; end: number; name: string }> = [];
    for (const value of values) {
      const found = occurrences(newText, value, claimed);
      const before = oldTags.get(value) ?? [];
      const everywhere = fileTags.get(value) ?? [];
      for (const [k, at] of found.entries()) {
        claimed.push([at, at + value.length]);
        let name: string | null;
        if (found.length === before.length) name = before[k] ?? null;
        else {
          const kinds = [...new Set(everywhere)];
          name = kinds.length === 1 ? (kinds[0] ?? null) : '?';
        }
        if (name === '?') {
          const line = newIndex + newText.slice(0, at).split('\n').length;
          const names = used.filter((n) => variables[n] === value);
          throw unmappable(origin, line, newText.split('\n')[line - newIndex - 1] ?? '', value, names, wording);
        }
        if (name !== null) replacements.push({ at, end: at + value.length, name });
      }
    }
    replacements.sort((a, b) => b.at - a.at);
    let mapped = newText;
    for (const r of replacements) mapped = `${mapped.slice(0, r.at)}{{${r.name}}}${mapped.slice(r.end)}`;
    if (addedLines.length > 0) out.push(...mapped.split('\n'));
    oldIndex += removed;
    newIndex += addedLines.length;
  }

  const check = renderDeclared(out.join('\n'), variables);
  if (check !== formatted.join('\n')) {
    throw new UserError(wording.code, `${origin}: the ${wording.what} text could not be mapped back to the template.`, {
      hint: wording.hint(origin),
    });
  }
  return out;
}
