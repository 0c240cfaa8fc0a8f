/**
 * Unified diffs: the one reader (split into file sections and hunks), writer
 * (join) and in-memory applier of the project. The series (`series/series-file.ts`),
 * the conflict diagnosis (`series/conflict.ts`), the series applied in memory
 * (`series/plan.ts`) and formatting (`readiness/formatting.ts`) all read patches
 * here. Pure.
 */
import { createTwoFilesPatch } from 'diff';

import { UserError } from './errors.js';

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

/**
 * A patch as git reads it. One whose own `diff --git` or `@@` lines end in CRLF had its line
 * endings converted as a whole (an editor, a checkout with `core.autocrlf`): git writes those lines
 * with LF whatever the files hold, and would read each CR as part of a path or a line. Such a patch
 * gets LF endings back (MLX's files have LF). Any other patch is kept byte for byte: a CR on one of
 * its lines belongs to the file it changes.
 */
export function withGitLineEndings(text: string): string {
  return /^(diff --git |@@ -).*\r$/m.test(text) ? text.replace(/\r\n/g, '\n') : text;
}

/**
 * A patch that creates each of `files` (mode 100644) with exactly its content, as `git apply` reads
 * it; null when a path would need git's quoting or a content is not text (a NUL byte).
 */
export function newFilesPatch(files: ReadonlyArray<{ path: string; content: string }>): string | null {
  let patch = '';
  for (const { path, content } of files) {
    if (!/^[\w.+@/-]+$/.test(path) || content.includes('\0')) return null;
    patch += `diff --git a/${path} b/${path}\nnew file mode 100644\n`;
    const { lines, eofNewline } = toLines(content);
    if (lines.length === 0) continue;
    patch += `--- /dev/null\n+++ b/${path}\n@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}\n`).join('')}`;
    if (!eofNewline) patch += '\\ No newline at end of file\n';
  }
  return patch;
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
      const parsed: RawHunk = {
        oldStart: Number(hunk[1]),
        oldLines: oldLeft,
        newStart: Number(hunk[3]),
        newLines: newLeft,
        header: line,
        lines: [],
        at: i + 1,
      };
      while (oldLeft > 0 || newLeft > 0 || (lines[i + 1] ?? '').startsWith('\\')) {
        i++;
        if (i >= lines.length)
          throw new UserError('SERIES_INVALID', `${origin}: hunk "${line}" is cut short.`, {
            hint: 'Regenerate the patch with `git diff`.',
          });
        const body = lines[i] as string;
        const kind = body[0] ?? ' ';
        if (kind === ' ') {
          oldLeft--;
          newLeft--;
        } else if (kind === '-') oldLeft--;
        else if (kind === '+') newLeft--;
        else if (kind !== '\\')
          throw new UserError('SERIES_INVALID', `${origin}: unexpected line in hunk "${line}": ${body}`, {
            hint: 'Regenerate the patch with `git diff`.',
          });
        parsed.lines.push(body);
      }
      section.hunks.push(parsed);
      continue;
    }
    const gitHeaderOpen =
      current !== null &&
      (current as PatchSection).hunks.length === 0 &&
      loose.some((l) => l.startsWith('diff --git '));
    if (
      line.startsWith('diff --git ') ||
      (line.startsWith('--- ') && (lines[i + 1] ?? '').startsWith('+++ ') && !gitHeaderOpen)
    )
      startSection();
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

/**
 * The paths a section names in its `---` and `+++` headers, without the
 * `a/`/`b/` prefix; null for `/dev/null` (a created or deleted file) or a
 * missing header.
 */
export function sectionFiles(section: PatchSection): { old: string | null; new: string | null; headers: boolean } {
  const name = (prefix: string) => {
    const line = section.header.find((l) => l.startsWith(prefix));
    if (line === undefined) return null;
    const value = line.slice(prefix.length).replace(/\t.*$/, '');
    return value === '/dev/null' ? null : value.replace(/^[ab]\//, '');
  };
  const headers = section.header.some((l) => l.startsWith('--- ')) || section.header.some((l) => l.startsWith('+++ '));
  return { old: name('--- '), new: name('+++ '), headers };
}

/** The checkout path a section changes: its `+++` (or `---` for a deletion) header, else the `b/` path of `diff --git`. */
export function sectionPath(section: PatchSection): string | null {
  const { old, new: target } = sectionFiles(section);
  if (target !== null || old !== null) return target ?? old;
  const git = section.header.map((l) => /^diff --git a\/(\S+) b\/(\S+)/.exec(l)).find((m) => m !== null);
  return git ? (git[2] as string) : null;
}

// ---------------------------------------------------------------------------
// Applying a series in memory, with the raw (placeholder) text kept in step

/** A file as rendered, and as written in templates/ and patches/ (with `{{placeholders}}`), line for line. */
export interface TemplatedFile {
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
  pre: TemplatedFile;
  post: TemplatedFile;
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
function applyHunks(
  pre: TemplatedFile,
  rendered: readonly RawHunk[],
  raw: readonly RawHunk[],
  where: string,
): { post: TemplatedFile; added: Array<[number, number]>; sources: LineSource[] } {
  const out: TemplatedFile = { rendered: [], raw: [], eofNewline: pre.eofNewline };
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
  const state = new Map<string, TemplatedFile>();
  const steps: PatchStep[] = [];
  for (const patch of patches) {
    const origin = `patches/${patch.name}`;
    const rendered = splitPatch(patch.rendered, origin);
    const raw = splitPatch(patch.raw, origin);
    if (raw.sections.length !== rendered.sections.length) {
      throw new UserError('SERIES_INVALID', `${origin}: rendering changed the number of file sections.`, {
        hint: 'Keep placeholders inside single lines.',
      });
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

/** The blob a section was written against (its `index <old>..<new>` line), unless the section creates its file. */
export function sectionPreImage(section: PatchSection): string | undefined {
  for (const line of section.header) {
    const index = /^index ([0-9a-f]+)\.\.[0-9a-f]+/.exec(line);
    if (index && !/^0+$/.test(index[1] as string)) return index[1];
  }
  return undefined;
}

/** True when `hunk` applies to `content` on its own, at its line or shifted. */
export function hunkApplies(content: string, hunk: RawHunk): boolean {
  const { lines, eofNewline } = toLines(content);
  const file: TemplatedFile = { rendered: lines, raw: lines, eofNewline };
  try {
    applyHunks(file, [hunk], [hunk], 'hunk');
    return true;
  } catch (error) {
    if (error instanceof UserError && error.code === 'PATCH_CONFLICT') return false;
    throw error;
  }
}

/** A unified diff of one file, `a/` and `b/` prefixed like git's. */
export function unifiedDiff(file: string, before: string, after: string): string {
  const text = createTwoFilesPatch(`a/${file}`, `b/${file}`, before, after, undefined, undefined, { context: 3 });
  return text.replace(/^=+\n/, '');
}
