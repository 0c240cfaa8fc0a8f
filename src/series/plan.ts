import { createHash } from 'node:crypto';

import { templateVariables, type Config } from './config.js';
import { UserError } from '../core/errors.js';
import { comparePaths, verifyInsideCheckout } from '../core/paths.js';
import { seriesSteps, type PatchStep } from '../core/patch.js';
import { placeholdersIn, renderPatchText, renderTemplateText } from './render.js';
import { parsePatchFiles, parseSeries, verifyUnifiedDiff, type PatchFile } from './series-file.js';

/** Raw inputs read from the project: templates by relative path, patches by name. */
export interface PlanInputs {
  config: Config;
  templates: ReadonlyArray<{ path: string; content: string }>;
  seriesText: string;
  patches: ReadonlyMap<string, string>;
}

export interface PlannedFile {
  path: string;
  content: string;
  template: string;
}

export interface PlannedPatch {
  name: string;
  text: string;
  files: PatchFile[];
}

export interface ApplyPlan {
  commit: string;
  files: PlannedFile[];
  patches: PlannedPatch[];
  /** Hash of everything that decides the result; recorded in the applied commit. */
  inputHash: string;
  /** Things that render but may be mistakes (an undeclared `{{name}}` on an added line of a patch). */
  warnings: string[];
}

/** Renders templates and patches. Pure: all file contents come in through `inputs`. */
export function buildPlan(inputs: PlanInputs): ApplyPlan {
  const variables = templateVariables(inputs.config);
  for (const [name, value] of Object.entries(variables)) {
    if (/[\r\n]/.test(value)) {
      throw new UserError('CONFIG_INVALID', `variables.${name} contains a line break.`, {
        hint: 'Template variables are single-line values.',
      });
    }
  }

  const files: PlannedFile[] = [];
  const seen = new Map<string, string>();
  for (const template of [...inputs.templates].sort((a, b) => comparePaths(a.path, b.path))) {
    const origin = `templates/${template.path}`;
    for (const name of placeholdersIn(template.path, variables))
      verifyInsideCheckout(variables[name] as string, `variables.${name} (used in the path of ${origin})`);
    const target = verifyInsideCheckout(renderTemplateText(template.path, variables, `${origin} (path)`), origin);
    const previous = seen.get(target);
    if (previous !== undefined) {
      throw new UserError('TEMPLATE_SYNTAX', `${origin} and ${previous} both render to ${target}.`, {
        hint: 'Give each template a distinct path.',
      });
    }
    seen.set(target, origin);
    files.push({
      path: target,
      content: renderTemplateText(template.content, variables, origin),
      template: template.path,
    });
  }

  const patches: PlannedPatch[] = [];
  const warnings: string[] = [];
  for (const name of parseSeries(inputs.seriesText, 'patches/series')) {
    const raw = inputs.patches.get(name);
    if (raw === undefined) {
      throw new UserError('SERIES_INVALID', `patches/series lists "${name}" but patches/${name} does not exist.`, {
        hint: `Add patches/${name} or remove the line from patches/series.`,
      });
    }
    const origin = `patches/${name}`;
    verifyUnifiedDiff(raw, origin);
    const rendered = renderPatchText(raw, variables, origin);
    warnings.push(...rendered.warnings);
    const text = rendered.text;
    const patchFiles = parsePatchFiles(text, origin);
    for (const file of patchFiles) {
      const owner = seen.get(file.path);
      if (owner !== undefined) {
        throw new UserError('SERIES_INVALID', `${origin} edits ${file.path}, which ${owner} creates.`, {
          hint: 'Change new files in their template, not in a patch.',
        });
      }
    }
    patches.push({ name, text, files: patchFiles });
  }
  const unused = [...inputs.patches.keys()].filter((name) => !patches.some((p) => p.name === name));
  if (unused.length > 0) {
    throw new UserError('SERIES_INVALID', `patches/ holds ${unused.join(', ')} but patches/series does not list it.`, {
      hint: 'Add the patch to patches/series in the order it applies, or delete it.',
    });
  }

  const hash = createHash('sha256');
  hash.update(inputs.config.upstream.commit);
  for (const file of files) hash.update(`\0file\0${file.path}\0${file.content}`);
  for (const patch of patches) hash.update(`\0patch\0${patch.name}\0${patch.text}`);
  return {
    commit: inputs.config.upstream.commit,
    files,
    patches,
    inputHash: hash.digest('hex').slice(0, 16),
    warnings,
  };
}

/** The paths the plan's patches change, in series order. */
export function patchedPaths(plan: ApplyPlan): string[] {
  return [...new Set(plan.patches.flatMap((p) => p.files.map((f) => f.path)))];
}

/**
 * The plan's patches applied in memory, file by file, with the text of
 * patches/ (placeholders) kept in step. `pinned` holds the pinned content of
 * every path in `patchedPaths(plan)` (null: the patch creates the file).
 */
export function planSteps(
  plan: ApplyPlan,
  inputs: PlanInputs,
  pinned: ReadonlyMap<string, string | null>,
): PatchStep[] {
  return seriesSteps(
    plan.patches.map((p) => ({ name: p.name, raw: inputs.patches.get(p.name) ?? '', rendered: p.text })),
    pinned,
  );
}

/** Every path the plan writes, in a stable order. */
export function plannedPaths(plan: ApplyPlan): string[] {
  return [
    ...new Set([...plan.files.map((f) => f.path), ...plan.patches.flatMap((p) => p.files.map((f) => f.path))]),
  ].sort();
}

/** `verify` and `pr` have nothing to check or push for a series without templates or patches. */
export function verifySeriesNotEmpty(plan: ApplyPlan, command: string): void {
  if (plan.files.length + plan.patches.length > 0) return;
  throw new UserError(
    'SERIES_EMPTY',
    `The series is empty (no file in templates/, no patch in patches/series): \`${command}\` has nothing to ${command === 'pr' ? 'push' : 'check'}.`,
    {
      hint: 'Put your change into the series first: `mlx-storage-pr init --from <branch>` makes one from your commits, or edit the checkout and run `mlx-storage-pr export --include-new`.',
    },
  );
}
