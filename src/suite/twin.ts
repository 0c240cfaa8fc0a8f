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

/** A quote as the compilers write them: g++ writes ‘’ in a UTF-8 locale and '' otherwise; clang always ''. */
const Q = "['\u2018\u2019]";
/** An MTL:: or NS:: class. */
const CLASS = String.raw`((?:MTL|NS)::\w+)`;
/** The MTL or NS namespace, or one of its classes. */
const SCOPE = String.raw`((?:MTL|NS)(?:::\w+)?)`;
const PATTERNS: ReadonlyArray<{ re: RegExp; scope: number; name: number }> = [
  // g++: 'struct MTL::Buffer' has no member named 'gpuAddress'
  { re: new RegExp(`${Q}(?:class |struct )?${CLASS}${Q} has no member named ${Q}(\\w+)${Q}`), scope: 1, name: 2 },
  // clang: no member named 'gpuAddress' in 'MTL::Buffer'
  { re: new RegExp(`no member named ${Q}(\\w+)${Q} in ${Q}${CLASS}${Q}`), scope: 2, name: 1 },
  // g++: 'SharedEvent' is not a member of 'MTL'; 'alloc' is not a member of 'MTL::Buffer'
  { re: new RegExp(`${Q}(\\w+)${Q} is not a member of ${Q}${SCOPE}${Q}`), scope: 2, name: 1 },
  // clang: no type named 'SharedEvent' in namespace 'MTL'
  { re: new RegExp(`no (?:type|member) named ${Q}(\\w+)${Q} in namespace ${Q}${SCOPE}${Q}`), scope: 2, name: 1 },
];

/**
 * The metal-cpp calls a failed twin build could not find: compiler errors
 * about a member of an MTL:: or NS:: class, or a name in those namespaces,
 * that the twin header lacks. The build runs with LC_ALL=C, but the quotes of
 * a UTF-8 locale are accepted too.
 */
export function missingTwinCalls(errors: readonly string[]): string[] {
  const found = new Set<string>();
  for (const line of errors)
    for (const { re, scope, name } of PATTERNS) {
      const match = re.exec(line);
      if (match) {
        found.add(`${match[scope]}::${match[name]}`);
        break;
      }
    }
  return [...found];
}

/** The static-library check: the twin links a copy of the library with some symbols weakened. */
export function sharedLibraryBuild(cmakeCache: string): boolean {
  return /^BUILD_SHARED_LIBS(?::BOOL)?=(ON|TRUE|YES|1)$/im.test(cmakeCache);
}
