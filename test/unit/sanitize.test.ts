import { describe, expect, it } from 'vitest';

import type { CaseResult } from '../../src/suite/doctest.js';
import {
  judgeSanitizer,
  parseSanitizerReports,
  sanitizerBuild,
  withReports,
  type SoloCase,
} from '../../src/suite/sanitize.js';

// As g++ 12's libasan prints it: the access's stack, then the allocation's.
const ASAN = `[doctest] test cases: 0
=================================================================
==4242==ERROR: AddressSanitizer: heap-buffer-overflow on address 0x602000000018 at pc 0x55d4c5a1b2c3 bp 0x7ffd5 sp 0x7ffd4
READ of size 4 at 0x602000000018 thread T0
    #0 0x55d4c5a1b2c3 in new_read() /w/mlx/tests/new_tests.cpp:12
    #1 0x55d4c5a1b3d4 in DOCTEST_ANON_FUNC_14 /w/mlx/tests/new_tests.cpp:18
    #2 0x55d4c5a4e5f6 in doctest::Context::run() /usr/include/doctest/doctest.h:6988
    #3 0x7f11d2a271c9  (/lib/x86_64-linux-gnu/libc.so.6+0x271c9)

0x602000000018 is located 0 bytes to the right of 8-byte region [0x602000000010,0x602000000018)
allocated by thread T0 here:
    #0 0x7f11d2eb4b08 in operator new[](unsigned long) ../../../../src/libsanitizer/asan/asan_new_delete.cpp:98
    #1 0x55d4c5a1b1a0 in new_read() /w/mlx/tests/new_tests.cpp:11

SUMMARY: AddressSanitizer: heap-buffer-overflow /w/mlx/tests/new_tests.cpp:12 in new_read()
==4242==ABORTING
`;

// UBSAN with halt_on_error=0:print_stacktrace=1: each report, then the run goes on.
const UBSAN = `/w/mlx/mlx/ops.cpp:40:12: runtime error: signed integer overflow: 2147483647 + 1 cannot be represented in type 'int'
    #0 0x55 in mlx::core::add(int) /w/mlx/mlx/ops.cpp:40
    #1 0x56 in DOCTEST_ANON_FUNC_16 /w/mlx/tests/ops_tests.cpp:27
<TestCase name="test next" filename="/w/mlx/tests/ops_tests.cpp" line="30">
/w/mlx/mlx/array.h:8:3: runtime error: load of value 7, which is not a valid value for type 'bool'
    #0 0x57 in mlx::core::array::flag() /w/mlx/mlx/array.h:8
SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior /w/mlx/mlx/array.h:8:3 in
`;

const passed: CaseResult = {
  name: 'test new',
  file: '/w/mlx/tests/new_tests.cpp',
  line: 17,
  status: 'passed',
  assertions: { passed: 1, failed: 0 },
  failures: [],
};
const solo = (name: string, reports: number): SoloCase => ({
  name,
  where: 'suite',
  reports: Array.from({ length: reports }, () => ({ message: 'x', frames: [] })),
});

describe('sanitizer reports', () => {
  it("reads an ASAN report's message and the frames of its first stack only, without addresses", () => {
    expect(parseSanitizerReports(ASAN)).toEqual([
      {
        message: 'heap-buffer-overflow on address 0x602000000018 at pc 0x55d4c5a1b2c3 bp 0x7ffd5 sp 0x7ffd4',
        frames: [
          '#0 new_read() /w/mlx/tests/new_tests.cpp:12',
          '#1 DOCTEST_ANON_FUNC_14 /w/mlx/tests/new_tests.cpp:18',
          '#2 doctest::Context::run() /usr/include/doctest/doctest.h:6988',
          '#3 (/lib/x86_64-linux-gnu/libc.so.6+0x271c9)',
        ],
      },
    ]);
  });

  it('reads each UBSAN report of a run that went on, with its place and frames, among other output', () => {
    const reports = parseSanitizerReports(UBSAN);
    expect(reports.map((r) => r.message)).toEqual([
      "/w/mlx/mlx/ops.cpp:40:12: signed integer overflow: 2147483647 + 1 cannot be represented in type 'int'",
      "/w/mlx/mlx/array.h:8:3: load of value 7, which is not a valid value for type 'bool'",
    ]);
    expect(reports.map((r) => r.frames)).toEqual([
      ['#0 mlx::core::add(int) /w/mlx/mlx/ops.cpp:40', '#1 DOCTEST_ANON_FUNC_16 /w/mlx/tests/ops_tests.cpp:27'],
      ['#0 mlx::core::array::flag() /w/mlx/mlx/array.h:8'],
    ]);
    expect(parseSanitizerReports(ASAN, 2)[0]?.frames).toHaveLength(2);
    expect(parseSanitizerReports('[doctest] Status: SUCCESS!\n')).toEqual([]);
  });
});

describe('which sanitizer reports count', () => {
  it('a case run alone with a report fails, with the message and first frame; one without stays as it was', () => {
    const [report] = parseSanitizerReports(ASAN);
    const failed = withReports(passed, report ? [report] : []);
    expect(failed.status).toBe('failed');
    expect(failed.failures).toEqual([
      {
        file: passed.file,
        line: 17,
        message: `sanitizer: ${report?.message} (#0 new_read() /w/mlx/tests/new_tests.cpp:12)`,
      },
    ]);
    expect(withReports(passed, [])).toBe(passed);
    expect(withReports({ ...passed, status: 'crashed' }, report ? [report] : []).status).toBe('crashed');
  });

  it('the existing cases fail only on more reports than the unpatched tree; without a baseline every report counts', () => {
    const cases = [solo('test a', 0), solo('test b', 2)];
    expect(judgeSanitizer(cases, { patched: 3, baseline: 3 })).toEqual({ failing: [cases[1]], extraReports: 0 });
    expect(judgeSanitizer(cases, { patched: 2, baseline: 3 }).extraReports).toBe(0);
    expect(judgeSanitizer(cases, { patched: 5, baseline: 3 }).extraReports).toBe(2);
    expect(judgeSanitizer([], { patched: 1, baseline: null }).extraReports).toBe(1);
  });

  it("builds as MLX's sanitizer job: Debug, warnings as errors, the one sanitizer option", () => {
    expect(sanitizerBuild('asan')).toEqual({
      debug: true,
      cmakeArgs: ['-DCMAKE_COMPILE_WARNING_AS_ERROR=ON', '-DUSE_ASAN=ON'],
    });
    expect(sanitizerBuild('ubsan').cmakeArgs).toContain('-DUSE_UBSAN=ON');
  });
});
