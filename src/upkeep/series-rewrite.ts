import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { linkOnPath, readInside, writeFilesTogether } from '../adapters/files.js';
import { Git } from '../adapters/git.js';
import { templateVariables } from '../series/config.js';
import { permissionErrorFrom, UserError } from '../core/errors.js';
import { comparePaths } from '../core/paths.js';
import { decodeUtf8, describeBadByte } from '../core/text.js';
import {
  conflictMarkerLine,
  editSeries,
  keepLiteralLines,
  newPatchName,
  newSectionHeader,
  routeEdits,
  withIndexLine,
  type ChainFile,
} from './export-plan.js';
import { fromLines, joinPatch, splitPatch, toLines, unifiedDiff, type PatchStep, type RawHunk } from '../core/patch.js';
import { buildPlan, planSteps, plannedPaths, type ApplyPlan, type PlanInputs } from '../series/plan.js';
import { mapFormattedBack, type MapBackWording } from '../series/template-map.js';
import { gitDiffHunks } from '../series/patch-diff.js';
import { buildTree } from '../series/applied-tree.js';

/**
 * Rewriting templates/ and patches/ from edited checkout files: where each
 * edit goes, the new texts, and the check that they give the edited tree.
 * `export` takes the user's edits with it; `bump` its merged files.
 */

/** How `export` names the text it maps back into templates/ and patches/. */
const EXPORT_WORDING: MapBackWording = {
  what: 'edited',
  code: 'EXPORT_REFUSED',
  hint: (origin) =>
    `Write that change into ${origin} by hand, as {{placeholder}} or as literal text, whichever you mean; then run \`mlx-storage-pr apply --force\` (it saves your checkout edits first). Nothing was written.`,
};

/** Why a changed file of the checkout was not taken into the series. */
export type NotExportedReason = 'new-file' | 'changed-mlx-file' | 'deleted';

export interface RewritePlan {
  /** The project's inputs after the export. */
  inputs: PlanInputs;
  plan: ApplyPlan;
  /** Project files (relative to the project) with their text before and after; null: absent. */
  writes: Array<{ file: string; before: string | null; after: string | null }>;
  /** Checkout files taken into the series, and the project files they went into. */
  exported: Array<{ path: string; into: string[] }>;
  notExported: Array<{ path: string; reason: NotExportedReason }>;
}

/** A file of the checkout that the series neither creates nor patches, changed by the user. */
export interface OtherChange {
  path: string;
  /** Its content at the base commit (null: a new file). */
  base: string | null;
  /** Its content in the checkout (null: deleted). */
  content: string | null;
  /** Why it cannot be taken into the series (a link, not UTF-8): thrown when it would be. `content` is then empty. */
  refused?: UserError;
}

export interface ExportInput {
  git: Git;
  /** The commit the series is written against after the export. */
  base: string;
  /** The project's inputs, with `config.upstream.commit` = `base`. */
  inputs: PlanInputs;
  plan: ApplyPlan;
  /** Content at `base` of every path the patches touch (null: a patch creates it). */
  baseContents: ReadonlyMap<string, string | null>;
  /** Each patched file as the series leaves it on `base` before the edits: what the edits are measured against. */
  chain: readonly ChainFile[];
  /** The series as patches/ writes it (placeholders and rendered text, step by step): where placeholders come back from. */
  reference: readonly PatchStep[];
  /** The checkout's text of every path the series writes (null: deleted). */
  edited: ReadonlyMap<string, string | null>;
  others: readonly OtherChange[];
  includeNew: boolean;
  /** Rewrite every patch against `base` (after the base moved), not only the changed ones. */
  regenerateAll: boolean;
}

function refuse(message: string, hint: string, details: Record<string, unknown>): UserError {
  return new UserError('EXPORT_REFUSED', message, { hint, details });
}

function verifyNoMarkers(file: string, text: string): void {
  const line = conflictMarkerLine(toLines(text).lines);
  if (line === null) return;
  throw refuse(
    `${file}:${line}: the file still holds a conflict (<<<<<<< ... >>>>>>>).`,
    `Resolve the conflict in ${file} (keep the lines you want, delete the markers), then run \`mlx-storage-pr export\` again. Nothing was written.`,
    { file, line },
  );
}

function verifyText(file: string, text: string): void {
  if (text.includes('\0'))
    throw refuse(`${file} is a binary file; templates/ and patches/ hold text only.`, 'Leave it out of the PR.', {
      file,
    });
}

/** Blob ids of texts, written into the repository so that a later `apply --3way` finds them. */
async function hashTexts(git: Git, texts: readonly string[]): Promise<string[]> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'mlx-storage-pr-blob-'));
  try {
    const files = await Promise.all(
      texts.map(async (text, i) => {
        const file = path.join(tmp, String(i));
        await writeFile(file, text);
        return file;
      }),
    );
    return await git.hashObjects(files);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

const sameLines = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && a.every((l, i) => l === b[i]);

/** The abbreviation length the project's patches use for blob ids (git's shortest, 7, when none has an index line). */
function blobAbbrev(patches: ReadonlyMap<string, string>): number {
  for (const text of patches.values()) {
    const m = /^index ([0-9a-f]+)\.\./m.exec(text);
    if (m && !/^0+$/.test(m[1] as string)) return (m[1] as string).length;
  }
  return 7;
}

/**
 * Works out the new templates/ and patches/ from the checkout's files:
 * edits to files made from templates go back into the templates with their
 * placeholders; each patched file's edits go to the patches that change it
 * (`routeEdits`), which are regenerated with `git diff` against the base;
 * patches left empty are dropped from the series. New files and changes to
 * other MLX files are reported, or added with `includeNew`. Refuses (and so
 * writes nothing) when an edit cannot be placed. Checks in memory that the
 * new series renders to exactly the edited files.
 */
export async function planSeriesRewrite(input: ExportInput): Promise<RewritePlan> {
  const { inputs } = input;
  const found: Found = {
    variables: templateVariables(inputs.config),
    templates: new Map(inputs.templates.map((t) => [t.path, t.content])),
    exported: [],
    notExported: [],
  };
  exportTemplateEdits(input, found);
  const sections = await exportPatchedEdits(input, found);
  const { patches, removed } = rewritePatches(inputs.patches, sections);
  const added = await exportOtherFiles(input, found, patches, removed);

  const newInputs: PlanInputs = {
    ...inputs,
    templates: [...found.templates]
      .map(([p, content]) => ({ path: p, content }))
      .sort((a, b) => comparePaths(a.path, b.path)),
    seriesText: removed.length || added.length ? editSeries(inputs.seriesText, removed, added) : inputs.seriesText,
    patches,
  };
  const newPlan = buildPlan(newInputs);
  verifyRendersEdits(newPlan, newInputs, input);
  const writes = projectWrites(inputs, newInputs);
  return { inputs: newInputs, plan: newPlan, writes, exported: found.exported, notExported: found.notExported };
}

/** What the steps of a rewrite gather: the new templates, and which checkout files went where (or did not). */
interface Found {
  variables: Record<string, string>;
  templates: Map<string, string>;
  exported: RewritePlan['exported'];
  notExported: RewritePlan['notExported'];
}

/** New hunks (and blob ids for the index line) of one section of a patch. */
type SectionUpdate = { hunks: RawHunk[]; pre: string; post: string };

function deletedRefusal(file: string, origin: string): UserError {
  return refuse(
    `${file} was deleted in the checkout, but ${origin} writes it.`,
    `Restore it (\`git checkout <series commit> -- ${file}\` in the checkout) and run export again; to take it out of the PR, delete or change ${origin} yourself. Nothing was written.`,
    { file, origin },
  );
}

/** Maps the edits of files made from templates back into their templates, placeholders kept. */
function exportTemplateEdits(input: ExportInput, found: Found): void {
  for (const file of input.plan.files) {
    const origin = `templates/${file.template}`;
    const text = input.edited.get(file.path) ?? null;
    if (text === null) throw deletedRefusal(file.path, origin);
    if (text === file.content) continue;
    verifyText(file.path, text);
    verifyNoMarkers(file.path, text);
    const edited = toLines(text);
    const raw = toLines(found.templates.get(file.template) ?? '');
    const lines = mapFormattedBack(
      raw.lines,
      toLines(file.content).lines,
      edited.lines,
      found.variables,
      origin,
      EXPORT_WORDING,
    );
    found.templates.set(file.template, fromLines({ lines, eofNewline: edited.eofNewline }));
    found.exported.push({ path: file.path, into: [origin] });
  }
}

/** The new sections of the patches that change each edited patched file, per patch and section index. */
async function exportPatchedEdits(input: ExportInput, found: Found): Promise<Map<string, Map<number, SectionUpdate>>> {
  const sections = new Map<string, Map<number, SectionUpdate>>();
  const reference = new Map(input.reference.map((s) => [`${s.patch}\0${s.path}`, s]));
  for (const file of input.chain) {
    const text = input.edited.get(file.path) ?? null;
    const names = file.steps.map((s) => `patches/${s.patch}`);
    if (text === null) throw deletedRefusal(file.path, names.join(', '));
    const edited = toLines(text);
    const last = file.steps[file.steps.length - 1];
    const steps = file.steps.map((s) => {
      const ref = reference.get(`${s.patch}\0${file.path}`);
      if (ref === undefined) throw new Error(`${file.path}: patches/${s.patch} has no step in the series`);
      return ref;
    });
    const lastRef = steps[steps.length - 1] as PatchStep;
    const unchanged = last !== undefined && sameLines(last.post, edited.lines);
    if (unchanged && edited.eofNewline === lastRef.post.eofNewline && !input.regenerateAll) continue;
    verifyText(file.path, text);
    verifyNoMarkers(file.path, text);
    if (!unchanged || edited.eofNewline !== lastRef.post.eofNewline)
      found.exported.push({ path: file.path, into: names });
    await regenerateSteps(input, found, { file, steps, edited, sections });
  }
  return sections;
}

/**
 * Regenerates, against the text before it, each step of one patched file
 * whose result or input changed (`routeEdits` says which step gets which
 * edit), into `sections`.
 */
async function regenerateSteps(
  input: ExportInput,
  found: Found,
  o: {
    file: ChainFile;
    steps: PatchStep[];
    edited: ReturnType<typeof toLines>;
    sections: Map<string, Map<number, SectionUpdate>>;
  },
): Promise<void> {
  const { file, steps, edited, sections } = o;
  const posts = routeEdits(file, edited.lines);
  const base = toLines(input.baseContents.get(file.path) ?? '');
  let preRendered: string[] = base.lines;
  let preRaw: string[] = base.lines;
  let preEof = base.eofNewline;
  let preChanged = false;
  for (const [s, step] of steps.entries()) {
    const post = posts[s] as string[];
    const postEof = s === steps.length - 1 ? edited.eofNewline : step.post.eofNewline;
    const postChanged = !sameLines(post, step.post.rendered) || postEof !== step.post.eofNewline;
    const changed = input.regenerateAll || preChanged || postChanged;
    let raw: string[];
    if (!changed) raw = step.post.raw;
    else {
      const origin = `patches/${step.patch} (${file.path})`;
      const mapped = mapFormattedBack(step.post.raw, step.post.rendered, post, found.variables, origin, EXPORT_WORDING);
      raw = keepLiteralLines(mapped, { rendered: preRendered, raw: preRaw }, post);
      const hunks = await gitDiffHunks(
        input.git,
        file.path,
        fromLines({ lines: preRaw, eofNewline: preEof }),
        fromLines({ lines: raw, eofNewline: postEof }),
      );
      const [pre, postBlob] = (await hashTexts(input.git, [
        fromLines({ lines: preRendered, eofNewline: preEof }),
        fromLines({ lines: post, eofNewline: postEof }),
      ])) as [string, string];
      const forPatch = sections.get(step.patch) ?? new Map<number, SectionUpdate>();
      forPatch.set(step.sectionIndex, { hunks, pre, post: postBlob });
      sections.set(step.patch, forPatch);
    }
    preChanged = postChanged;
    preRendered = post;
    preRaw = raw;
    preEof = postEof;
  }
}

/** Patches with the regenerated sections in place, empty sections dropped, and the patches left empty (`removed`). */
function rewritePatches(
  given: ReadonlyMap<string, string>,
  sections: Map<string, Map<number, SectionUpdate>>,
): { patches: Map<string, string>; removed: string[] } {
  const patches = new Map(given);
  const removed: string[] = [];
  for (const [name, changed] of sections) {
    const split = splitPatch(given.get(name) ?? '', `patches/${name}`);
    split.sections = split.sections.flatMap((section, index) => {
      const update = changed.get(index);
      if (update === undefined) return [section];
      if (update.hunks.length === 0) return [];
      return [{ ...section, header: withIndexLine(section.header, update.pre, update.post), hunks: update.hunks }];
    });
    if (split.sections.every((s) => s.hunks.length === 0)) {
      patches.delete(name);
      removed.push(name);
    } else patches.set(name, joinPatch(split));
  }
  return { patches, removed };
}

/**
 * Other changed MLX files: reported as not exported, or with `includeNew`
 * taken in (a new file as a template, a changed one as a new patch, added
 * to `patches`). Returns the names of the new patches.
 */
async function exportOtherFiles(
  input: ExportInput,
  found: Found,
  patches: Map<string, string>,
  removed: readonly string[],
): Promise<string[]> {
  const { git, inputs } = input;
  const added: string[] = [];
  for (const other of [...input.others].sort((a, b) => comparePaths(a.path, b.path))) {
    if (other.content === null) {
      if (other.base !== null) found.notExported.push({ path: other.path, reason: 'deleted' });
      continue;
    }
    const reason: NotExportedReason = other.base === null ? 'new-file' : 'changed-mlx-file';
    if (!input.includeNew) {
      found.notExported.push({ path: other.path, reason });
      continue;
    }
    if (other.refused) throw other.refused;
    verifyText(other.path, other.content);
    verifyNoMarkers(other.path, other.content);
    if (other.base === null) {
      if (found.templates.has(other.path))
        throw refuse(
          `templates/${other.path} exists already, but it does not write ${other.path}.`,
          `Move the new file's text into the template by hand. Nothing was written.`,
          { file: other.path },
        );
      found.templates.set(other.path, other.content);
      found.exported.push({ path: other.path, into: [`templates/${other.path}`] });
      continue;
    }
    const hunks = await gitDiffHunks(git, other.path, other.base, other.content);
    if (hunks.length === 0) continue;
    const [pre, post] = (await hashTexts(git, [other.base, other.content])) as [string, string];
    const mode = (await git.fileMode(input.base, other.path)) ?? '100644';
    const name = newPatchName([...patches.keys(), ...removed], other.path);
    const section = {
      header: newSectionHeader(other.path, pre, post, mode, blobAbbrev(inputs.patches)),
      hunks,
      trailer: [],
    };
    patches.set(name, joinPatch({ preamble: [], sections: [section], eofNewline: true }));
    added.push(name);
    found.exported.push({ path: other.path, into: [`patches/${name}`] });
  }
  return added;
}

/** The project files whose text the rewrite changes, with their text before and after (null: absent). */
function projectWrites(inputs: PlanInputs, newInputs: PlanInputs): RewritePlan['writes'] {
  const writes: RewritePlan['writes'] = [];
  const allTemplates = new Set([...inputs.templates.map((t) => t.path), ...newInputs.templates.map((t) => t.path)]);
  for (const file of [...allTemplates].sort()) {
    const before = inputs.templates.find((t) => t.path === file)?.content ?? null;
    const after = newInputs.templates.find((t) => t.path === file)?.content ?? null;
    if (before !== after) writes.push({ file: `templates/${file}`, before, after });
  }
  for (const name of [...new Set([...inputs.patches.keys(), ...newInputs.patches.keys()])].sort()) {
    const before = inputs.patches.get(name) ?? null;
    const after = newInputs.patches.get(name) ?? null;
    if (before !== after) writes.push({ file: `patches/${name}`, before, after });
  }
  if (newInputs.seriesText !== inputs.seriesText)
    writes.push({ file: 'patches/series', before: inputs.seriesText, after: newInputs.seriesText });
  return writes;
}

/** The new series, applied in memory, must give exactly the checkout's text of every exported file. */
function verifyRendersEdits(plan: ApplyPlan, inputs: PlanInputs, input: ExportInput): void {
  const contents = new Map(input.baseContents);
  for (const other of input.others) if (!contents.has(other.path)) contents.set(other.path, other.base);
  const finals = new Map<string, string | null>(contents);
  for (const step of planSteps(plan, inputs, contents))
    finals.set(step.path, fromLines({ lines: step.post.rendered, eofNewline: step.post.eofNewline }));
  for (const file of plan.files) finals.set(file.path, file.content);
  const wanted = [
    ...input.edited,
    ...input.others
      .filter((o) => input.includeNew && o.content !== null)
      .map((o): [string, string | null] => [o.path, o.content]),
  ];
  for (const [file, want] of wanted) {
    if ((finals.get(file) ?? null) !== want)
      throw new Error(`${file}: the exported series does not render to the checkout's file`);
  }
}

/** A unified diff of every project file the export writes, in file order. */
export function exportDiff(writes: RewritePlan['writes']): string {
  return writes.map((w) => unifiedDiff(w.file, w.before ?? '', w.after ?? '')).join('');
}

/**
 * Writes the project files and deletes removed ones, all or none: each beside
 * its place first, then all moved in (see `writeFilesTogether`).
 */
export async function writeProjectFiles(root: string, writes: RewritePlan['writes']): Promise<void> {
  // Every write lands in the project: a link on the way (templates/x -> a folder elsewhere) is refused before the first write.
  for (const w of writes) {
    const link = await linkOnPath(root, w.file);
    if (link !== null)
      throw new UserError(
        'EXPORT_REFUSED',
        `${link} in the project is a symbolic link; export never writes through a link.`,
        {
          hint: `Replace ${link} with the file or folder itself (\`cp -RL\` copies what a link points to), then run export again. ${NOTHING_WRITTEN}`,
          details: { file: w.file, link },
        },
      );
  }
  try {
    await writeFilesTogether(
      writes.map((w) => ({ file: path.join(root, w.file), text: w.after })),
      `mlx-storage-pr-${process.pid}`,
    );
  } catch (error) {
    // A draft must not stay behind (the next apply would take it for a template): writeFilesTogether removed them.
    const denied = permissionErrorFrom(error);
    if (denied === null) throw error;
    // Named as the project file, not as its draft or kept copy.
    const file = (denied.details as { path: string }).path.replace(/\.mlx-storage-pr-\d+(-old)?$/, '');
    const reason = (denied.details as { reason: string }).reason;
    throw new UserError('PERMISSION_DENIED', `Cannot write ${file}: ${reason}.`, {
      hint: `Make ${path.relative(root, file)} and its folder writable for your user (\`ls -ld ${file} ${path.dirname(file)}\`; also \`lsattr\` or \`ls -lO\` for an immutable or locked file), then run export again.`,
      details: { path: file, reason },
      cause: error,
    });
  }
}

const NOTHING_WRITTEN = 'Nothing was written.';

/**
 * The text of `file` in a working folder (null: it does not exist), or why
 * export refuses it: a symbolic link (its own or a folder's above it) is never
 * read through, since it may point out of the checkout; a folder, a FIFO or a
 * socket is no file; bytes that are not UTF-8 would be changed by decoding.
 */
async function worktreeText(dir: string, file: string): Promise<string | null | UserError> {
  const found = await readInside(dir, file);
  switch (found.kind) {
    case 'absent':
      return null;
    case 'link':
      return refuse(
        `${file} in the checkout is ${found.at === file ? 'a symbolic link' : `under ${found.at}, a symbolic link`}; export never reads through a link, which may point out of the checkout.`,
        `Replace ${found.at} with the ${found.at === file ? 'file' : 'folder'} itself (\`cp -RL\` copies what a link points to) or remove it, then run export again. ${NOTHING_WRITTEN}`,
        { file, link: found.at },
      );
    case 'folder':
    case 'special':
      return refuse(
        `${file} in the checkout is ${found.kind === 'folder' ? 'a folder' : 'neither a file nor a folder'}; templates/ and patches/ hold files.`,
        `Put a file at ${file} or remove it, then run export again. ${NOTHING_WRITTEN}`,
        { file },
      );
    case 'file': {
      const decoded = decodeUtf8(found.bytes);
      if ('text' in decoded) return decoded.text;
      return refuse(
        `${file} is not UTF-8 text: ${describeBadByte(found.bytes, decoded)}; templates/ and patches/ hold UTF-8 text, and export never changes bytes.`,
        `Save ${file} as UTF-8 (\`iconv -f latin1 -t utf-8\` converts Latin-1), or leave a binary file out of the PR. ${NOTHING_WRITTEN}`,
        { file, offset: decoded.offset, line: decoded.line },
      );
    }
  }
}

/**
 * What a working folder holds of the series' paths and of the other files
 * changed against `since`. A path of the series that cannot be read as text
 * is refused here; another file only when it would be exported (`refused`).
 */
export async function readEdits(
  git: Git,
  plan: ApplyPlan,
  base: string,
  since: string,
): Promise<{ edited: Map<string, string | null>; others: OtherChange[] }> {
  const planned = plannedPaths(plan);
  const edited = new Map<string, string | null>();
  for (const file of planned) {
    const text = await worktreeText(git.dir, file);
    if (text instanceof UserError) throw text;
    edited.set(file, text);
  }
  const changed = [...new Set([...(await git.worktreeDiff(since)), ...(await git.untrackedFiles())])].filter(
    (f) => !planned.includes(f),
  );
  const others: OtherChange[] = [];
  for (const file of changed.sort()) {
    const text = await worktreeText(git.dir, file);
    const fileBase = await git.fileAt(base, file);
    others.push(
      text instanceof UserError
        ? { path: file, base: fileBase, content: '', refused: text }
        : { path: file, base: fileBase, content: text },
    );
  }
  return { edited, others };
}

/** Each patched file's steps, in series order, as the chain `routeEdits` works on. */
export function chainOf(steps: readonly PatchStep[], baseContents: ReadonlyMap<string, string | null>): ChainFile[] {
  const files = new Map<string, ChainFile & { steps: Array<{ patch: string; post: string[] }> }>();
  for (const step of steps) {
    let file = files.get(step.path);
    if (file === undefined) {
      file = { path: step.path, base: toLines(baseContents.get(step.path) ?? '').lines, steps: [] };
      files.set(step.path, file);
    }
    file.steps.push({ patch: step.patch, post: step.post.rendered });
  }
  return [...files.values()];
}

/**
 * `tree` with the given files replaced by the given texts: the tree the
 * checkout's edits make, which the new series must build exactly.
 */
export async function treeWithTexts(git: Git, tree: string, texts: ReadonlyMap<string, string>): Promise<string> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'mlx-storage-pr-export-'));
  try {
    const index = git.withIndex(path.join(tmp, 'index'));
    await index.readTree(tree);
    const files = [...texts.keys()];
    const blobs = await hashTexts(index, [...texts.values()]);
    await index.updateIndex(files.map((f, i) => ({ path: f, blob: blobs[i] as string })));
    return await index.writeTree();
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** The checkout's text of each exported file. */
export function exportedTexts(
  paths: readonly string[],
  edited: ReadonlyMap<string, string | null>,
  others: readonly OtherChange[],
): Map<string, string> {
  const texts = new Map<string, string>();
  for (const file of paths) {
    const text = edited.get(file) ?? others.find((o) => o.path === file)?.content ?? null;
    if (text !== null) texts.set(file, text);
  }
  return texts;
}

/** Builds the new series with git (no fuzz, no 3-way) and checks it is exactly `target`; returns the tree. */
export async function verifyBuildsTree(git: Git, plan: ApplyPlan, target: string): Promise<string> {
  const built = await buildTree(git, plan);
  if (built.tree === null)
    throw new Error(
      `the exported series does not apply: ${built.conflicts.map((c) => `${c.patch}: ${c.file}`).join(', ')}`,
    );
  const differs = await git.changedPaths(built.tree, target);
  if (differs.length > 0)
    throw new Error(`the exported series does not give the checkout's files: ${differs.join(', ')} differ`);
  return built.tree;
}
