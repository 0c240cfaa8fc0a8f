/**
 * MLX's sanitizer job at the pin (`.github/scripts/build-sanitizer-tests.sh`): a static Debug build with warnings as
 * errors and `-DUSE_ASAN=ON` or `-DUSE_UBSAN=ON`, run with `ASAN_OPTIONS=detect_leaks=0` and
 * `UBSAN_OPTIONS=halt_on_error=0:print_stacktrace=1`. `test --sanitize` builds both trees this way. The rest of this
 * file is pure: reading sanitizer reports from a test run's output and deciding which of them count.
 */
import type { CaseResult } from './doctest.js';

export const SANITIZERS = ['asan', 'ubsan'] as const;
export type Sanitizer = (typeof SANITIZERS)[number];

export const SANITIZER_NAMES: Record<Sanitizer, string> = {
  asan: 'AddressSanitizer',
  ubsan: 'UndefinedBehaviorSanitizer',
};

/** The build options of MLX's sanitizer job; the user's own CMake arguments come last and win. */
export function sanitizerBuild(sanitizer: Sanitizer): { debug: true; cmakeArgs: string[] } {
  return {
    debug: true,
    cmakeArgs: ['-DCMAKE_COMPILE_WARNING_AS_ERROR=ON', sanitizer === 'asan' ? '-DUSE_ASAN=ON' : '-DUSE_UBSAN=ON'],
  };
}

/** The test binary's sanitizer settings, as MLX's job sets them. */
export function sanitizerRunEnv(sanitizer: Sanitizer): Record<string, string> {
  return sanitizer === 'asan'
    ? { ASAN_OPTIONS: 'detect_leaks=0' }
    : { UBSAN_OPTIONS: 'halt_on_error=0:print_stacktrace=1' };
}

/** How this lane differs from MLX's job, said with every result. */
export const STRICTER_THAN_MLX =
  "stricter than MLX's sanitizer job: here any report in a new or twin case fails, UBSAN's too (MLX runs UBSAN with halt_on_error=0, so its UBSAN reports never fail its job)";

export interface SanitizerReport {
  /** The sanitizer's one-line description: `heap-buffer-overflow on address …`, `src/x.cpp:4:12: runtime error: …`. */
  message: string;
  /** The first frames of the report's stack, without addresses: `#0 f(int) /src/x.cpp:4`. */
  frames: string[];
}

const ASAN_HEADER = /^==\d+==ERROR: (?:AddressSanitizer|LeakSanitizer): (.*)$/;
const UBSAN_HEADER = /^(.+?:\d+(?::\d+)?): runtime error: (.*)$/;
const FRAME = /^\s*#(\d+) 0x[0-9a-f]+\s+(?:in )?(.*)$/;

/** Every sanitizer report in a run's output, in order, with up to `maxFrames` frames of its first stack. */
export function parseSanitizerReports(output: string, maxFrames = 6): SanitizerReport[] {
  const reports: SanitizerReport[] = [];
  let current: SanitizerReport | null = null;
  let stackDone = false;
  for (const line of output.split(/\r?\n/)) {
    const asan = ASAN_HEADER.exec(line);
    const ubsan = asan ? null : UBSAN_HEADER.exec(line);
    if (asan || ubsan) {
      current = { message: asan ? (asan[1] as string) : `${ubsan?.[1]}: ${ubsan?.[2]}`, frames: [] };
      stackDone = false;
      reports.push(current);
      continue;
    }
    if (!current || stackDone) continue;
    const frame = FRAME.exec(line);
    if (frame) {
      if (current.frames.length < maxFrames) current.frames.push(`#${frame[1]} ${frame[2]}`);
    } else if (current.frames.length > 0) {
      // The first stack ends at the first line that is not a frame; later stacks (allocation, free) are not kept.
      stackDone = true;
    }
  }
  return reports;
}

/** A case with its reports as failures: a case with a report fails, even when all its checks passed. */
export function withReports(c: CaseResult, reports: readonly SanitizerReport[]): CaseResult {
  if (reports.length === 0) return c;
  return {
    ...c,
    status: c.status === 'passed' ? 'failed' : c.status,
    failures: [
      ...c.failures,
      ...reports.map((r) => ({
        file: c.file,
        line: c.line,
        message: `sanitizer: ${r.message}${r.frames[0] ? ` (${r.frames[0]})` : ''}`,
      })),
    ],
  };
}

/** A case run alone under the sanitizer: a new case of the suite or a case of the Metal twin. */
export interface SoloCase {
  name: string;
  where: 'suite' | 'twin';
  reports: SanitizerReport[];
}

export interface SanitizerVerdict {
  /** The cases run alone that have a report: each is a failure. */
  failing: SoloCase[];
  /** Reports in the rest of the suite beyond the baseline's count (0 when the baseline has as many or more). */
  extraReports: number;
}

/**
 * Which reports count. A report in a case run alone belongs to that case, and every such case is new (the PR's
 * suite cases and its twin cases), so each is a failure (`withReports` makes the case fail). The rest of the suite
 * runs once per tree, where one case's report cannot be told from another's, so only the number of reports is
 * compared with the baseline; without a baseline every report there counts.
 */
export function judgeSanitizer(
  solo: readonly SoloCase[],
  rest: { patched: number; baseline: number | null },
): SanitizerVerdict {
  return {
    failing: solo.filter((c) => c.reports.length > 0),
    extraReports: Math.max(0, rest.patched - (rest.baseline ?? 0)),
  };
}
