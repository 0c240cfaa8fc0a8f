import { UserError } from '../core/errors.js';
import { sectionFiles, sectionPath, splitPatch, type RawHunk } from '../core/patch.js';
import { verifyInsideCheckout } from '../core/paths.js';

/** Patch names from a series file: one per line, `#` starts a comment. */
export function parseSeries(text: string, file: string): string[] {
  const names: string[] = [];
  for (const [index, raw] of text.split('\n').entries()) {
    const line = raw.replace(/#.*/, '').trim();
    if (line.length === 0) continue;
    if (line.includes('/') || line.includes('\\') || line.startsWith('.')) {
      throw new UserError('SERIES_INVALID', `${file}:${index + 1}: "${line}" is not a patch file name.`, {
        hint: 'List bare file names of patches in the patches/ folder, one per line.',
      });
    }
    if (names.includes(line)) {
      throw new UserError('SERIES_INVALID', `${file}:${index + 1}: "${line}" is listed twice.`, {
        hint: 'Each patch may appear once in the series.',
      });
    }
    names.push(line);
  }
  return names;
}

export interface PatchFile {
  /** Path in the checkout (after rendering). */
  path: string;
  /** True when the patch creates the file. */
  created: boolean;
  /** True when the patch deletes the file. */
  deleted: boolean;
  hunks: RawHunk[];
}

const REGENERATE =
  'Regenerate the patch with `git diff` against the pinned commit (in the checkout: `git diff > <project>/patches/<name>`).';

/**
 * Refuses a patch file that is no unified diff at all (binary data, or text
 * without one diff line). Runs before rendering, so stray `{{` in random bytes
 * are not reported as a bad placeholder.
 */
export function verifyUnifiedDiff(text: string, origin: string): void {
  if (text.includes('\0') || text.includes('\uFFFD')) {
    throw new UserError('SERIES_INVALID', `${origin}: not a unified diff: the file is binary or not UTF-8 text.`, {
      hint: REGENERATE,
    });
  }
  if (!/^(diff --git |--- |\+\+\+ |@@ )/m.test(text)) {
    throw new UserError('SERIES_INVALID', `${origin}: not a unified diff: no "diff --git", "---"/"+++" or "@@" line.`, {
      hint: REGENERATE,
    });
  }
}

/**
 * A git header line that is a change by itself, without hunks: a mode
 * change, a rename, an empty file created or deleted.
 */
const CHANGE_HEADER = /^(old mode|new mode|new file mode|deleted file mode|rename from|rename to) /;

/** A header line giving a file the mode of a symbolic link or a submodule. */
const LINK_MODE = /^(?:new file mode|new mode|old mode|index [0-9a-f]+\.\.[0-9a-f]+) (120000|160000)\s*$/;

/** The paths a section's header names besides its target: both sides of `diff --git`, a rename's or copy's source. */
function otherPaths(header: readonly string[]): string[] {
  const paths: string[] = [];
  for (const line of header) {
    const git = /^diff --git a\/(\S+) b\/(\S+)$/.exec(line);
    if (git) paths.push(git[1] as string, git[2] as string);
    const moved = /^(?:rename|copy) (?:from|to) (.+)$/.exec(line);
    if (moved) paths.push(moved[1] as string);
    const side = /^(?:---|\+\+\+) (?:[ab]\/)?(.+?)(?:\t.*)?$/.exec(line);
    if (side && side[1] !== '/dev/null') paths.push(side[1] as string);
  }
  return paths;
}

/** The files and hunks of a rendered unified diff, with checked paths. */
export function parsePatchFiles(text: string, origin: string): PatchFile[] {
  verifyUnifiedDiff(text, origin);
  const sections = splitPatch(text, origin).sections.filter(
    (s) => s.hunks.length > 0 || sectionFiles(s).headers || s.header.some((l) => CHANGE_HEADER.test(l)),
  );
  const files = sections.map((s) => {
    const { old: oldPath, new: newPath, headers } = sectionFiles(s);
    const target = headers ? (newPath ?? oldPath) : sectionPath(s);
    if (target === null) {
      throw new UserError('SERIES_INVALID', `${origin}: a file header names no path.`, {
        hint: 'Regenerate the patch with `git diff` against the pinned commit.',
      });
    }
    for (const other of otherPaths(s.header)) verifyInsideCheckout(other, origin);
    const mode = s.header.map((l) => LINK_MODE.exec(l)).find((m) => m !== null);
    if (mode) {
      const what = mode[1] === '120000' ? 'a symbolic link' : 'a submodule';
      throw new UserError(
        'SERIES_INVALID',
        `${origin}: ${target} is ${what} (mode ${mode[1]}); a series carries regular files only.`,
        {
          hint: `A link could point outside the checkout. Make ${target} a regular file in the patch (regenerate it with \`git diff\`), or leave it out of the series.`,
          details: { file: target, mode: mode[1] },
        },
      );
    }
    return {
      path: verifyInsideCheckout(target, origin),
      created: s.header.some((l) => l.startsWith('new file mode ')) || (headers && oldPath === null),
      deleted: s.header.some((l) => l.startsWith('deleted file mode ')) || (headers && newPath === null),
      hunks: s.hunks,
    };
  });
  const changesSomething = sections.some((s) => s.hunks.length > 0 || s.header.some((l) => CHANGE_HEADER.test(l)));
  if (files.length === 0 || !changesSomething) {
    throw new UserError('SERIES_INVALID', `${origin}: the patch changes nothing.`, {
      hint: 'Remove it from patches/series or regenerate it with `git diff`.',
    });
  }
  return files;
}
