/**
 * The Metal type-check lane, pure parts: flags, the job table and the report.
 * The lane runs `clang++ -fsyntax-only` over Metal-only TUs with Apple's
 * metal-cpp and shim headers for the Apple system headers, so calls into
 * the Metal API are checked on any OS.
 */

/** Lowest clang and libc++ major versions the lane accepts (libstdc++ and older clang give false errors). */
export const MIN_CLANG_MAJOR = 19;
export const MIN_LIBCXX_MAJOR = 19;

/** What MLX's root CMakeLists.txt downloads when its CMake does not say otherwise. */
export const DEFAULT_METAL_CPP_URL = 'https://developer.apple.com/metal/cpp/files/metal-cpp_26.zip';

export const LANE_BLIND_SPOTS = [
  'uint64_t/int64_t are unsigned long/long on Linux but unsigned long long/long long on macOS: overloads and format strings that clash on only one platform are not caught',
  'no link step: missing definitions, undefined symbols and Objective-C classes or selectors missing at run time are not caught',
  'x86_64 Linux target with shim Apple headers: Darwin-only code paths, availability (macOS 26-only APIs) and Metal shading language are not checked',
];

export type Expectation = 'pass' | 'fail' | 'verify';

export interface TypeCheckJob {
  label: string;
  file: string;
  /** `pass`: must compile; `fail`: must not; `verify`: must pass under `clang -verify` (fails for exactly the annotated reasons). */
  expect: Expectation;
  flags: string[];
}

export interface TypeCheckOutcome {
  label: string;
  expect: Expectation;
  exitCode: number;
  seconds: number;
  /** True when the result is what `expect` asks for. */
  good: boolean;
  errorCount: number;
  /** The first error lines, for the report. */
  errors: string[];
  /** Full compiler output, for the log file. */
  output: string;
}

export interface LaneInputs {
  mlxRoot: string;
  metalCpp: string;
  /** The shim headers; null on macOS, where the SDK's own headers are used. */
  shims: string | null;
  /** Extra `-isystem` folders (fmt, doctest). */
  includes: readonly string[];
}

/**
 * The flags MLX's CMake passes to the Metal TUs (C++20, MLX_STATIC,
 * header-only fmt, METAL_PATH, checkout and metal-cpp on the include path),
 * with libc++ and the shims standing in for the macOS SDK.
 */
export function laneFlags(inputs: LaneInputs): string[] {
  return [
    '-std=c++20',
    '-stdlib=libc++',
    '-fsyntax-only',
    '-fblocks',
    '-DMLX_STATIC',
    '-DFMT_HEADER_ONLY',
    '-DMETAL_PATH="/usr/local/lib/mlx.metallib"',
    '-I',
    inputs.mlxRoot,
    '-I',
    inputs.metalCpp,
    ...(inputs.shims ? ['-isystem', inputs.shims] : []),
    ...inputs.includes.flatMap((dir) => ['-isystem', dir]),
  ];
}

/**
 * The self-test: every Metal TU of MLX at the pinned commit must pass, and
 * so must the define variants MLX's CMake can produce and the shim API
 * test; `broken.cpp` must fail, and fail for exactly its annotated reasons.
 */
export function selfTestJobs(mlxRoot: string, metalTus: readonly string[], selftestDir: string): TypeCheckJob[] {
  const jobs: TypeCheckJob[] = metalTus.map((tu) => ({
    label: tu,
    file: `${mlxRoot}/${tu}`,
    expect: 'pass',
    flags: [],
  }));
  const variant = (tu: string, define: string) => {
    if (metalTus.includes(tu))
      jobs.push({ label: `${tu} [${define}]`, file: `${mlxRoot}/${tu}`, expect: 'pass', flags: [define] });
  };
  variant('mlx/backend/metal/device.cpp', '-D__MAC_26_0=260000');
  variant('mlx/backend/metal/device.cpp', '-DMLX_METAL_NO_NAX');
  variant('mlx/backend/metal/jit_kernels.cpp', '-DMLX_METAL_NO_NAX');
  jobs.push({ label: 'shims/selftest/apis_ok.cpp', file: `${selftestDir}/apis_ok.cpp`, expect: 'pass', flags: [] });
  jobs.push({ label: 'shims/selftest/broken.cpp', file: `${selftestDir}/broken.cpp`, expect: 'fail', flags: [] });
  jobs.push({
    label: 'shims/selftest/broken.cpp [-verify]',
    file: `${selftestDir}/broken.cpp`,
    expect: 'verify',
    flags: ['-Xclang', '-verify', '-Xclang', '-verify-ignore-unexpected=note'],
  });
  return jobs;
}

const ERROR_LINE = /(?:^|: )(?:fatal )?error: /;

/** Judges one compiler run against what the job expects. */
export function judge(job: TypeCheckJob, exitCode: number, output: string, seconds: number): TypeCheckOutcome {
  const errorLines = output.split('\n').filter((l) => ERROR_LINE.test(l));
  const good = job.expect === 'fail' ? exitCode !== 0 : exitCode === 0;
  const errors = errorLines.length ? errorLines.slice(0, 5) : exitCode !== 0 ? output.trim().split('\n').slice(-3) : [];
  return {
    label: job.label,
    expect: job.expect,
    exitCode,
    seconds: Math.round(seconds * 10) / 10,
    good,
    errorCount: errorLines.length,
    errors,
    output,
  };
}

/** A fix for a header the lane cannot find, when the missing header names one. */
export function missingHeaderHint(outcomes: readonly TypeCheckOutcome[]): string | null {
  const missing = new Set<string>();
  for (const o of outcomes) {
    for (const line of o.errors) {
      const match = /'([^']+)' file not found/.exec(line);
      if (match) missing.add(match[1] as string);
    }
  }
  if (missing.size === 0) return null;
  const names = [...missing];
  const known: string[] = [];
  if (names.some((n) => n.startsWith('fmt/')))
    known.push('fmt headers: `sudo apt-get install libfmt-dev` or --include <dir with fmt/>');
  if (names.some((n) => n.startsWith('doctest/')))
    known.push('doctest: `sudo apt-get install doctest-dev` or --include <dir with doctest/>');
  const other = names.filter((n) => !n.startsWith('fmt/') && !n.startsWith('doctest/'));
  if (other.length)
    known.push(
      `${other.join(', ')}: an Apple system header without a shim needs one in shims/include (see shims/README.md), other headers need --include <dir>`,
    );
  return `missing headers: ${known.join('; ')}`;
}

export interface LaneSummary {
  ok: boolean;
  passed: number;
  failed: number;
  /** Self-test only: MLX's own Metal TUs that type-checked, of all of them. */
  mlx: { ok: number; total: number } | null;
  lines: string[];
}

/** One line per TU (`ok` / `FAIL` with the first errors) and a summary line. */
export function summariseLane(
  outcomes: readonly TypeCheckOutcome[],
  options: { selfTest: boolean; jobs: number; wallSeconds: number },
): LaneSummary {
  const lines: string[] = [];
  let passed = 0;
  let failed = 0;
  for (const o of outcomes) {
    const time = `${o.seconds.toFixed(1)}s`;
    if (o.good) passed++;
    else failed++;
    if (o.expect === 'fail') {
      lines.push(
        o.good
          ? `ok   ${o.label} (failed as expected: ${o.errorCount} errors) ${time}`
          : `FAIL ${o.label} (expected errors, but it type-checked) ${time}`,
      );
    } else if (o.good) {
      lines.push(`ok   ${o.label} ${time}`);
    } else {
      lines.push(`FAIL ${o.label} ${time}`, ...o.errors.map((e) => `       ${e}`));
    }
  }
  const mlxOutcomes = outcomes.filter((o) => /^mlx\/backend\/metal\/[^/ ]+\.cpp$/.test(o.label));
  const mlx = options.selfTest ? { ok: mlxOutcomes.filter((o) => o.good).length, total: mlxOutcomes.length } : null;
  const ok = failed === 0 && outcomes.length > 0;
  const wall = `jobs ${options.jobs}; wall ${options.wallSeconds.toFixed(1)}s`;
  lines.push(
    mlx
      ? `summary: self-test ${ok ? 'PASSED' : 'FAILED'}: MLX Metal TUs ok ${mlx.ok}/${mlx.total}; checks ok ${passed}, failed ${failed}; ${wall}`
      : `summary: ${passed} ok, ${failed} failed; ${wall}`,
  );
  return { ok, passed, failed, mlx, lines };
}

/** `clang version 19.1.7` and Apple's `Apple clang version 17.0.0` alike. */
export function parseClangVersion(text: string): { version: string; major: number; apple: boolean } | null {
  const match = /(Apple )?clang version (\d+)\.(\d+)\.(\d+)/.exec(text);
  if (!match) return null;
  return { version: `${match[2]}.${match[3]}.${match[4]}`, major: Number(match[2]), apple: match[1] !== undefined };
}

/** `_LIBCPP_VERSION` is `190107` for 19.1.7 (and `15000` style for old releases). */
export function parseLibcxxVersion(value: string): { version: string; major: number } | null {
  const n = Number(value.trim());
  if (!Number.isInteger(n) || n <= 0) return null;
  const major = n >= 100000 ? Math.floor(n / 10000) : Math.floor(n / 1000);
  const rest = n >= 100000 ? n % 10000 : n % 1000;
  const minor = n >= 100000 ? Math.floor(rest / 100) : Math.floor(rest / 100);
  const patch = rest % 100;
  return { version: `${major}.${minor}.${patch}`, major };
}

/** The newest macOS release in metal-cpp's README changelog (`| macOS 26, iOS 26 | ...`). */
export function metalCppRelease(readme: string): number | null {
  const releases = [...readme.matchAll(/^\|\s*macOS (\d+)/gm)].map((m) => Number(m[1]));
  return releases.length ? Math.max(...releases) : null;
}
