import { describe, expect, it } from 'vitest';

import {
  judge,
  laneFlags,
  metalCppRelease,
  missingHeaderHint,
  parseClangVersion,
  parseLibcxxVersion,
  selfTestJobs,
  summariseLane,
  type TypeCheckJob,
} from '../../src/readiness/metal-flags.js';
import { metalCppUrl } from '../../src/series/config.js';

const job = (label: string, expect: TypeCheckJob['expect'] = 'pass'): TypeCheckJob => ({
  label,
  file: `/m/${label}`,
  expect,
  flags: [],
});

describe('Metal type-check lane (pure parts)', () => {
  it('parses clang and libc++ versions', () => {
    expect(parseClangVersion('Debian clang version 19.1.7 (3~deb12u1)\nTarget: x86_64-pc-linux-gnu')).toEqual({
      version: '19.1.7',
      major: 19,
      apple: false,
    });
    expect(parseClangVersion('Apple clang version 17.0.0 (clang-1700.0.13.3)')).toEqual({
      version: '17.0.0',
      major: 17,
      apple: true,
    });
    expect(parseClangVersion('g++ (Debian 12.2.0-14) 12.2.0')).toBeNull();
    expect(parseLibcxxVersion('190107')).toEqual({ version: '19.1.7', major: 19 });
    expect(parseLibcxxVersion('14000')).toEqual({ version: '14.0.0', major: 14 });
    expect(parseLibcxxVersion('_LIBCPP_VERSION')).toBeNull();
  });

  it('finds the metal-cpp URL in MLX CMake and the release in its README', () => {
    const cmake =
      '  set(METAL_CPP_URL\n      https://developer.apple.com/metal/cpp/files/metal-cpp_26.zip)\n  FetchContent_Declare(metal_cpp URL ${METAL_CPP_URL})';
    expect(metalCppUrl(cmake)).toBe('https://developer.apple.com/metal/cpp/files/metal-cpp_26.zip');
    expect(metalCppUrl('project(mlx)')).toBeNull();
    expect(metalCppRelease('| Version | Changes |\n|-|-|\n| macOS 26, iOS 26 | x |\n| macOS 15, iOS 18 | y |')).toBe(
      26,
    );
  });

  it('passes the flags MLX gives Metal TUs, shims only where asked', () => {
    const flags = laneFlags({ mlxRoot: '/mlx', metalCpp: '/mcpp', shims: '/shims', includes: ['/fmt'] });
    expect(flags).toEqual(
      expect.arrayContaining([
        '-std=c++20',
        '-stdlib=libc++',
        '-fsyntax-only',
        '-fblocks',
        '-DMLX_STATIC',
        '-DFMT_HEADER_ONLY',
      ]),
    );
    expect(flags.join(' ')).toContain('-I /mlx -I /mcpp -isystem /shims -isystem /fmt');
    expect(laneFlags({ mlxRoot: '/mlx', metalCpp: '/mcpp', shims: null, includes: [] })).not.toContain('/shims');
  });

  it('builds the self-test table like the script: every TU, three variants, apis_ok, broken twice', () => {
    const jobs = selfTestJobs(
      '/r',
      ['mlx/backend/metal/device.cpp', 'mlx/backend/metal/jit_kernels.cpp', 'mlx/backend/metal/eval.cpp'],
      '/s',
    );
    expect(jobs.map((j) => `${j.label}:${j.expect}`)).toEqual([
      'mlx/backend/metal/device.cpp:pass',
      'mlx/backend/metal/jit_kernels.cpp:pass',
      'mlx/backend/metal/eval.cpp:pass',
      'mlx/backend/metal/device.cpp [-D__MAC_26_0=260000]:pass',
      'mlx/backend/metal/device.cpp [-DMLX_METAL_NO_NAX]:pass',
      'mlx/backend/metal/jit_kernels.cpp [-DMLX_METAL_NO_NAX]:pass',
      'shims/selftest/apis_ok.cpp:pass',
      'shims/selftest/broken.cpp:fail',
      'shims/selftest/broken.cpp [-verify]:verify',
    ]);
    expect(jobs[jobs.length - 1]?.flags).toEqual(['-Xclang', '-verify', '-Xclang', '-verify-ignore-unexpected=note']);
  });

  it('judges outcomes against expectations and fails the summary on any miss', () => {
    const err = "x.cpp:3:9: error: no member named 'contentsPointer' in 'MTL::Buffer'\n1 error generated.";
    const outcomes = [
      judge(job('mlx/backend/metal/a.cpp'), 0, '', 1.2),
      judge(job('shims/selftest/broken.cpp', 'fail'), 1, err, 0.5),
      judge(job('mlx/backend/metal/b.cpp'), 1, err, 0.7),
    ];
    expect(outcomes.map((o) => o.good)).toEqual([true, true, false]);
    const summary = summariseLane(outcomes, { selfTest: true, jobs: 2, wallSeconds: 3 });
    expect(summary).toMatchObject({ ok: false, passed: 2, failed: 1, mlx: { ok: 1, total: 2 } });
    expect(summary.lines).toContain('ok   shims/selftest/broken.cpp (failed as expected: 1 errors) 0.5s');
    expect(summary.lines).toContain(`       ${err.split('\n')[0]}`);
    expect(summary.lines[summary.lines.length - 1]).toMatch(/^summary: self-test FAILED: MLX Metal TUs ok 1\/2/);
    expect(summariseLane([], { selfTest: false, jobs: 1, wallSeconds: 0 }).ok).toBe(false);
  });

  it('names the fix for headers the lane cannot find', () => {
    const missing = judge(job('a.cpp'), 1, "a.cpp:1:10: fatal error: 'fmt/format.h' file not found", 0.1);
    expect(missingHeaderHint([missing])).toContain('libfmt-dev');
    const apple = judge(job('b.cpp'), 1, "b.cpp:1:10: fatal error: 'os/log.h' file not found", 0.1);
    expect(missingHeaderHint([apple])).toContain('shims/include');
  });
});
