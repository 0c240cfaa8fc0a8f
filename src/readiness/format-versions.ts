import type { ReportItem } from '../core/report-items.js';
import type { FormatReport, FormatTool } from './formatting.js';

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

/** The formatting checks `verify` lists: one for C++ (clang-format), one for CMake (cmake-format). */
export function formatReportItems(report: FormatReport): ReportItem[] {
  const result = (
    id: string,
    title: string,
    tool: FormatTool,
    version: string | null,
    pinned: string | null,
    reason: string | null,
  ): ReportItem => {
    const files = report.files.filter((f) => f.tool === tool);
    const differs = files.filter((f) => f.status === 'differs');
    const skipped = files.filter((f) => f.status === 'not-checked');
    if (pinned !== null && version !== null && version !== pinned) {
      return {
        id,
        title,
        status: 'fail',
        detail: `MLX pins ${tool} ${pinned}, but ${version} ran`,
        fix:
          tool === 'clang-format' ? `update @wasm-fmt/clang-format to ${pinned}` : `pip install cmakelang==${pinned}`,
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
  };
  return [
    result(
      FORMAT_CHECKS.cpp.id,
      FORMAT_CHECKS.cpp.title,
      'clang-format',
      report.clangFormat.version,
      report.clangFormat.pinned,
      report.clangFormat.reason,
    ),
    result(
      FORMAT_CHECKS.cmake.id,
      FORMAT_CHECKS.cmake.title,
      'cmake-format',
      report.cmakeFormat.version,
      report.cmakeFormat.pinned,
      report.cmakeFormat.reason,
    ),
  ];
}

export const FORMAT_CHECKS = {
  cpp: { id: 'format-cpp', title: 'C++ formatting (clang-format)' },
  cmake: { id: 'format-cmake', title: 'CMake formatting (cmake-format)' },
} as const;
