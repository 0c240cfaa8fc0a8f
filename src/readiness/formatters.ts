/**
 * MLX's formatters behind one interface. `format` cuts the series into units
 * (each template's file, each patch's change to a file, each file as the
 * whole series leaves it) and hands every unit to the formatter that takes it.
 */
import { diffArrays } from 'diff';

import type { ClangFormat } from '../adapters/clang-format.js';
import { runCMakeFormat, type CMakeFormat, type CMakeFormatLookup } from '../adapters/cmake-format.js';
import type { Env } from '../adapters/env.js';
import type { Logger } from '../adapters/log.js';
import { pythonFormatterVersion, runPythonFormatter, type PythonFormatter } from '../adapters/python-format.js';
import { fromLines, toLines, unifiedDiff, type PatchStep } from '../core/patch.js';
import { isCMakeFile, isCppFile } from './format-report.js';
import { hookFiles, type PreCommitHook } from './pre-commit.js';

/** `black+isort`: MLX's two Python hooks, checked together (isort runs with --profile=black, black's style). */
export type FormatTool = 'clang-format' | 'cmake-format' | 'black+isort';

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

/** A finding, and what `--fix` needs besides it: the formatted text and where it came from. */
export interface Fixable {
  finding: FormatFinding;
  formatted: string;
  template?: { file: string; raw: string; rendered: string };
  step?: PatchStep;
  /** A reason the fix cannot be written automatically. */
  refuse?: string;
}

/** A piece of the series to format, with its text as the series renders it. */
export type FormatUnit =
  | { kind: 'template'; path: string; origin: string; text: string; template: NonNullable<Fixable['template']> }
  | {
      kind: 'step';
      path: string;
      origin: string;
      text: string;
      step: PatchStep;
      /** True when a later patch changes the same file. */
      changedLater: boolean;
      /** Why a fix of this step cannot be written back automatically. */
      refuse: string | undefined;
    }
  | {
      kind: 'file';
      path: string;
      origin: string;
      text: string;
      /** The file at the pinned commit; null when the series creates it. */
      pinned: string | null;
    };

export interface Formatter {
  tool: FormatTool;
  /** True for the units this formatter checks. */
  takes(unit: FormatUnit): boolean;
  /** The finding for a unit it takes; null when the unit is left to another (a later patch of the same file). */
  check(unit: FormatUnit): Promise<Fixable | null>;
}

/** A finding for `file`: not checked when `after` is null, else clean or differing, with the diff. */
export function finding(
  unit: Pick<FormatUnit, 'path' | 'origin'>,
  tool: FormatTool,
  before: string,
  after: string | null,
  detail: string | null = null,
): FormatFinding {
  return {
    path: unit.path,
    origin: unit.origin,
    tool,
    status: after === null ? 'not-checked' : after === before ? 'clean' : 'differs',
    diff: after === null || after === before ? null : unifiedDiff(unit.path, before, after),
    detail,
  };
}

const notChecked = (unit: FormatUnit, tool: FormatTool, detail: string): Fixable => ({
  finding: finding(unit, tool, unit.text, null, detail),
  formatted: '',
});

/** The template or the patch step a fix is written back to. */
const source = (unit: FormatUnit) =>
  unit.kind === 'template' ? { template: unit.template } : unit.kind === 'step' ? { step: unit.step } : {};

/**
 * clang-format with the `.clang-format` nearest to each file: new files are
 * formatted whole, patched files only on the lines the patch adds, so MLX's
 * own lines stay as they are.
 */
export function clangFormatter(cf: ClangFormat, styleFor: (file: string) => string | null): Formatter {
  const tool = 'clang-format';
  const check = (unit: FormatUnit): Fixable => {
    const style = styleFor(unit.path);
    if (style === null) return notChecked(unit, tool, 'no .clang-format applies to this path in the checkout');
    if (unit.kind !== 'step') {
      const formatted = cf.format(unit.text, unit.path, style);
      return { finding: finding(unit, tool, unit.text, formatted), formatted, ...source(unit) };
    }
    const formatted = cf.formatLines(unit.text, unit.step.added, unit.path, style);
    const outside = changedLineCount(formatted, cf.format(unit.text, unit.path, style));
    const note =
      outside > 0
        ? `clang-format on the whole file would change ${outside} more line(s) outside this patch's lines`
        : null;
    return {
      finding: finding(unit, tool, unit.text, formatted, note),
      formatted,
      step: unit.step,
      ...(unit.refuse ? { refuse: unit.refuse } : {}),
    };
  };
  return {
    tool,
    takes: (unit) => unit.kind !== 'file' && isCppFile(unit.path),
    check: (unit) => Promise.resolve(check(unit)),
  };
}

/**
 * cmake-format on the whole file. It has no line ranges, so a patched file
 * is checked once, after the last patch that changes it, and a fix is
 * written back only when MLX's own file is already clean.
 */
export function cmakeFormatter(
  lookup: CMakeFormatLookup,
  run: { cwd: string; configFile: string | undefined; env: Env; log: Logger },
): Formatter {
  const tool = 'cmake-format';
  const format = (found: CMakeFormat, text: string) => runCMakeFormat(found, text, run);
  return {
    tool,
    takes: (unit) => unit.kind !== 'file' && isCMakeFile(unit.path),
    check: async (unit) => {
      if (unit.kind === 'step' && unit.changedLater) return null;
      if (lookup.tool === null) return notChecked(unit, tool, `not checked: ${lookup.reason}`);
      const formatted = await format(lookup.tool, unit.text);
      if (unit.kind !== 'step')
        return { finding: finding(unit, tool, unit.text, formatted), formatted, ...source(unit) };
      let refuse = unit.refuse;
      if (formatted !== unit.text && refuse === undefined) {
        const pre = fromLines({ lines: unit.step.pre.rendered, eofNewline: unit.step.pre.eofNewline });
        if (pre.length > 0 && (await format(lookup.tool, pre)) !== pre)
          refuse = `cmake-format would also reformat MLX's own lines of ${unit.path}; apply the diff by hand`;
      }
      return {
        finding: finding(unit, tool, unit.text, formatted),
        formatted,
        step: unit.step,
        ...(refuse ? { refuse } : {}),
      };
    },
  };
}

export interface PythonHooks {
  /** The series' files MLX's black or isort hook applies to. */
  files: string[];
  /** The hooks in MLX's order with the tool that runs each; null when a pinned version is missing. */
  tools: Array<{ hook: PreCommitHook; tool: PythonFormatter }> | null;
  /** Why the Python files are not checked. */
  reason: string;
  states: { black: ToolState; isort: ToolState };
}

/**
 * black then isort, as MLX's hooks run them, on each Python file as the
 * whole series leaves it. They have no line ranges, so the finding says when
 * MLX's own file at the pin is not formatted either; `--fix` leaves Python
 * files to the user.
 */
export function pythonFormatter(python: PythonHooks, run: { cwd: string; env: Env; log: Logger }): Formatter {
  const tool = 'black+isort';
  const format = async (file: string, input: string) => {
    let out = input;
    for (const { hook, tool: formatter } of python.tools ?? [])
      out = await runPythonFormatter(formatter, out, { file, args: hook.args, ...run });
    return out;
  };
  return {
    tool,
    takes: (unit) => unit.kind === 'file' && python.files.includes(unit.path),
    check: async (unit) => {
      if (python.tools === null) return notChecked(unit, tool, python.reason);
      const formatted = await format(unit.path, unit.text);
      const pre = unit.kind === 'file' ? unit.pinned : null;
      const note =
        formatted !== unit.text && pre !== null && (await format(unit.path, pre)) !== pre
          ? "black/isort also change MLX's own lines of this file at the pinned commit"
          : null;
      return {
        finding: finding(unit, tool, unit.text, formatted, note),
        formatted,
        refuse: `format --fix does not rewrite Python files; apply the diff to ${unit.origin} by hand`,
      };
    },
  };
}

/**
 * MLX's black and isort hooks, and the tools on PATH when they are the exact
 * versions MLX pins (another version formats differently, so it would prove
 * nothing). Looks for them only when the series changes a Python file.
 */
export async function findPythonHooks(
  hooks: readonly PreCommitHook[],
  seriesFiles: readonly string[],
  o: { env: Env; log: Logger },
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
      version: await pythonFormatterVersion(hook.id as 'black' | 'isort', o.env, o.log),
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
