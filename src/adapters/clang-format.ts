import init, { format, format_line_range, version } from '@wasm-fmt/clang-format';

import { UserError } from '../core/errors.js';

/** clang-format compiled to WebAssembly: the same version on every OS, nothing to install. */
export interface ClangFormat {
  /** The version clang-format reports, e.g. `21.1.8`. */
  version: string;
  /** Formats a whole file. `file` decides the language; `style` is the text of a `.clang-format`. */
  format(text: string, file: string, style: string): string;
  /** Formats only the given 1-based, inclusive line ranges (`clang-format --lines`). */
  formatLines(text: string, ranges: ReadonlyArray<[number, number]>, file: string, style: string): string;
}

let loaded: Promise<ClangFormat> | undefined;

function styleError(file: string, error: unknown): UserError {
  return new UserError('CHECK_FAILED', `clang-format failed on ${file}: ${(error as Error).message}`, {
    hint: 'Check the .clang-format of the MLX checkout and the file for syntax clang-format cannot read.',
  });
}

export function loadClangFormat(): Promise<ClangFormat> {
  loaded ??= init().then(() => {
    const reported = version();
    const match = /clang-format version (\d+\.\d+\.\d+)/.exec(reported);
    return {
      version: match ? (match[1] as string) : reported,
      format(text, file, style) {
        try {
          return format(text, file, style);
        } catch (error) {
          throw styleError(file, error);
        }
      },
      formatLines(text, ranges, file, style) {
        if (ranges.length === 0) return text;
        try {
          // The package's type declarations swap the range types of the two range functions; this one takes lines.
          return format_line_range(text, ranges as unknown as Array<[number, number]>, file, style);
        } catch (error) {
          throw styleError(file, error);
        }
      },
    } satisfies ClangFormat;
  });
  return loaded;
}
