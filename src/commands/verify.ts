import { checksPass, formatChecks, type CheckResult } from '../core/checks.js';
import { ExitCode, isUserError } from '../core/errors.js';
import { policyChecks } from '../core/policy.js';
import { docsCheck } from '../ops/docs.js';
import { checkFormatting, type FormatReport } from '../ops/format.js';
import { typeCheckPr } from '../ops/metal-typecheck.js';
import { verifyDepsDir } from '../ops/offline.js';
import { readPolicyFiles } from '../ops/policy-files.js';
import { buildChecks } from '../ops/verify-build.js';
import { groupRuns, skippedChecks } from '../core/verify-skip.js';
import { loadContext, type CommandResult, type Context, type GlobalOptions } from './context.js';

export interface VerifyOptions extends GlobalOptions {
  metalCpp?: string | undefined;
  jobs?: number | undefined;
  include?: string[] | undefined;
  /** Make the Metal type-check required even when its tools are missing. */
  requireMetal?: boolean | undefined;
  /** Build options, as for `test`. */
  offline?: boolean | undefined;
  depsDir?: string | undefined;
  debug?: boolean | undefined;
  cmakeArgs?: string[] | undefined;
  /** Groups or check ids to leave out (`--skip`). */
  skip?: string[] | undefined;
}

export interface VerifyData {
  command: 'verify';
  ready: boolean;
  checks: CheckResult[];
  /** Check ids left out with `--skip`. */
  skipped: string[];
}

function notChecked(id: string, title: string, error: unknown, required: boolean): CheckResult {
  if (!isUserError(error)) throw error;
  return { id, title, status: 'not-checked', detail: error.message, ...(error.hint ? { fix: error.hint } : {}), required };
}

function formatResults(report: FormatReport): CheckResult[] {
  const result = (id: string, title: string, tool: 'clang-format' | 'cmake-format', version: string | null, pinned: string | null, reason: string | null): CheckResult => {
    const files = report.files.filter((f) => f.tool === tool);
    const differs = files.filter((f) => f.status === 'differs');
    const skipped = files.filter((f) => f.status === 'not-checked');
    const fix = 'mlx-storage-pr format --fix';
    if (pinned !== null && version !== null && version !== pinned) {
      return { id, title, status: 'fail', detail: `MLX pins ${tool} ${pinned}, but ${version} ran`, fix: tool === 'clang-format' ? `update @wasm-fmt/clang-format to ${pinned}` : `pip install cmakelang==${pinned}`, required: true };
    }
    if (differs.length) return { id, title, status: 'fail', detail: `${differs.map((f) => `${f.path} (${f.origin})`).join(', ')} need formatting`, fix, required: true };
    if (skipped.length) {
      const why = [...new Set(skipped.map((f) => f.detail ?? 'not checked'))].join('; ');
      return { id, title, status: 'not-checked', detail: `${skipped.map((f) => f.path).join(', ')}: ${why}`, ...(tool === 'cmake-format' && pinned ? { fix: `pip install cmakelang==${pinned}` } : {}), required: true };
    }
    if (files.length === 0) {
      if (tool === 'cmake-format' && reason && reason !== 'no CMake files in the PR') return { id, title, status: 'not-checked', detail: reason, required: true };
      return { id, title, status: 'pass', detail: `no ${tool === 'clang-format' ? 'C++' : 'CMake'} files in the PR`, required: true };
    }
    return { id, title, status: 'pass', detail: `${files.length} file(s) clean with ${tool} ${version ?? '?'}`, required: true };
  };
  return [
    result('format-cpp', 'C++ formatting (clang-format)', 'clang-format', report.clangFormat.version, report.clangFormat.pinned, report.clangFormat.reason),
    result('format-cmake', 'CMake formatting (cmake-format)', 'cmake-format', report.cmakeFormat.version, report.cmakeFormat.pinned, report.cmakeFormat.reason),
  ];
}

async function formatStep(ctx: Context, options: VerifyOptions): Promise<CheckResult[]> {
  try {
    return formatResults((await checkFormatting(ctx, options.env)).report);
  } catch (error) {
    return [notChecked('format-cpp', 'C++ formatting (clang-format)', error, true), notChecked('format-cmake', 'CMake formatting (cmake-format)', error, true)];
  }
}

/**
 * The Metal type-check is required once it runs, or when the user asks for
 * it (--metal-cpp or --require-metal). When its tools are missing and nobody
 * asked, it is reported as not checked without failing verify: the lane
 * needs clang 19 and metal-cpp, which a Linux-only contributor may not have.
 */
async function metalStep(ctx: Context, options: VerifyOptions): Promise<CheckResult> {
  const title = 'Metal type-check (check-metal)';
  const asked = options.metalCpp !== undefined || options.requireMetal === true;
  try {
    const lane = await typeCheckPr(ctx, { env: options.env, cwd: options.cwd, metalCpp: options.metalCpp, jobs: options.jobs, includes: options.include ?? [] });
    const summary = lane.summary.lines[lane.summary.lines.length - 1] ?? '';
    if (lane.summary.ok) return { id: 'metal-typecheck', title, status: 'pass', detail: `${lane.outcomes.map((o) => o.label).join(', ')} type-check (${lane.clang.command} ${lane.clang.version}, libc++ ${lane.clang.libcxx})`, required: true };
    const failed = lane.outcomes.filter((o) => !o.good).map((o) => `${o.label}: ${o.errors[0] ?? `exit ${o.exitCode}`}`);
    return { id: 'metal-typecheck', title, status: 'fail', detail: `${failed.join('; ')} (${summary})`, fix: 'mlx-storage-pr check-metal  (full errors; logs in the workdir)', required: true };
  } catch (error) {
    return notChecked('metal-typecheck', title, error, asked);
  }
}

export async function verify(options: VerifyOptions): Promise<CommandResult<VerifyData>> {
  verifyDepsDir(options.cwd, options.depsDir);
  const ctx = await loadContext(options);
  const skipped = skippedChecks(options.skip ?? []);
  const checks: CheckResult[] = [
    ...(groupRuns('format', skipped) ? await formatStep(ctx, options) : []),
    ...(groupRuns('metal-typecheck', skipped) ? [await metalStep(ctx, options)] : []),
    ...(groupRuns('docs', skipped) ? [await docsCheck(ctx, options.env)] : []),
    ...(groupRuns('pr-text', skipped) ? policyChecks(await readPolicyFiles(ctx.projectRoot)) : []),
    ...(groupRuns('build', skipped) ? await buildChecks(ctx, options) : []),
  ].filter((c) => !skipped.includes(c.id));
  const ready = checksPass(checks);
  const blocking = checks.filter((c) => c.required && c.status !== 'pass').length;
  const lines = [
    ...formatChecks(checks),
    ...(skipped.length ? [`left out (--skip): ${skipped.join(', ')}`] : []),
    ready ? 'Ready: every required check passes.' : `Not ready: ${blocking} required check(s) did not pass.`,
  ];
  return { data: { command: 'verify', ready, checks, skipped }, lines, ...(ready ? {} : { exitCode: ExitCode.failure }) };
}
