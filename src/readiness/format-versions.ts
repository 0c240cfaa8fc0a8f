import type { ReportItem } from '../core/report-items.js';
import type { FormatReport } from './formatting.js';

/**
 * What a format report means: the verdict `format` prints and the two
 * checks `verify` lists are read from the same report here.
 */

/** The fix for files that need formatting. */
export const FORMAT_FIX = 'mlx-storage-pr format --fix';

/** Problems that make `format` fail besides unformatted files: a tool version other than MLX's pin. */
export function versionProblems(report: FormatReport): string[] {
  const problems: string[] = [];
  const { clangFormat, cmakeFormat } = report;
  if (clangFormat.pinned !== null && clangFormat.version !== clangFormat.pinned) {
    problems.push(
      `MLX pins clang-format ${clangFormat.pinned}, but this tool has ${clangFormat.version ?? '?'}: update the @wasm-fmt/clang-format dependency to ${clangFormat.pinned}`,
    );
  }
  if (cmakeFormat.pinned !== null && cmakeFormat.version !== null && cmakeFormat.version !== cmakeFormat.pinned) {
    problems.push(`MLX pins cmake-format ${cmakeFormat.pinned}, but ${cmakeFormat.version} ran`);
  }
  return problems;
}

/** One of the formatting checks `verify` lists: C++ (clang-format) or CMake (cmake-format). */
export function formatReportItem(
  report: FormatReport,
  tool: 'clang-format' | 'cmake-format',
  base: Pick<ReportItem, 'id' | 'title'>,
): ReportItem {
  const { id, title } = base;
  const { version, pinned, reason } = tool === 'clang-format' ? report.clangFormat : report.cmakeFormat;
  const files = report.files.filter((f) => f.tool === tool);
  const differs = files.filter((f) => f.status === 'differs');
  const skipped = files.filter((f) => f.status === 'not-checked');
  if (pinned !== null && version !== null && version !== pinned) {
    return {
      id,
      title,
      status: 'fail',
      detail: `MLX pins ${tool} ${pinned}, but ${version} ran`,
      fix: tool === 'clang-format' ? `update @wasm-fmt/clang-format to ${pinned}` : `pip install cmakelang==${pinned}`,
      required: true,
    };
  }
  if (differs.length)
    return {
      id,
      title,
      status: 'fail',
      detail: `${differs.map((f) => `${f.path} (${f.origin})`).join(', ')} need formatting`,
      fix: FORMAT_FIX,
      required: true,
    };
  if (skipped.length) {
    const why = [...new Set(skipped.map((f) => f.detail ?? 'not checked'))].join('; ');
    return {
      id,
      title,
      status: 'not-checked',
      detail: `${skipped.map((f) => f.path).join(', ')}: ${why}`,
      ...(tool === 'cmake-format' && pinned ? { fix: `pip install cmakelang==${pinned}` } : {}),
      required: true,
    };
  }
  if (files.length === 0) {
    if (tool === 'cmake-format' && reason && reason !== 'no CMake files in the PR')
      return { id, title, status: 'not-checked', detail: reason, required: true };
    return {
      id,
      title,
      status: 'pass',
      detail: `no ${tool === 'clang-format' ? 'C++' : 'CMake'} files in the PR`,
      required: true,
    };
  }
  return {
    id,
    title,
    status: 'pass',
    detail: `${files.length} file(s) clean with ${tool} ${version ?? '?'}`,
    required: true,
  };
}
