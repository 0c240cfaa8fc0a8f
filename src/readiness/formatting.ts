import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';

import { diffArrays } from 'diff';

import { loadClangFormat } from '../adapters/clang-format.js';
import { findCMakeFormat, runCMakeFormat, type CMakeFormat } from '../adapters/cmake-format.js';
import { pythonFormatterVersion, runPythonFormatter, type PythonFormatter } from '../adapters/python-format.js';
import type { Git } from '../adapters/git.js';
import { withWriterLocks } from '../adapters/lock.js';
import { templateVariables } from '../series/config.js';
import { UserError } from '../core/errors.js';
import { isCMakeFile, isCppFile, nearestStyleFile, preCommitPins, unifiedDiff } from './format-report.js';
import { hookFiles, preCommitHooks, type PreCommitHook } from './pre-commit.js';
import { fromLines, joinPatch, splitPatch, toLines, type PatchStep, type SplitPatch } from '../core/patch.js';
import { buildPlan, patchedPaths, planSteps, type ApplyPlan, type PlanInputs } from '../series/plan.js';
import { mapFormattedBack } from '../series/template-map.js';
import { applySeries } from '../series/apply-series.js';
import { contentsAt, requirePinnedCheckout } from '../series/checkout.js';
import type { Context } from '../series/context.js';
import { gitDiffHunks } from '../series/patch-diff.js';

export const DEFAULT_CMAKE_FORMAT = '0.6.13';

/** `black+isort`: MLX's two Python hooks, checked together (isort runs with --profile=black, black's style). */
export type FormatTool = 'clang-format' | 'cmake-format' | 'black+isort';

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
export type FormatStatus = 'clean' | 'differs' | 'not-checked';

export interface FormatFinding {
  /** Path in the MLX checkout. */
  path: string;
  /** Where the fix goes: `templates/<file>` or `patches/<name>`. */
  origin: string;
  tool: FormatTool;
  status: FormatStatus;
  /** Unified diff from the current text to the formatted text. */
  diff: string | null;
  /** Why a file was not checked, or a note about it. */
  detail: string | null;
}

export interface ToolState {
  version: string | null;
  /** The version MLX's `.pre-commit-config.yaml` pins at the pinned commit. */
  pinned: string | null;
  /** Set when the tool did not run. */
  reason: string | null;
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

/** What `--fix` needs besides the report: the formatted texts and where they came from. */
interface Fixable {
  finding: FormatFinding;
  formatted: string;
  template?: { file: string; raw: string; rendered: string };
  step?: PatchStep;
  /** A reason the fix cannot be written automatically. */
  refuse?: string;
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
 * Formats every C++ and CMake file the PR adds or changes, as the rendered
 * series leaves it, with the tools and style files MLX's pre-commit uses.
 * New files are formatted whole; patched files only on the lines the patch
 * adds, so MLX's own lines stay as they are.
 */
export async function runFormatting(ctx: Context): Promise<FormatRun> {
  const env = ctx.env;
  const { inputs, plan } = await ctx.project();
  const pinned = ctx.config.upstream.commit;
  const git = await requirePinnedCheckout(ctx, {
    hint: ": format reads MLX's .clang-format and the pinned files from the checkout.",
  });

  const preCommitText = (await git.fileAt(pinned, '.pre-commit-config.yaml')) ?? '';
  const hooks = await preCommitHooks(preCommitText);
  const pins = preCommitPins(hooks);
  const seriesFiles = [...new Set([...plan.files.map((f) => f.path), ...patchedPaths(plan)])].sort();
  const styleFiles = (await git.raw(['ls-tree', '-r', '--name-only', pinned]))
    .split('\n')
    .filter((f) => path.posix.basename(f) === '.clang-format');
  const styles = new Map<string, string>();
  for (const file of styleFiles) styles.set(file, (await git.fileAt(pinned, file)) ?? '');

  const cf = await loadClangFormat();
  const wantCMake = pins.cmakeFormat ?? DEFAULT_CMAKE_FORMAT;
  const cmakeFiles = [
    ...plan.files.map((f) => f.path),
    ...plan.patches.flatMap((p) => p.files.map((f) => f.path)),
  ].filter(isCMakeFile);
  const cmakeLookup = cmakeFiles.length
    ? await findCMakeFormat(wantCMake, env, ctx.log)
    : { tool: null, reason: 'no CMake files in the PR' };
  const checkout = ctx.layout.checkout;
  const cmakeConfig = [
    '.cmake-format.yaml',
    '.cmake-format.json',
    '.cmake-format.py',
    'cmake-format.yaml',
    'cmake-format.json',
    'cmake-format.py',
  ]
    .map((f) => path.join(checkout, f))
    .find((f) => existsSync(f));

  const python = await findPythonHooks(hooks, seriesFiles, ctx);
  const report: FormatReport = {
    checkout,
    clangFormat: { version: cf.version, pinned: pins.clangFormat, reason: null },
    cmakeFormat: { version: cmakeLookup.tool?.version ?? null, pinned: pins.cmakeFormat, reason: cmakeLookup.reason },
    black: python.states.black,
    isort: python.states.isort,
    hooks: hooks.map((h) => ({ id: h.id, rev: h.rev, files: hookFiles(h, seriesFiles), run: RUN_BY_FORMAT.has(h.id) })),
    files: [],
  };
  const fixable: Fixable[] = [];
  const formatCMake = (tool: CMakeFormat, text: string) =>
    runCMakeFormat(tool, text, { cwd: checkout, configFile: cmakeConfig, env, log: ctx.log });
  const styleFor = (file: string): string | null => {
    const styleFile = nearestStyleFile(file, styleFiles);
    return styleFile === null ? null : (styles.get(styleFile) ?? null);
  };

  const record = (entry: Fixable) => {
    report.files.push(entry.finding);
    if (entry.finding.status === 'differs') fixable.push(entry);
  };
  const finding = (
    file: string,
    origin: string,
    tool: FormatTool,
    before: string,
    after: string | null,
    detail: string | null = null,
  ): FormatFinding => ({
    path: file,
    origin,
    tool,
    status: after === null ? 'not-checked' : after === before ? 'clean' : 'differs',
    diff: after === null || after === before ? null : unifiedDiff(file, before, after),
    detail,
  });

  for (const file of plan.files) {
    const origin = `templates/${file.template}`;
    const raw = inputs.templates.find((t) => t.path === file.template)?.content ?? '';
    const template = { file: file.template, raw, rendered: file.content };
    if (isCppFile(file.path)) {
      const style = styleFor(file.path);
      if (style === null) {
        record({
          finding: finding(
            file.path,
            origin,
            'clang-format',
            file.content,
            null,
            'no .clang-format applies to this path in the checkout',
          ),
          formatted: '',
        });
        continue;
      }
      const formatted = cf.format(file.content, file.path, style);
      record({ finding: finding(file.path, origin, 'clang-format', file.content, formatted), formatted, template });
    } else if (isCMakeFile(file.path)) {
      if (cmakeLookup.tool === null) {
        record({
          finding: finding(file.path, origin, 'cmake-format', file.content, null, `not checked: ${cmakeLookup.reason}`),
          formatted: '',
        });
        continue;
      }
      const formatted = await formatCMake(cmakeLookup.tool, file.content);
      record({ finding: finding(file.path, origin, 'cmake-format', file.content, formatted), formatted, template });
    }
  }

  const pinnedContent = await contentsAt(git, pinned, patchedPaths(plan));
  const steps = planSteps(plan, inputs, pinnedContent);
  for (const [index, step] of steps.entries()) {
    const origin = `patches/${step.patch}`;
    const post = fromLines({ lines: step.post.rendered, eofNewline: step.post.eofNewline });
    const laterStep = steps.slice(index + 1).find((s) => s.path === step.path);
    const refuse = laterStep
      ? `${step.path} is also changed by patches/${laterStep.patch}; apply the diff by hand`
      : step.newlineMarker
        ? `a hunk for ${step.path} changes the newline at the end of the file; apply the diff by hand`
        : undefined;
    if (isCppFile(step.path)) {
      const style = styleFor(step.path);
      if (style === null) {
        record({
          finding: finding(
            step.path,
            origin,
            'clang-format',
            post,
            null,
            'no .clang-format applies to this path in the checkout',
          ),
          formatted: '',
        });
        continue;
      }
      const formatted = cf.formatLines(post, step.added, step.path, style);
      const whole = cf.format(post, step.path, style);
      const outside = changedLineCount(formatted, whole);
      const note =
        outside > 0
          ? `clang-format on the whole file would change ${outside} more line(s) outside this patch's lines`
          : null;
      record({
        finding: finding(step.path, origin, 'clang-format', post, formatted, note),
        formatted,
        step,
        ...(refuse ? { refuse } : {}),
      });
    } else if (isCMakeFile(step.path)) {
      if (laterStep) continue;
      if (cmakeLookup.tool === null) {
        record({
          finding: finding(step.path, origin, 'cmake-format', post, null, `not checked: ${cmakeLookup.reason}`),
          formatted: '',
        });
        continue;
      }
      const formatted = await formatCMake(cmakeLookup.tool, post);
      let cmakeRefuse = refuse;
      if (formatted !== post && cmakeRefuse === undefined) {
        // cmake-format has no line ranges: fixing is safe only when MLX's own file is already clean.
        const pre = fromLines({ lines: step.pre.rendered, eofNewline: step.pre.eofNewline });
        if (pre.length > 0 && (await formatCMake(cmakeLookup.tool, pre)) !== pre)
          cmakeRefuse = `cmake-format would also reformat MLX's own lines of ${step.path}; apply the diff by hand`;
      }
      record({
        finding: finding(step.path, origin, 'cmake-format', post, formatted),
        formatted,
        step,
        ...(cmakeRefuse ? { refuse: cmakeRefuse } : {}),
      });
    }
  }
  for (const file of python.files) {
    const template = plan.files.find((f) => f.path === file);
    const fileSteps = steps.filter((s) => s.path === file);
    const last = fileSteps[fileSteps.length - 1];
    const text = template
      ? template.content
      : last && fromLines({ lines: last.post.rendered, eofNewline: last.post.eofNewline });
    if (text === undefined) continue;
    const origin = template ? `templates/${template.template}` : `patches/${last?.patch ?? '?'}`;
    if (python.tools === null) {
      record({ finding: finding(file, origin, 'black+isort', text, null, python.reason), formatted: '' });
      continue;
    }
    const formatPython = async (input: string) => {
      let out = input;
      for (const { hook, tool } of python.tools ?? [])
        out = await runPythonFormatter(tool, out, { file, args: hook.args, cwd: checkout, env, log: ctx.log });
      return out;
    };
    const formatted = await formatPython(text);
    const pre = pinnedContent.get(file) ?? null;
    // black and isort have no line ranges: say when MLX's own file at the pin is not formatted either.
    const note =
      formatted !== text && pre !== null && (await formatPython(pre)) !== pre
        ? "black/isort also change MLX's own lines of this file at the pinned commit"
        : null;
    record({
      finding: finding(file, origin, 'black+isort', text, formatted, note),
      formatted,
      refuse: `format --fix does not rewrite Python files; apply the diff to ${origin} by hand`,
    });
  }
  return { report, fixable, plan, inputs, pinnedContent, git };
}

interface PythonHooks {
  /** The series' files MLX's black or isort hook applies to. */
  files: string[];
  /** The hooks in MLX's order with the tool that runs each; null when a pinned version is missing. */
  tools: Array<{ hook: PreCommitHook; tool: PythonFormatter }> | null;
  /** Why the Python files are not checked. */
  reason: string;
  states: { black: ToolState; isort: ToolState };
}

/**
 * MLX's black and isort hooks, and the tools on PATH when they are the exact
 * versions MLX pins (another version formats differently, so it would prove
 * nothing). Looks for them only when the series changes a Python file.
 */
async function findPythonHooks(
  hooks: readonly PreCommitHook[],
  seriesFiles: readonly string[],
  ctx: Context,
): Promise<PythonHooks> {
  const python = hooks.filter((h) => h.id === 'black' || h.id === 'isort');
  const files = [...new Set(python.flatMap((h) => hookFiles(h, seriesFiles) ?? []))].sort();
  const pinnedOf = (name: string) => python.find((h) => h.id === name)?.rev ?? null;
  const state = (name: string, version: string | null, reason: string | null): ToolState => ({
    version,
    pinned: pinnedOf(name),
    reason,
  });
  if (files.length === 0) {
    const none = 'no Python files in the PR';
    return {
      files,
      tools: [],
      reason: none,
      states: { black: state('black', null, none), isort: state('isort', null, none) },
    };
  }
  const found = await Promise.all(
    python.map(async (hook) => ({
      hook,
      version: await pythonFormatterVersion(hook.id as 'black' | 'isort', ctx.env, ctx.log),
    })),
  );
  const needs = python.map((h) => `${h.id} ${h.rev ?? '?'}`).join(' and ');
  const other = found
    .filter((f) => f.version !== null && f.version !== f.hook.rev)
    .map((f) => `${f.hook.id} ${f.version ?? ''} is on PATH`);
  const missing = found.some((f) => f.hook.rev === null || f.version !== f.hook.rev);
  const reason = `not checked (needs ${needs}${other.length ? `; ${other.join(', ')}` : ''})`;
  const stateOf = (name: 'black' | 'isort') => {
    const f = found.find((x) => x.hook.id === name);
    return state(name, f?.version ?? null, missing ? reason : null);
  };
  return {
    files,
    tools: missing
      ? null
      : found.map((f) => ({
          hook: f.hook,
          tool: { name: f.hook.id as 'black' | 'isort', version: f.version as string },
        })),
    reason,
    states: { black: stateOf('black'), isort: stateOf('isort') },
  };
}

function changedLineCount(a: string, b: string): number {
  return diffArrays(toLines(a).lines, toLines(b).lines)
    .filter((c) => c.removed)
    .reduce((n, c) => n + c.count, 0);
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
