import { hunkApplies, sectionPath, sectionPreImage, splitPatch, type RawHunk } from '../core/patch.js';
import type { PatchFile } from './series-file.js';

export type ConflictReason = 'upstream_changed' | 'patch_changed' | 'file_missing' | 'already_applied' | 'file_exists';

export interface Conflict {
  patch: string;
  file: string;
  /** 1-based hunk number, when one hunk can be named. */
  hunk?: number;
  hunkHeader?: string;
  reason: ConflictReason;
  detail: string;
}

export function hunkHeader(hunk: RawHunk): string {
  return `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`;
}

/** Pre-image blob ids from the `index <old>..<new>` lines of a git diff, by path. */
export function preImageBlobs(patchText: string): Map<string, string> {
  const result = new Map<string, string>();
  for (const section of splitPatch(patchText, 'patch').sections) {
    const file = sectionPath(section);
    const blob = sectionPreImage(section);
    if (file !== null && blob !== undefined) result.set(file, blob);
  }
  return result;
}

function firstFailingHunk(file: PatchFile, content: string): number | undefined {
  const index = file.hunks.findIndex((hunk) => !hunkApplies(content, hunk));
  return index < 0 ? undefined : index;
}

/** The file a patch changes, as the index holds it before the patch. */
export interface TargetFile {
  /** Content before the patch, or null when the file does not exist. */
  content: string | null;
  /** Blob id of that content, or null when the file does not exist. */
  blob: string | null;
  /** True when `git apply --reverse --check` succeeds for this patch. */
  reverseApplies: boolean;
  /**
   * Whether upstream changed the file between the commit the series was on and
   * the one it goes onto: the pinned commit and a checked one (`check`), or the
   * previous pin and the pinned commit (`apply` after the pin moved). When
   * known, it decides the reason instead of the patch's `index` line.
   */
  upstreamChanged?: boolean;
  /** The commit `upstreamChanged` compares with, in words (default: the pinned commit). */
  comparedWith?: string;
}

/**
 * Why the lines of a hunk may not match a file although they read the same:
 * one has CRLF line endings and the other LF. Undefined when the endings agree.
 */
function lineEndingsNote(content: string, hunk: RawHunk): string | undefined {
  const old = hunk.lines.filter((line) => line.startsWith(' ') || line.startsWith('-'));
  if (old.length === 0) return undefined;
  const fileCrlf = content.includes('\r\n');
  const fileLf = /(^|[^\r])\n/.test(content);
  if (fileCrlf && !fileLf && old.every((line) => !line.endsWith('\r'))) {
    return "the file has CRLF line endings and the patch's lines do not: write the patch with `git diff` in the checkout";
  }
  if (fileLf && !fileCrlf && old.every((line) => line.endsWith('\r'))) {
    return "the patch's lines end in CRLF and the file's do not: save the patch with LF line endings";
  }
  return undefined;
}

/**
 * Says why one file of a patch does not apply. `preImage` is the blob the
 * patch was written against (its `index` line), when the patch records one.
 */
export function diagnoseFile(
  patch: string,
  file: PatchFile,
  state: TargetFile,
  preImage: string | undefined,
): Conflict | undefined {
  const base = { patch, file: file.path };
  if (file.created) {
    if (state.content === null) return undefined;
    return {
      ...base,
      reason: state.reverseApplies ? 'already_applied' : 'file_exists',
      detail: 'the patch creates a file that already exists',
    };
  }
  if (state.content === null) {
    return { ...base, reason: 'file_missing', detail: 'the file does not exist at the pinned commit' };
  }
  if (state.reverseApplies) {
    return { ...base, reason: 'already_applied', detail: 'the file already contains this change' };
  }
  const failing = firstFailingHunk(file, state.content);
  if (failing === undefined) return undefined;
  const hunk = file.hunks[failing] as RawHunk;
  const at = { ...base, hunk: failing + 1, hunkHeader: hunkHeader(hunk) };
  const note = lineEndingsNote(state.content, hunk);
  const found = (reason: ConflictReason, detail: string): Conflict => ({
    ...at,
    reason,
    detail: note === undefined ? detail : `${detail}; ${note}`,
  });
  const compared = state.comparedWith ?? 'the pinned commit';
  if (state.upstreamChanged !== undefined) {
    return state.upstreamChanged
      ? found('upstream_changed', `upstream changed this file: it differs from ${compared}`)
      : found('patch_changed', `the file is as at ${compared}, so the patch itself does not apply there either`);
  }
  // Without an `index` line nothing says upstream changed the file: the patch does not fit the file it is for.
  if (preImage === undefined || state.blob === null) {
    return found('patch_changed', "the patch's context does not match the file at the pinned commit");
  }
  return state.blob.startsWith(preImage)
    ? found('patch_changed', 'the file is the one the patch was written against, so the patch text was edited')
    : found('upstream_changed', 'the file differs from the one the patch was written against');
}

export function formatConflict(conflict: Conflict): string {
  const hunk = conflict.hunk === undefined ? '' : `, hunk ${conflict.hunk} ${conflict.hunkHeader ?? ''}`;
  return `${conflict.patch}: ${conflict.file}${hunk}: ${conflict.reason} (${conflict.detail})`;
}
