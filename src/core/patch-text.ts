/** Unified diffs as text: split into file sections and hunks, so that one file's hunks can be replaced and the rest kept, and joined back. */

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
