import { appendFileSync } from 'node:fs';
import path from 'node:path';

/** MLX's sanitizer options (its root CMakeLists.txt at the pin), for the fixture library `fixture`. */
export const SANITIZER_CMAKE = `
option(USE_ASAN "Enable AddressSanitizer (ASan)" OFF)
option(USE_UBSAN "Enable UndefinedBehaviorSanitizer (UBSan)" OFF)
if(USE_ASAN)
  target_compile_options(fixture PUBLIC -fsanitize=address)
  target_link_options(fixture PUBLIC -fsanitize=address)
endif()
if(USE_UBSAN)
  target_compile_options(fixture PUBLIC -fsanitize=undefined)
  target_link_options(fixture PUBLIC -fsanitize=undefined)
endif()
`;

/** Gives a fixture upstream (a `makeUpstream` folder) MLX's -DUSE_ASAN/-DUSE_UBSAN options. */
export function addSanitizerOptions(upstream: string): void {
  appendFileSync(path.join(upstream, 'CMakeLists.txt'), SANITIZER_CMAKE);
}

/** A doctest case that reads one element past a heap array (AddressSanitizer: heap-buffer-overflow). */
export const heapOverflowCase = (name: string, fn: string) => `
int ${fn}() {
  int* values = new int[2]{1, 2};
  volatile int past = values[2];
  delete[] values;
  return past;
}

TEST_CASE("${name}") {
  CHECK(${fn}() != 12345);
}
`;

/** A doctest case whose checks pass but that overflows a signed int (UBSAN: signed integer overflow). */
export const signedOverflowCase = (name: string, fn: string) => `
int ${fn}(int a) {
  return a + 1;
}

TEST_CASE("${name}") {
  volatile int big = 2147483647;
  CHECK(${fn}(big) != 0);
}
`;
