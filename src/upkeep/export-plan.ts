/**
 * Edits made in the MLX checkout, taken back into the series: which patch an
 * edit belongs to, what each patch leaves after it, and the small text edits
 * of patches/series, patch headers and the config that `export` and `bump`
 * write. Pure.
 */
import { diffArrays } from 'diff';

import { UserError } from '../core/errors.js';

/** One file the series patches: the file at the base commit and what each patch that changes it leaves. */
export interface ChainFile {
  path: string;
  /** The file at the base commit (no lines when the series creates it). */
  base: readonly string[];
  /** What each patch leaves, in series order (rendered text). */
  steps: ReadonlyArray<{ patch: string; post: readonly string[] }>;
}

/** The context lines git writes around a change: an edit this close to a patch's change is in that patch's hunk. */
const CONTEXT = 3;

/** For each line of `after`, its index in `before` when the diff keeps it, or null for a line `after` adds. */
export function keptLines(before: readonly string[], after: readonly string[]): Array<number | null> {
  const kept: Array<number | null> = [];
  let at = 0;
  for (const change of diffArrays([...before], [...after])) {
    if (change.removed) at += change.count;
    else if (change.added) for (let i = 0; i < change.count; i++) kept.push(null);
    else for (let i = 0; i < change.count; i++) kept.push(at++);
  }
  return kept;
}

/** One change from `before` to `after`: lines [start, end) of `before` become `lines`, which start at line `at` of `after`. */
interface Region {
  start: number;
  end: number;
  lines: string[];
  at: number;
}

function regions(before: readonly string[], after: readonly string[]): Region[] {
  const out: Region[] = [];
  let oldIndex = 0;
  let newIndex = 0;
  let open: Region | null = null;
  for (const change of diffArrays([...before], [...after])) {
    if (!change.added && !change.removed) {
      if (open) out.push(open);
      open = null;
      oldIndex += change.count;
      newIndex += change.count;
      continue;
    }
    open ??= { start: oldIndex, end: oldIndex, lines: [], at: newIndex };
    if (change.removed) {
      oldIndex += change.count;
      open.end = oldIndex;
    } else {
      open.lines.push(...change.value);
      newIndex += change.count;
    }
  }
  if (open) out.push(open);
  return out;
}

/** The lines of `post` within a hunk's reach of a change from `pre`, as inclusive ranges. */
function hunkReach(pre: readonly string[], post: readonly string[]): Array<[number, number]> {
  const reach: Array<[number, number]> = [];
  for (const r of regions(pre, post)) {
    const lo = r.at - CONTEXT;
    const hi = r.at + r.lines.length - 1 + CONTEXT;
    const last = reach[reach.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else reach.push([lo, hi]);
  }
  return reach;
}

function exportRefused(message: string, hint: string, details: Record<string, unknown>): UserError {
  return new UserError('EXPORT_REFUSED', message, { hint, details });
}

/**
 * Spreads the edits of a file over the patches that change it. `edited` is
 * the file as the user left it; the result is, for each step of `file`, what
 * that patch must leave so that the series ends in `edited` (the last entry
 * is `edited` itself). With one patch every edit goes to it. With several, an
 * edit goes to the patch that added the lines it changes, else to the one
 * patch whose hunk (its change with git's three lines of context) it falls
 * in; an edit in no patch's hunk, or in the hunks of two, is refused, naming
 * the file and line.
 */
export function routeEdits(file: ChainFile, edited: readonly string[]): string[][] {
  const posts = file.steps.map((s) => s.post);
  const count = posts.length;
  const last = posts[count - 1] ?? file.base;
  const edits = regions(last, edited);
  if (count === 0) throw new Error(`${file.path}: no patch changes this file`);
  if (edits.length === 0) return posts.map((p) => [...p]);

  // kept[s]: for each line of posts[s], its index in the text before patch s.
  const kept = posts.map((post, s) => keptLines(s === 0 ? file.base : (posts[s - 1] as string[]), post));
  // trace[s][x]: where line x of the last text is in posts[s] (null: a later patch adds it).
  const trace: Array<Array<number | null>> = new Array<Array<number | null>>(count);
  trace[count - 1] = last.map((_, x) => x);
  for (let s = count - 1; s > 0; s--) {
    const k = kept[s] as Array<number | null>;
    trace[s - 1] = (trace[s] as Array<number | null>).map((i) => (i === null ? null : (k[i] ?? null)));
  }
  const inBase = (trace[0] as Array<number | null>).map((i) => (i === null ? false : (kept[0]?.[i] ?? null) !== null));
  // The patch that added each line of the last text (-1: the base has it).
  const owner = last.map((_, x) => (inBase[x] ? -1 : trace.findIndex((t) => t[x] !== null)));
  const reach = posts.map((post, s) => hunkReach(s === 0 ? file.base : (posts[s - 1] as string[]), post));
  const within = (s: number, i: number | null) =>
    i !== null && (reach[s] as Array<[number, number]>).some(([lo, hi]) => i >= lo && i <= hi);
  const names = file.steps.map((s) => `patches/${s.patch}`);

  const routed = edits.map((edit) => {
    if (count === 1) return 0;
    const removed = Array.from({ length: edit.end - edit.start }, (_, i) => edit.start + i);
    const owners = new Set(removed.map((x) => owner[x] as number));
    if (owners.size === 1 && (owners.values().next().value as number) >= 0)
      return owners.values().next().value as number;
    const fits = file.steps
      .map((_, s) => s)
      .filter((s) => {
        const t = trace[s] as Array<number | null>;
        if (removed.length > 0) return removed.every((x) => within(s, t[x] ?? null));
        return (
          (edit.start > 0 && within(s, t[edit.start - 1] ?? null)) ||
          (edit.start < last.length && within(s, t[edit.start] ?? null))
        );
      });
    if (fits.length === 1) return fits[0] as number;
    const line = edit.at + 1;
    const where =
      fits.length === 0
        ? `lies outside the hunks of ${names.join(', ')}, which all change this file`
        : `falls in the hunks of both ${fits.map((s) => names[s]).join(' and ')}`;
    throw exportRefused(
      `${file.path}: the edit at line ${line} ${where}, so export cannot tell which patch it belongs to.`,
      `Write the change into the patch it belongs to by hand (${names.join(' or ')}), or move the edit next to the lines that one patch changes; then run \`mlx-storage-pr export\` again. Nothing was written.`,
      { file: file.path, line, patches: fits.length === 0 ? names : fits.map((s) => names[s]) },
    );
  });

  const result = posts.map((post, s) => {
    const t = trace[s] as Array<number | null>;
    const deleted = new Set<number>();
    const inserts = new Map<number, string[]>();
    for (const [e, edit] of edits.entries()) {
      if ((routed[e] as number) > s) continue;
      let at: number;
      if (edit.end > edit.start) {
        const lines = Array.from({ length: edit.end - edit.start }, (_, i) => t[edit.start + i] as number);
        for (const i of lines) deleted.add(i);
        at = Math.min(...lines);
      } else {
        let above = edit.start - 1;
        while (above >= 0 && t[above] === null) above--;
        let below = edit.start;
        while (below < last.length && t[below] === null) below++;
        at = above >= 0 ? (t[above] as number) + 1 : below < last.length ? (t[below] as number) : post.length;
      }
      inserts.set(at, [...(inserts.get(at) ?? []), ...edit.lines]);
    }
    const out: string[] = [];
    for (let i = 0; i <= post.length; i++) {
      out.push(...(inserts.get(i) ?? []));
      if (i < post.length && !deleted.has(i)) out.push(post[i] as string);
    }
    return out;
  });
  const final = result[count - 1] as string[];
  if (final.length !== edited.length || final.some((l, i) => l !== edited[i]))
    throw new Error(`${file.path}: spreading the edits over the patches does not give the edited file`);
  return result;
}

/**
 * Template lines for `post` after mapping: a line the diff from the text
 * before the patch keeps takes that line's raw text, so MLX's own lines stay
 * literal and a patch never changes a line only to put a placeholder in (a
 * change upstream already made renders to nothing).
 */
export function keepLiteralLines(
  mapped: readonly string[],
  pre: { rendered: readonly string[]; raw: readonly string[] },
  post: readonly string[],
): string[] {
  const kept = keptLines(pre.rendered, post);
  return mapped.map((line, i) => {
    const from = kept[i];
    return from !== null && from !== undefined ? (pre.raw[from] as string) : line;
  });
}

/** The 1-based line of the first conflict block (`<<<<<<< ` followed by `>>>>>>> `) in `text`, or null. */
export function conflictMarkerLine(lines: readonly string[]): number | null {
  const start = lines.findIndex((l) => /^<{7}( |$)/.test(l));
  if (start < 0) return null;
  return lines.slice(start + 1).some((l) => /^>{7}( |$)/.test(l)) ? start + 1 : null;
}

/**
 * A patch file header's `index <old>..<new> <mode>` line with new blob ids,
 * each abbreviated to the length the line had. A header without one is
 * returned as it is.
 */
export function withIndexLine(header: readonly string[], pre: string, post: string): string[] {
  return header.map((line) => {
    const m = /^index ([0-9a-f]+)\.\.([0-9a-f]+)(.*)$/.exec(line);
    if (!m) return line;
    const zero = (id: string) => /^0+$/.test(id);
    const a = m[1] as string;
    const b = m[2] as string;
    return `index ${zero(a) ? a : pre.slice(0, a.length)}..${zero(b) ? b : post.slice(0, b.length)}${m[3] ?? ''}`;
  });
}

/** The header git writes for a change to an existing file, blob ids abbreviated to `abbrev`. */
export function newSectionHeader(file: string, pre: string, post: string, mode: string, abbrev: number): string[] {
  return [
    `diff --git a/${file} b/${file}`,
    `index ${pre.slice(0, abbrev)}..${post.slice(0, abbrev)} ${mode}`,
    `--- a/${file}`,
    `+++ b/${file}`,
  ];
}

/** A name for a new patch of `file`: the next four-digit number, then the path in lower case with `-` for other characters. */
export function newPatchName(existing: readonly string[], file: string): string {
  const numbers = existing.map((n) => /^(\d+)-/.exec(n)?.[1]).filter((n): n is string => n !== undefined);
  const next = Math.max(0, ...numbers.map(Number)) + 1;
  const slug = file
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  const base = `${String(next).padStart(4, '0')}-${slug}`;
  let name = `${base}.patch`;
  for (let i = 2; existing.includes(name); i++) name = `${base}-${i}.patch`;
  return name;
}

/** patches/series without the lines naming `removed`, and with `added` appended; comments and order kept. */
export function editSeries(text: string, removed: readonly string[], added: readonly string[]): string {
  const lines = text.split('\n');
  const trailing = lines[lines.length - 1] === '';
  if (trailing) lines.pop();
  const kept = lines.filter((raw) => !removed.includes(raw.replace(/#.*/, '').trim()));
  kept.push(...added);
  return kept.length === 0 ? '' : `${kept.join('\n')}\n`;
}
