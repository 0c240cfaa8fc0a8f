/** What MLX's formatters check: which files, which tool versions, which style file, and the diff shown. */

import path from 'node:path';

/** The files MLX's pre-commit hands to clang-format (`files: \.(h|cpp)$`). */
export function isCppFile(file: string): boolean {
  return /\.(h|cpp)$/.test(file);
}

/** The files cmake-format's pre-commit hook picks (`CMakeLists.txt`, `*.cmake`). */
export function isCMakeFile(file: string): boolean {
  return path.posix.basename(file) === 'CMakeLists.txt' || file.endsWith('.cmake');
}

export interface ToolPins {
  clangFormat: string | null;
  cmakeFormat: string | null;
}

/** The clang-format and cmake-format versions the hooks of a `.pre-commit-config.yaml` pin. */
export function preCommitPins(hooks: readonly { repo: string; rev: string | null }[]): ToolPins {
  const rev = (repo: RegExp): string | null => hooks.find((h) => repo.test(h.repo) && h.rev !== null)?.rev ?? null;
  return { clangFormat: rev(/mirrors-clang-format/), cmakeFormat: rev(/cmake-format-precommit/) };
}

/**
 * The `.clang-format` that `clang-format --style=file` uses for `file`: the
 * one in the nearest parent folder. MLX has several (docs/ and mlx/3rdparty/
 * turn formatting off).
 */
export function nearestStyleFile(file: string, styleFiles: readonly string[]): string | null {
  for (let dir = path.posix.dirname(file); ; dir = path.posix.dirname(dir)) {
    const candidate = dir === '.' ? '.clang-format' : `${dir}/.clang-format`;
    if (styleFiles.includes(candidate)) return candidate;
    if (dir === '.') return null;
  }
}
