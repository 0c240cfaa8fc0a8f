/**
 * How MLX's own Linux CI builds the C++ at the pin (`.github/workflows/build_and_test.yml`, `.github/actions/build`
 * and `.github/actions/setup`): Debug, shared libraries (a missing `MLX_API` shows only there), warnings as errors.
 * `test --upstream-ci` builds the patched tree and the baseline this way, so only new warnings and failures count.
 */
export const UPSTREAM_LINUX_CI = {
  debug: true,
  cmakeArgs: ['-DBUILD_SHARED_LIBS=ON', '-DCMAKE_COMPILE_WARNING_AS_ERROR=ON'],
} as const;

/** The build options of `test` with MLX's Linux CI leg applied; the user's own CMake arguments come last and win. */
export function withUpstreamCi<T extends { debug: boolean; cmakeArgs: string[] }>(options: T, upstreamCi: boolean): T {
  if (!upstreamCi) return options;
  return {
    ...options,
    debug: UPSTREAM_LINUX_CI.debug,
    cmakeArgs: [...UPSTREAM_LINUX_CI.cmakeArgs, ...options.cmakeArgs],
  };
}
