import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

import { loadClangFormat } from '../adapters/clang-format.js';
import { findCMakeFormat, type CMakeFormatLookup } from '../adapters/cmake-format.js';
import type { Git } from '../adapters/git.js';
import { withWriterLocks } from '../adapters/lock.js';
import { templateVariables } from '../series/config.js';
import { UserError } from '../core/errors.js';
import { isCMakeFile, nearestStyleFile, preCommitPins, type ToolPins } from './format-report.js';
import {
  clangFormatter,
  cmakeFormatter,
  findPythonHooks,
  pythonFormatter,
  type Fixable,
  type FormatFinding,
  type Formatter,
  type FormatUnit,
  type ToolState,
} from './formatters.js';
import { hookFiles, preCommitHooks, type PreCommitHook } from './pre-commit.js';
import { fromLines, joinPatch, splitPatch, toLines, type SplitPatch } from '../core/patch.js';
import { buildPlan, patchedPaths, planSteps, type ApplyPlan, type PlanInputs } from '../series/plan.js';
import { mapFormattedBack } from '../series/template-map.js';
import { applySeries } from '../series/apply-series.js';
import { contentsAt, requirePinnedCheckout } from '../series/checkout.js';
import type { Context } from '../series/context.js';
import { gitDiffHunks } from '../series/patch-diff.js';

export type { FormatFinding, FormatStatus, FormatTool, ToolState } from './formatters.js';

export const DEFAULT_CMAKE_FORMAT = '0.6.13';

/** The hooks `format` runs; MLX's other hooks (check-yaml) are listed but not run. */
const RUN_BY_FORMAT = new Set(['clang-format', 'cmake-format', 'black', 'isort']);

/** One of MLX's pre-commit hooks and the files of the series it applies to. */
export interface HookUse {
  id: string;
  /** The version MLX's `.pre-commit-config.yaml` pins (its `rev`). */
  rev: string | null;
  /** The series' files the hook applies to; null: this tool does not know the hook's file types. */
  files: string[] | null;
  /** True when `format` runs the hook (or its tool) on those files. */
  run: boolean;
}

export interface FormatReport {
  checkout: string;
  clangFormat: ToolState;
  cmakeFormat: ToolState;
  /** black and isort, run on the series' Python files only when both are the versions MLX pins. */
  black: ToolState;
  isort: ToolState;
  /** MLX's pre-commit hooks at the pinned commit, in its order, with the series' files each applies to. */
  hooks: HookUse[];
  files: FormatFinding[];
}

export interface FormatRun {
  report: FormatReport;
  fixable: Fixable[];
  plan: ApplyPlan;
  inputs: PlanInputs;
  /** Content at the pinned commit of every file the patches touch (null: created by a patch). */
  pinnedContent: ReadonlyMap<string, string | null>;
  /** The checkout, where regenerated patches are diffed. */
  git: Git;
}

/**
 * Formats every file the PR adds or changes, as the rendered series leaves
 * it, with the tools and style files MLX's pre-commit uses: each template's
 * file, each patch's change and each file of the series goes to the formatter
 * that takes it (formatters.ts), in that order.
 */
export async function runFormatting(ctx: Context): Promise<FormatRun> {
  const { inputs, plan } = await ctx.project();
  const pinned = ctx.config.upstream.commit;
  const git = await requirePinnedCheckout(ctx, {
    hint: ": format reads MLX's .clang-format and the pinned files from the checkout.",
  });
  const preCommitText = (await git.fileAt(pinned, '.pre-commit-config.yaml')) ?? '';
  const hooks = await preCommitHooks(preCommitText);
  const seriesFiles = [...new Set([...plan.files.map((f) => f.path), ...patchedPaths(plan)])].sort();
  const tools = await findFormatters(ctx, git, plan, { pins: preCommitPins(hooks), hooks, seriesFiles });
  const report: FormatReport = {
    checkout: ctx.layout.checkout,
    ...tools.states,
    hooks: hooks.map((h) => ({ id: h.id, rev: h.rev, files: hookFiles(h, seriesFiles), run: RUN_BY_FORMAT.has(h.id) })),
    files: [],
  };
  const pinnedContent = await contentsAt(git, pinned, patchedPaths(plan));
  const fixable: Fixable[] = [];
  for (const unit of formatUnits(plan, inputs, pinnedContent, seriesFiles)) {
    const formatter = tools.formatters.find((f) => f.takes(unit));
    const entry = formatter ? await formatter.check(unit) : null;
    if (entry === null) continue;
    report.files.push(entry.finding);
    if (entry.finding.status === 'differs') fixable.push(entry);
  }
  return { report, fixable, plan, inputs, pinnedContent, git };
}

/** The formatters, each with the tool and style MLX pins, and their states for the report. */
async function findFormatters(
  ctx: Context,
  git: Git,
  plan: ApplyPlan,
  o: { pins: ToolPins; hooks: readonly PreCommitHook[]; seriesFiles: readonly string[] },
): Promise<{ formatters: Formatter[]; states: Pick<FormatReport, 'clangFormat' | 'cmakeFormat' | 'black' | 'isort'> }> {
  const pinned = ctx.config.upstream.commit;
  const styleFiles = (await git.raw(['ls-tree', '-r', '--name-only', pinned]))
    .split('\n')
    .filter((f) => path.posix.basename(f) === '.clang-format');
  const styles = new Map<string, string>();
  for (const file of styleFiles) styles.set(file, (await git.fileAt(pinned, file)) ?? '');
  const styleFor = (file: string): string | null => {
    const styleFile = nearestStyleFile(file, styleFiles);
    return styleFile === null ? null : (styles.get(styleFile) ?? null);
  };
  const cf = await loadClangFormat();
  const cmakeFiles = [
    ...plan.files.map((f) => f.path),
    ...plan.patches.flatMap((p) => p.files.map((f) => f.path)),
  ].filter(isCMakeFile);
  const cmake: CMakeFormatLookup = cmakeFiles.length
    ? await findCMakeFormat(o.pins.cmakeFormat ?? DEFAULT_CMAKE_FORMAT, ctx.env, ctx.log)
    : { tool: null, reason: 'no CMake files in the PR' };
  const checkout = ctx.layout.checkout;
  const configFile = CMAKE_FORMAT_CONFIGS.map((f) => path.join(checkout, f)).find((f) => existsSync(f));
  const python = await findPythonHooks(o.hooks, o.seriesFiles, ctx);
  const run = { cwd: checkout, env: ctx.env, log: ctx.log };
  return {
    formatters: [
      clangFormatter(cf, styleFor),
      cmakeFormatter(cmake, { ...run, configFile }),
      pythonFormatter(python, run),
    ],
    states: {
      clangFormat: { version: cf.version, pinned: o.pins.clangFormat, reason: null },
      cmakeFormat: { version: cmake.tool?.version ?? null, pinned: o.pins.cmakeFormat, reason: cmake.reason },
      black: python.states.black,
      isort: python.states.isort,
    },
  };
}

/** cmake-format's configuration files, in the order it looks for them. */
const CMAKE_FORMAT_CONFIGS = [
  '.cmake-format.yaml',
  '.cmake-format.json',
  '.cmake-format.py',
  'cmake-format.yaml',
  'cmake-format.json',
  'cmake-format.py',
];

/** The series cut for the formatters: each template's file, each patch's change to a file, then each file as the whole series leaves it. */
function formatUnits(
  plan: ApplyPlan,
  inputs: PlanInputs,
  pinnedContent: ReadonlyMap<string, string | null>,
  seriesFiles: readonly string[],
): FormatUnit[] {
  const templates = plan.files.map((file): FormatUnit => {
    const raw = inputs.templates.find((t) => t.path === file.template)?.content ?? '';
    const template = { file: file.template, raw, rendered: file.content };
    return { kind: 'template', path: file.path, origin: `templates/${file.template}`, text: file.content, template };
  });
  const steps = planSteps(plan, inputs, pinnedContent);
  const changes = steps.map((step, index): FormatUnit => {
    const laterStep = steps.slice(index + 1).find((s) => s.path === step.path);
    const refuse = laterStep
      ? `${step.path} is also changed by patches/${laterStep.patch}; apply the diff by hand`
      : step.newlineMarker
        ? `a hunk for ${step.path} changes the newline at the end of the file; apply the diff by hand`
        : undefined;
    const text = fromLines({ lines: step.post.rendered, eofNewline: step.post.eofNewline });
    return {
      kind: 'step',
      path: step.path,
      origin: `patches/${step.patch}`,
      text,
      step,
      changedLater: !!laterStep,
      refuse,
    };
  });
  const files = seriesFiles.flatMap((file): FormatUnit[] => {
    const template = plan.files.find((f) => f.path === file);
    const last = steps.filter((s) => s.path === file).at(-1);
    const text = template
      ? template.content
      : last && fromLines({ lines: last.post.rendered, eofNewline: last.post.eofNewline });
    if (text === undefined) return [];
    const origin = template ? `templates/${template.template}` : `patches/${last?.patch ?? '?'}`;
    return [{ kind: 'file', path: file, origin, text, pinned: pinnedContent.get(file) ?? null }];
  });
  return [...templates, ...changes, ...files];
}

/**
 * Writes the formatting back into templates/ and patches/, keeping
 * placeholders. Checks the result before writing anything: the new series
 * must render to exactly the formatted files. Returns the project files written.
 */
export async function writeFormatFixes(ctx: Context, run: FormatRun): Promise<string[]> {
  const variables = templateVariables(ctx.config);
  const refused = run.fixable.filter((f) => f.refuse !== undefined);
  if (refused.length > 0) {
    throw new UserError(
      'CHECK_FAILED',
      `format --fix cannot rewrite:\n  ${refused.map((f) => `${f.finding.origin}: ${f.refuse}`).join('\n  ')}`,
      {
        hint: 'Apply the printed diffs to these files by hand, keeping the {{placeholders}}; then run `mlx-storage-pr apply`.',
      },
    );
  }

  const templates = new Map<string, string>();
  const patches = new Map<string, SplitPatch>();
  for (const item of run.fixable) {
    const formatted = toLines(item.formatted);
    if (item.template) {
      const raw = toLines(item.template.raw);
      const lines = mapFormattedBack(
        raw.lines,
        toLines(item.template.rendered).lines,
        formatted.lines,
        variables,
        item.finding.origin,
      );
      templates.set(item.template.file, fromLines({ lines, eofNewline: formatted.eofNewline }));
    } else if (item.step) {
      const step = item.step;
      const newRaw = mapFormattedBack(
        step.post.raw,
        step.post.rendered,
        formatted.lines,
        variables,
        item.finding.origin,
      );
      let split = patches.get(step.patch);
      if (split === undefined) {
        split = splitPatch(run.inputs.patches.get(step.patch) ?? '', item.finding.origin);
        patches.set(step.patch, split);
      }
      const section = split.sections[step.sectionIndex];
      if (section === undefined) throw new Error(`${item.finding.origin}: section ${step.sectionIndex} vanished`);
      const pre = fromLines({ lines: step.pre.raw, eofNewline: step.pre.eofNewline });
      section.hunks = await gitDiffHunks(
        run.git,
        step.path,
        pre,
        fromLines({ lines: newRaw, eofNewline: formatted.eofNewline }),
      );
    }
  }

  // Re-render the new series in memory and compare with the formatted text before touching any file.
  const newInputs: PlanInputs = {
    ...run.inputs,
    templates: run.inputs.templates.map((t) => ({ path: t.path, content: templates.get(t.path) ?? t.content })),
    patches: new Map(
      [...run.inputs.patches].map(([name, text]) => [
        name,
        patches.has(name) ? joinPatch(patches.get(name) as SplitPatch) : text,
      ]),
    ),
  };
  const plan = buildPlan(newInputs);
  const newSteps = planSteps(plan, newInputs, run.pinnedContent);
  for (const item of run.fixable) {
    let result: string | undefined;
    if (item.template) result = plan.files.find((f) => f.template === item.template?.file)?.content;
    else if (item.step) {
      const step = item.step;
      const after = newSteps.find((s) => s.patch === step.patch && s.path === step.path);
      result = after && fromLines({ lines: after.post.rendered, eofNewline: after.post.eofNewline });
    }
    if (result !== item.formatted)
      throw new Error(
        `${item.finding.origin}: the rewritten file does not render to the formatted ${item.finding.path}`,
      );
  }
  const writes: Array<[string, string]> = [
    ...[...templates].map(([file, text]): [string, string] => [`templates/${file}`, text]),
    ...[...patches].map(([name, split]): [string, string] => [`patches/${name}`, joinPatch(split)]),
  ];
  for (const [file, text] of writes) await writeFile(path.join(ctx.projectRoot, file), text);
  return writes.map(([file]) => file);
}

/**
 * Checks the formatting; with `fix`, writes the fixes into templates/ and
 * patches/, applies the new series so the checkout matches, and checks again.
 */
export async function formatSeries(
  ctx: Context,
  options: { fix?: boolean | undefined },
): Promise<{ run: FormatRun; fixed: string[] }> {
  const run = await runFormatting(ctx);
  if (!options.fix || run.fixable.length === 0) return { run, fixed: [] };
  // The lock is taken before templates/ and patches/ are rewritten: a run that cannot apply writes nothing.
  const fixed = await withWriterLocks(ctx.workdir, ctx.projectRoot, 'format', async () => {
    const written = await writeFormatFixes(ctx, run);
    ctx.log.info(`Rewrote ${written.join(', ')}; applying the series again so the checkout matches.`);
    await ctx.reloadProject();
    await applySeries(ctx, { lockHeld: true });
    return written;
  });
  return { run: await runFormatting(ctx), fixed };
}
