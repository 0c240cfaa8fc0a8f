/**
 * The Metal twin: the PR's Metal-only tests built and run on a Linux CPU
 * build of MLX, against a host stand-in for the metal-cpp calls they make
 * (twin/Metal/Metal.hpp). The build itself is twin/metal-twin.cmake, loaded
 * into the same CMake build as the suite.
 */

/** The CMake target that builds the twin test executable. */
export const TWIN_TARGET = 'mlx_storage_pr_metal_twin';
/** The twin test executable, relative to the build folder. */
export const TWIN_BINARY = 'mlx-storage-pr-twin/metal-twin-tests';
/** Which library symbols the twin build made weak, one "<member> <symbol>" per line. */
export const TWIN_WEAKENED = 'mlx-storage-pr-twin/weakened.txt';

/** What a twin run shows, and what only a run on a Mac shows. */
export const TWIN_SHOWS =
  "the PR's logic against MLX's real array semantics: offsets, strides, flags, donation, the buffer cache, events on CPU streams";
export const TWIN_CANNOT_SHOW =
  "Metal's allocator (page rounding, heaps for small arrays, residency), GPU streams, command buffers and Metal events";

export interface TwinInputs {
  /** twin/metal-twin.cmake in this package. */
  cmakeModule: string;
  /** The folder holding the twin's Metal/Metal.hpp. */
  includeDir: string;
  /** The library target (mlx) and the test executable target (tests). */
  library: string;
  testsTarget: string;
  /** Checkout paths: the doctest main, the PR's Metal sources and its Metal-only test files. */
  main: string;
  sources: readonly string[];
  testSources: readonly string[];
}

/** The CMake arguments that make the twin target available in a build (it is built only when asked). */
export function twinCmakeArgs(i: TwinInputs): string[] {
  return [
    `-DCMAKE_PROJECT_INCLUDE=${i.cmakeModule}`,
    `-DMLX_STORAGE_PR_TWIN_INCLUDE=${i.includeDir}`,
    `-DMLX_STORAGE_PR_TWIN_LIBRARY=${i.library}`,
    `-DMLX_STORAGE_PR_TWIN_TESTS=${i.testsTarget}`,
    `-DMLX_STORAGE_PR_TWIN_MAIN=${i.main}`,
    `-DMLX_STORAGE_PR_TWIN_SOURCES=${i.sources.join(';')}`,
    `-DMLX_STORAGE_PR_TWIN_TEST_SOURCES=${i.testSources.join(';')}`,
  ];
}

export interface WeakenedSymbol {
  member: string;
  symbol: string;
}

export function parseWeakened(text: string): WeakenedSymbol[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .map((l) => {
      const [member = '', symbol = ''] = l.split(' ');
      return { member, symbol };
    });
}

/**
 * The metal-cpp calls a failed twin build could not find: compiler errors
 * about a member of an MTL:: or NS:: class that the twin header lacks.
 */
export function missingTwinCalls(errors: readonly string[]): string[] {
  const found = new Set<string>();
  for (const line of errors) {
    // g++: 'class MTL::Buffer' has no member named 'gpuAddress'
    // clang: no member named 'gpuAddress' in 'MTL::Buffer'
    const gcc = /'(?:class |struct )?((?:MTL|NS)::\w+)' has no member named '(\w+)'/.exec(line);
    const clang = /no member named '(\w+)' in '((?:MTL|NS)::\w+)'/.exec(line);
    if (gcc) found.add(`${gcc[1]}::${gcc[2]}`);
    else if (clang) found.add(`${clang[2]}::${clang[1]}`);
    const missing =
      /'(\w+)' is not a member of '((?:MTL|NS))'/.exec(line) ??
      /no (?:type|member) named '(\w+)' in namespace '((?:MTL|NS))'/.exec(line);
    if (missing) found.add(`${missing[2]}::${missing[1]}`);
  }
  return [...found];
}

/** The static-library check: the twin links a copy of the library with some symbols weakened. */
export function sharedLibraryBuild(cmakeCache: string): boolean {
  return /^BUILD_SHARED_LIBS(?::BOOL)?=(ON|TRUE|YES|1)$/im.test(cmakeCache);
}
