import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The CMake fixture's series can gain an implementation: src/mul.* (templates),
 * added to the library by a patch of the root CMakeLists.txt. With MUL_TEST
 * as its new test, verify's "new tests fail without the implementation" can pass.
 */
export const ROOT_PATCH = `diff --git a/CMakeLists.txt b/CMakeLists.txt
--- a/CMakeLists.txt
+++ b/CMakeLists.txt
@@ -3,7 +3,7 @@ project(fixture LANGUAGES CXX)
 set(CMAKE_CXX_STANDARD 20)
 
 include(FetchContent)
-add_library(fixture src/lib.cpp)
+add_library(fixture src/lib.cpp src/mul.cpp)
 target_include_directories(fixture PUBLIC \${CMAKE_CURRENT_SOURCE_DIR})
 
 option(MLX_BUILD_TESTS "Build tests" ON)
`;

export const MUL_TEST =
  '#include "doctest/doctest.h"\n#include "src/mul.h"\n\nTEST_CASE("test mul") {\n  CHECK_EQ(mul(6, 7), 42);\n}\n';

/** Writes the implementation's templates and its patch into a copy of fixtures/cmake-project/project. */
export function addMulImplementation(project: string): void {
  const write = (file: string, text: string) => {
    mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
    writeFileSync(path.join(project, file), text);
  };
  write('templates/src/mul.h', '#pragma once\n\nint mul(int a, int b);\n');
  write('templates/src/mul.cpp', '#include "src/mul.h"\n\nint mul(int a, int b) {\n  return a * b;\n}\n');
  write('patches/0002-root-cmake.patch', ROOT_PATCH);
  write('patches/series', '0001-tests-cmake.patch\n0002-root-cmake.patch\n');
}
