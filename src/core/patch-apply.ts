/** Applying a patch series in memory, with the template (placeholder) text kept in step with the rendered text. */

import { UserError } from './errors.js';
import { sectionPath, splitPatch, toLines, type PatchSection, type RawHunk } from './patch-text.js';


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
