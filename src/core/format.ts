import path from 'node:path';

import { createTwoFilesPatch, diffArrays } from 'diff';

import { UserError } from './errors.js';
import { renderString, type Variables } from './render.js';

/** The files MLX's pre-commit hands to clang-format (`files: \.(h|cpp)$`). */
export function isCppFile(file: string): boolean {
  return /\.(h|cpp)$/.test(file);
}

/** The files cmake-format's pre-commit hook picks (`CMakeLists.txt`, `*.cmake`). */
export function isCMakeFile(file: string): boolean {
  return path.posix.basename(file) === 'CMakeLists.txt' || file.endsWith('.cmake');
}

export interface ToolPins {
  clangFormat: string | null;
  cmakeFormat: string | null;
}

/** The clang-format and cmake-format versions a `.pre-commit-config.yaml` pins. */
export function preCommitPins(text: string): ToolPins {
  const rev = (repo: RegExp): string | null => {
    const match = new RegExp(`${repo.source}\\s*\\n\\s*rev:\\s*v?([0-9][\\w.-]*)`).exec(text);
    return match ? (match[1] as string) : null;
  };
  return { clangFormat: rev(/mirrors-clang-format/), cmakeFormat: rev(/cmake-format-precommit/) };
}

/**
 * The `.clang-format` that `clang-format --style=file` uses for `file`: the
 * one in the nearest parent folder. MLX has several (docs/ and mlx/3rdparty/
 * turn formatting off).
 */
export function nearestStyleFile(file: string, styleFiles: readonly string[]): string | null {
  for (let dir = path.posix.dirname(file); ; dir = path.posix.dirname(dir)) {
    const candidate = dir === '.' ? '.clang-format' : `${dir}/.clang-format`;
    if (styleFiles.includes(candidate)) return candidate;
    if (dir === '.') return null;
  }
}

/** A unified diff of one file, `a/` and `b/` prefixed like git's. */
export function unifiedDiff(file: string, before: string, after: string): string {
  const text = createTwoFilesPatch(`a/${file}`, `b/${file}`, before, after, undefined, undefined, { context: 3 });
  return text.replace(/^=+\n/, '');
}

/** Lines of a text file, and whether its last line ends with a newline. */
export interface Lines {
  lines: string[];
  eofNewline: boolean;
}

export function toLines(text: string): Lines {
  if (text.length === 0) return { lines: [], eofNewline: true };
  const lines = text.split('\n');
  const eofNewline = lines[lines.length - 1] === '';
  if (eofNewline) lines.pop();
  return { lines, eofNewline };
}

export function fromLines({ lines, eofNewline }: Lines): string {
  return lines.length === 0 ? '' : `${lines.join('\n')}${eofNewline ? '\n' : ''}`;
}

// ---------------------------------------------------------------------------
// Patches, split so that one file's hunks can be replaced and the rest kept

export interface RawHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  header: string;
  lines: string[];
  /** 1-based line of the header in the text the hunk was split from. */
  at: number;
}

export interface PatchSection {
  /** Lines before the first hunk: `diff --git`, `index`, `---`, `+++`. */
  header: string[];
  hunks: RawHunk[];
  /** Lines after the last hunk that belong to no hunk (a format-patch signature, say). */
  trailer: string[];
}

export interface SplitPatch {
  preamble: string[];
  sections: PatchSection[];
  eofNewline: boolean;
}

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/**
 * Splits a unified diff into its file sections and hunks. Hunk bodies are
 * read by their line counts, so a removed line that starts with `-- ` is not
 * mistaken for a file header.
 */
export function splitPatch(text: string, origin: string): SplitPatch {
  const { lines, eofNewline } = toLines(text);
  const result: SplitPatch = { preamble: [], sections: [], eofNewline };
  let loose: string[] = [];
  let current: PatchSection | null = null;
  const flush = () => {
    if (current === null) result.preamble = loose;
    else if (current.hunks.length === 0) current.header.push(...loose);
    else current.trailer = loose;
    loose = [];
  };
  const startSection = () => {
    flush();
    current = { header: [], hunks: [], trailer: [] };
    result.sections.push(current);
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const hunk = HUNK_HEADER.exec(line);
    if (hunk && current !== null) {
      const section: PatchSection = current;
      section.header.push(...loose);
      loose = [];
      let oldLeft = hunk[2] === undefined ? 1 : Number(hunk[2]);
      let newLeft = hunk[4] === undefined ? 1 : Number(hunk[4]);
      const parsed: RawHunk = { oldStart: Number(hunk[1]), oldLines: oldLeft, newStart: Number(hunk[3]), newLines: newLeft, header: line, lines: [], at: i + 1 };
      while (oldLeft > 0 || newLeft > 0 || (lines[i + 1] ?? '').startsWith('\\')) {
        i++;
        if (i >= lines.length) throw new UserError('SERIES_INVALID', `${origin}: hunk "${line}" is cut short.`, { hint: 'Regenerate the patch with `git diff`.' });
        const body = lines[i] as string;
        const kind = body[0] ?? ' ';
        if (kind === ' ') {
          oldLeft--;
          newLeft--;
        } else if (kind === '-') oldLeft--;
        else if (kind === '+') newLeft--;
        else if (kind !== '\\') throw new UserError('SERIES_INVALID', `${origin}: unexpected line in hunk "${line}": ${body}`, { hint: 'Regenerate the patch with `git diff`.' });
        parsed.lines.push(body);
      }
      section.hunks.push(parsed);
      continue;
    }
    const gitHeaderOpen = current !== null && (current as PatchSection).hunks.length === 0 && loose.some((l) => l.startsWith('diff --git '));
    if (line.startsWith('diff --git ') || (line.startsWith('--- ') && (lines[i + 1] ?? '').startsWith('+++ ') && !gitHeaderOpen)) startSection();
    loose.push(line);
  }
  flush();
  return result;
}

export function joinPatch(patch: SplitPatch): string {
  const lines = [...patch.preamble];
  for (const section of patch.sections) {
    lines.push(...section.header);
    for (const hunk of section.hunks) lines.push(hunk.header, ...hunk.lines);
    lines.push(...section.trailer);
  }
  return fromLines({ lines, eofNewline: patch.eofNewline });
}

/** The checkout path a section changes, from its `+++` (or `---` for a deletion) header. */
export function sectionPath(section: PatchSection): string | null {
  const name = (prefix: string) => {
    const line = section.header.find((l) => l.startsWith(prefix));
    if (line === undefined) return null;
    const value = line.slice(prefix.length).replace(/\t.*$/, '');
    return value === '/dev/null' ? null : value.replace(/^[ab]\//, '');
  };
  return name('+++ ') ?? name('--- ');
}

// ---------------------------------------------------------------------------
// Applying a series in memory, with the raw (placeholder) text kept in step

/** A file as rendered, and as written in templates/ and patches/ (with `{{placeholders}}`), line for line. */
export interface FileState {
  rendered: string[];
  raw: string[];
  eofNewline: boolean;
}

/** Where a line of a patch step's result comes from: a line of the file before (0-based), or a `+` line of the patch file (1-based). */
export type LineSource = { pre: number } | { patchLine: number };

export interface PatchStep {
  patch: string;
  path: string;
  sectionIndex: number;
  pre: FileState;
  post: FileState;
  /** Lines the hunks add, 1-based inclusive ranges in `post`. */
  added: Array<[number, number]>;
  /** For each line of `post`, where it comes from. */
  sources: LineSource[];
  /** True when a hunk carries a `\ No newline at end of file` marker. */
  newlineMarker: boolean;
}

function sameLines(a: readonly string[], at: number, b: readonly string[]): boolean {
  if (at < 0 || at + b.length > a.length) return false;
  return b.every((line, i) => a[at + i] === line);
}

/**
 * Applies one file's hunks. Rendering keeps line counts (variables are single
 * line), so the raw hunk lines match the rendered ones by position.
 */
export function applyHunks(
  pre: FileState,
  rendered: readonly RawHunk[],
  raw: readonly RawHunk[],
  where: string,
): { post: FileState; added: Array<[number, number]>; sources: LineSource[] } {
  const out: FileState = { rendered: [], raw: [], eofNewline: pre.eofNewline };
  const added: Array<[number, number]> = [];
  const sources: LineSource[] = [];
  const keep = (from: number, to: number) => {
    for (let i = from; i < to; i++) sources.push({ pre: i });
  };
  let cursor = 0;
  for (const [h, hunk] of rendered.entries()) {
    const rawHunk = raw[h] as RawHunk;
    const body = hunk.lines.filter((l) => !l.startsWith('\\'));
    const rawBody = rawHunk.lines.filter((l) => !l.startsWith('\\'));
    // The patch-file line of each body line: the raw hunk's header line plus its index among all hunk lines.
    const patchLines = rawHunk.lines.flatMap((l, i) => (l.startsWith('\\') ? [] : [rawHunk.at + 1 + i]));
    const old = body.filter((l) => !l.startsWith('+')).map((l) => l.slice(1));
    let at = hunk.oldLines === 0 ? hunk.oldStart : hunk.oldStart - 1;
    if (!sameLines(pre.rendered, at, old)) {
      let found = -1;
      for (let d = 1; d <= pre.rendered.length && found < 0; d++) {
        if (sameLines(pre.rendered, at - d, old) && at - d >= cursor) found = at - d;
        else if (sameLines(pre.rendered, at + d, old)) found = at + d;
      }
      if (found < 0) {
        throw new UserError('PATCH_CONFLICT', `${where}: hunk "${hunk.header}" does not apply to the pinned file.`, {
          hint: 'Run `mlx-storage-pr status` to see the conflict and refresh the patch.',
        });
      }
      at = found;
    }
    out.rendered.push(...pre.rendered.slice(cursor, at));
    out.raw.push(...pre.raw.slice(cursor, at));
    keep(cursor, at);
    cursor = at;
    for (const [i, line] of body.entries()) {
      const kind = line[0] ?? ' ';
      const text = line.slice(1);
      if (kind === '+') {
        out.rendered.push(text);
        out.raw.push((rawBody[i] ?? '').slice(1));
        sources.push({ patchLine: patchLines[i] as number });
        const n = out.rendered.length;
        const last = added[added.length - 1];
        if (last && last[1] === n - 1) last[1] = n;
        else added.push([n, n]);
      } else {
        if (kind !== '-') {
          out.rendered.push(pre.rendered[cursor] as string);
          out.raw.push(pre.raw[cursor] as string);
          sources.push({ pre: cursor });
        }
        cursor++;
      }
    }
  }
  out.rendered.push(...pre.rendered.slice(cursor));
  out.raw.push(...pre.raw.slice(cursor));
  keep(cursor, pre.rendered.length);
  return { post: out, added, sources };
}

/**
 * Walks the series and returns, for every file section of every patch, the
 * file before and after that patch. `pinned` gives the content of each path
 * at the pinned commit (null when the patch creates the file).
 */
export function seriesSteps(
  patches: ReadonlyArray<{ name: string; raw: string; rendered: string }>,
  pinned: ReadonlyMap<string, string | null>,
): PatchStep[] {
  const state = new Map<string, FileState>();
  const steps: PatchStep[] = [];
  for (const patch of patches) {
    const origin = `patches/${patch.name}`;
    const rendered = splitPatch(patch.rendered, origin);
    const raw = splitPatch(patch.raw, origin);
    if (raw.sections.length !== rendered.sections.length) {
      throw new UserError('SERIES_INVALID', `${origin}: rendering changed the number of file sections.`, { hint: 'Keep placeholders inside single lines.' });
    }
    for (const [index, section] of rendered.sections.entries()) {
      const file = sectionPath(section);
      if (file === null || section.hunks.length === 0) continue;
      const rawSection = raw.sections[index] as PatchSection;
      let pre = state.get(file);
      if (pre === undefined) {
        const content = pinned.get(file) ?? null;
        const { lines, eofNewline } = toLines(content ?? '');
        pre = { rendered: lines, raw: [...lines], eofNewline };
      }
      const { post, added, sources } = applyHunks(pre, section.hunks, rawSection.hunks, `${origin}: ${file}`);
      const newlineMarker = section.hunks.some((h) => h.lines.some((l) => l.startsWith('\\')));
      state.set(file, post);
      steps.push({ patch: patch.name, path: file, sectionIndex: index, pre, post, added, sources, newlineMarker });
    }
  }
  return steps;
}

// ---------------------------------------------------------------------------
// Mapping formatted text back to templates with placeholders

const PLACEHOLDER = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

interface Segment {
  text: string;
  name: string | null;
}

function segments(raw: string, variables: Variables): Segment[] {
  const out: Segment[] = [];
  let last = 0;
  for (const match of raw.matchAll(PLACEHOLDER)) {
    if (match.index > last) out.push({ text: raw.slice(last, match.index), name: null });
    const name = match[1] as string;
    out.push({ text: variables[name] ?? '', name });
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
function tagOccurrences(raw: string, variables: Variables, values: readonly string[]): Map<string, Array<string | null>> {
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

/** Thrown when a formatted line holds a variable's value and it is unclear whether that text is a placeholder. */
function unmappable(origin: string, line: number, text: string, value: string, names: string[]): UserError {
  return new UserError('CHECK_FAILED', `${origin}: cannot map formatted line ${line} back to the template: "${text.trim()}" holds "${value}", the value of ${names.map((n) => `{{${n}}}`).join('/')}, and the template uses that text both as a placeholder and literally there.`, {
    hint: `Apply the diff that \`mlx-storage-pr format\` prints to ${origin} by hand, keeping the placeholders.`,
    details: { origin, line, value, names },
  });
}

/**
 * Given a template's lines (`raw`, with placeholders), the lines it renders
 * to and the formatted version of those, returns template lines that render
 * to the formatted text. Only changed regions are touched. In a changed
 * region, the k-th occurrence of a variable's value in the new text becomes
 * the placeholder when the k-th occurrence in the old text was one (formatting
 * keeps the order of tokens). When formatting adds or drops an occurrence
 * (clang-format adds `// namespace x` comments), the whole file must use the
 * value only through one placeholder, or the mapping is refused.
 */
export function mapFormattedBack(raw: readonly string[], rendered: readonly string[], formatted: readonly string[], variables: Variables, origin: string): string[] {
  if (raw.length !== rendered.length) throw new Error(`${origin}: template and rendered text differ in line count`);
  const whole = raw.join('\n');
  const used = [...new Set([...whole.matchAll(PLACEHOLDER)].map((m) => m[1] as string))];
  const values = [...new Set(used.map((n) => variables[n]).filter((v): v is string => v !== undefined && v.length > 0))].sort((a, b) => b.length - a.length);
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
          throw unmappable(origin, line, newText.split('\n')[line - newIndex - 1] ?? '', value, names);
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

  const check = renderString(out.join('\n'), variables, origin);
  if (check !== formatted.join('\n')) {
    throw new UserError('CHECK_FAILED', `${origin}: the formatted text could not be mapped back to the template.`, {
      hint: `Apply the diff that \`mlx-storage-pr format\` prints to ${origin} by hand, keeping the placeholders.`,
    });
  }
  return out;
}
