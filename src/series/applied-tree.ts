import { copyFile, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import type { Git } from '../adapters/git.js';
import { orFailure, ProcessError } from '../adapters/process-error.js';
import { diagnoseFile, preImageBlobs, type Conflict } from './conflict.js';
import type { ApplyPlan } from './plan.js';
import { newFilesPatch } from '../core/patch.js';

export const INPUT_TRAILER = 'Mlx-Storage-Pr-Input';

/** How one template or patch goes onto a commit. */
export type StepStatus = 'clean' | 'three-way' | 'already-upstream' | 'conflict';

export interface StepOutcome {
  kind: 'template' | 'patch';
  /** `templates/<path>` for a template, the patch's file name for a patch. */
  name: string;
  /** The files it writes in MLX. */
  files: string[];
  status: StepStatus;
  /** Why it did not apply exactly: per file, the hunk and the reason (empty when clean). */
  reasons: Conflict[];
}

export interface BuiltTree {
  tree: string | null;
  conflicts: Conflict[];
  /** Per template and patch, in series order (survey mode only; empty otherwise). */
  steps: StepOutcome[];
}

export interface BuildTreeOptions {
  threeWay?: boolean;
  /** The commit the series goes onto (default: the plan's, the pinned commit). */
  base?: string;
  /**
   * Survey mode (`check`): every step is tried on its own. A patch that does
   * not apply exactly is `already-upstream` when the base already holds it,
   * else `three-way` when a three-way merge takes it without conflict, else
   * `conflict`. A template whose file the base has with the same content is
   * `already-upstream`. `upstreamChanged` (the files that differ between the
   * pinned commit and the base) decides each reason.
   */
  survey?: { upstreamChanged: ReadonlySet<string> };
  /**
   * The commit the series was applied on before (the previous pin, after the
   * pin moved): a patch that does not apply is `upstream_changed` only when
   * upstream changed its file between that commit and the base.
   */
  since?: string | undefined;
}

/**
 * Builds the tree of the applied series in a temporary index. The user's
 * index and working tree are never touched here, which is what makes `apply`
 * atomic: nothing is written to them until the whole series applies.
 */
export async function buildTree(git: Git, plan: ApplyPlan, options: BuildTreeOptions = {}): Promise<BuiltTree> {
  const base = options.base ?? plan.commit;
  const survey = options.survey;
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'mlx-storage-pr-'));
  try {
    const indexFile = path.join(tmp, 'index');
    const index = git.withIndex(indexFile);
    await index.readTree(base);
    const build: TreeBuild = { git, index, indexFile, tmp, plan, options, conflicts: [], steps: [] };
    const patchFiles = await Promise.all(
      plan.patches.map(async (patch, i) => {
        const patchFile = path.join(tmp, `patch-${i}.patch`);
        await writeFile(patchFile, patch.text);
        return patchFile;
      }),
    );

    // The whole series in one `git apply` when no step needs a result of its own: the templates
    // as new files, then the patches. It applies all or nothing, so after a failure the index is as
    // it was and the steps below find which template or patch is in the way.
    const newFiles = survey || options.threeWay ? null : newFilesPatch(plan.files);
    if (newFiles !== null && (plan.files.length > 0 || plan.patches.length > 1)) {
      const templatesFile = path.join(tmp, 'templates.patch');
      if (plan.files.length > 0) await writeFile(templatesFile, newFiles);
      const together = await orFailure(
        index.applyToIndex([...(plan.files.length > 0 ? [templatesFile] : []), ...patchFiles]),
      );
      if (!(together instanceof ProcessError)) return { tree: await index.writeTree(), conflicts: [], steps: [] };
    }

    await addTemplates(build);
    await applyPatches(build, patchFiles, upstreamChangedSince(build, base));
    const { conflicts, steps } = build;
    if (conflicts.length > 0) return { tree: null, conflicts, steps };
    return { tree: await index.writeTree(), conflicts, steps };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

/** What the steps of one `buildTree` share; `conflicts` and `steps` grow as they go. */
interface TreeBuild {
  git: Git;
  /** `git` on the temporary index in `indexFile`. */
  index: Git;
  indexFile: string;
  tmp: string;
  plan: ApplyPlan;
  options: BuildTreeOptions;
  conflicts: Conflict[];
  steps: StepOutcome[];
}

/** What upstream changed (for the reasons of a failed patch), asked of git the first time a patch fails. */
function upstreamChangedSince(build: TreeBuild, base: string): () => Promise<Changed | null> {
  const { survey, since } = build.options;
  let changed: Promise<Changed | null> | null = null;
  return () => {
    changed ??= survey
      ? Promise.resolve({ paths: survey.upstreamChanged })
      : since === undefined || since === base
        ? Promise.resolve(null)
        : build.index.changedPaths(since, base).then((paths) => ({
            paths: new Set(paths),
            comparedWith: `the previous pin ${since.slice(0, 12)}`,
          }));
    return changed;
  };
}

/** Adds the rendered templates to the index; a file the base has already is a conflict (or, surveyed, upstream). */
async function addTemplates(build: TreeBuild): Promise<void> {
  const { index, tmp, plan, conflicts, steps } = build;
  const survey = build.options.survey;
  const blobFiles = await Promise.all(
    plan.files.map(async (file, i) => {
      const name = path.join(tmp, `file-${i}`);
      await writeFile(name, file.content);
      return name;
    }),
  );
  const blobs = await index.hashObjects(blobFiles);
  const existing = new Set(
    (plan.files.length ? await index.raw(['ls-files', '-z', '--', ...plan.files.map((f) => f.path)]) : '')
      .split('\0')
      .filter(Boolean),
  );
  for (const [i, file] of plan.files.entries()) {
    const name = `templates/${file.template}`;
    if (!existing.has(file.path)) {
      if (survey) steps.push({ kind: 'template', name, files: [file.path], status: 'clean', reasons: [] });
      continue;
    }
    const same = survey !== undefined && (await index.indexBlob(file.path)) === blobs[i];
    const reason: Conflict = same
      ? {
          patch: name,
          file: file.path,
          reason: 'already_applied',
          detail: 'the base already has this file as the template renders it',
        }
      : {
          patch: name,
          file: file.path,
          reason: 'file_exists',
          detail: `the ${survey ? 'base' : 'pinned commit'} already has this file`,
        };
    if (!same) conflicts.push(reason);
    if (survey)
      steps.push({
        kind: 'template',
        name,
        files: [file.path],
        status: same ? 'already-upstream' : 'conflict',
        reasons: [reason],
      });
  }
  await index.updateIndex(plan.files.map((file, i) => ({ path: file.path, blob: blobs[i] as string })));
}

/** Applies the patches one by one to the index; a patch that does not apply is diagnosed (and, surveyed, merged). */
async function applyPatches(
  build: TreeBuild,
  patchFiles: readonly string[],
  upstreamChanged: () => Promise<Changed | null>,
): Promise<void> {
  const { git, index, indexFile, plan, options, conflicts, steps } = build;
  const survey = options.survey;
  for (const [i, patch] of plan.patches.entries()) {
    const patchFile = patchFiles[i] as string;
    const files = patch.files.map((f) => f.path);
    try {
      // Survey mode tries the exact patch first: git's --3way would merge even a patch that applies as it is.
      await index.applyToIndex(patchFile, { threeWay: survey ? false : (options.threeWay ?? false) });
      if (survey) steps.push({ kind: 'patch', name: patch.name, files, status: 'clean', reasons: [] });
    } catch (error) {
      if (!(error instanceof ProcessError)) throw error;
      const diagnosis = await diagnosePatch(index, patch, patchFile, error.stderr, await upstreamChanged());
      if (!survey) {
        conflicts.push(...diagnosis.conflicts);
        continue;
      }
      const status: StepStatus = diagnosis.reverseApplies
        ? 'already-upstream'
        : (await mergeThreeWay(git, indexFile, patchFile))
          ? 'three-way'
          : 'conflict';
      if (status === 'conflict') conflicts.push(...diagnosis.conflicts);
      steps.push({ kind: 'patch', name: patch.name, files, status, reasons: diagnosis.conflicts });
    }
  }
}

/**
 * Applies a patch with a three-way merge to a copy of the index, and keeps the
 * copy only when the merge had no conflict: a conflict would leave unmerged
 * entries behind, and `git apply --check --3way` says yes to those too.
 */
async function mergeThreeWay(git: Git, indexFile: string, patchFile: string): Promise<boolean> {
  const trial = `${indexFile}.3way`;
  await copyFile(indexFile, trial);
  try {
    await git.withIndex(trial).applyToIndex(patchFile, { threeWay: true });
  } catch (error) {
    if (!(error instanceof ProcessError)) throw error;
    await rm(trial, { force: true });
    return false;
  }
  await rename(trial, indexFile);
  return true;
}

/** The paths upstream changed between two commits, and the older one in words (default: the pinned commit). */
interface Changed {
  paths: ReadonlySet<string>;
  comparedWith?: string;
}

async function diagnosePatch(
  index: Git,
  patch: ApplyPlan['patches'][number],
  patchFile: string,
  stderr: string,
  changed: Changed | null,
): Promise<{ conflicts: Conflict[]; reverseApplies: boolean }> {
  const reverseApplies = await index.applyToIndex(patchFile, { reverse: true, check: true }).then(
    () => true,
    () => false,
  );
  const preImages = preImageBlobs(patch.text);
  const found: Conflict[] = [];
  for (const file of patch.files) {
    const blob = await index.indexBlob(file.path);
    const content = blob === null ? null : await index.catBlob(blob);
    const state = {
      content,
      blob,
      reverseApplies,
      ...(changed ? { upstreamChanged: changed.paths.has(file.path) } : {}),
      ...(changed?.comparedWith === undefined ? {} : { comparedWith: changed.comparedWith }),
    };
    const conflict = diagnoseFile(patch.name, file, state, preImages.get(file.path));
    if (conflict) found.push(conflict);
  }
  if (found.length === 0) {
    // Every hunk matches its file, yet git refused the patch: its text is at fault unless upstream changed the file.
    const file = patch.files[0]?.path ?? '?';
    found.push({
      patch: patch.name,
      file,
      reason: changed?.paths.has(file) ? 'upstream_changed' : 'patch_changed',
      detail: stderr.trim().split('\n')[0] ?? 'git apply failed',
    });
  }
  return { conflicts: found, reverseApplies };
}

export function appliedCommitMessage(plan: ApplyPlan): string {
  return [
    'mlx-storage-pr: applied templates and patches',
    '',
    'Local state of the mlx-storage-pr tool. Its content becomes the pull',
    'request; this message does not.',
    '',
    `${INPUT_TRAILER}: ${plan.inputHash}`,
  ].join('\n');
}

/** The input hash recorded in an applied commit's message, if any. */
export function inputHashOf(message: string): string | undefined {
  return new RegExp(`^${INPUT_TRAILER}: ([0-9a-f]+)$`, 'm').exec(message)?.[1];
}
