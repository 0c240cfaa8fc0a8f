import { describe, expect, it } from 'vitest';

import type { ReportItem } from '../../src/core/report-items.js';
import { askedCommands, doctorReport } from '../../src/readiness/doctor-report.js';

const check = (id: string, status: ReportItem['status'], title = id): ReportItem => ({
  id,
  title,
  status,
  detail: `${id} detail`,
  fix: `fix ${id}`,
  required: true,
});

describe('doctor report (pure part)', () => {
  it('takes the named commands in report order, maps status and reset to apply, and all when none is named', () => {
    expect(askedCommands(['verify', 'status'])).toEqual({ commands: ['apply', 'verify'], unknown: [] });
    expect(askedCommands([]).commands).toEqual(['apply', 'test', 'format', 'check-metal', 'verify']);
    expect(askedCommands(['tests']).unknown).toEqual(['tests']);
  });

  it('maps check, export and bump to apply, and pr to verify, whose checks it runs', () => {
    expect(askedCommands(['check', 'export', 'bump'])).toEqual({ commands: ['apply'], unknown: [] });
    expect(askedCommands(['pr'])).toEqual({ commands: ['verify'], unknown: [] });
  });

  it('lists each check once, under the first command that needs it, and marks it for that command', () => {
    // In the order the machine checks come: build tools first, then formatters, Sphinx and the Metal toolchain.
    const results = [
      check('git', 'pass'),
      check('cmake', 'pass'),
      check('compiler', 'pass'),
      check('blas', 'pass'),
      check('disk', 'pass'),
      check('ninja', 'warn', 'Ninja'),
      check('ccache', 'pass'),
      check('clang-format', 'pass'),
      check('cmake-format', 'fail', 'cmake-format 0.6.13'),
      check('sphinx', 'fail', 'Sphinx'),
      check('metal-clang', 'fail'),
      check('metal-libcxx', 'not-checked'),
    ];
    const report = doctorReport(['format', 'verify'], results, { offline: false });
    expect(report.lines).toEqual([
      'format: ready',
      '  ok   git: git detail',
      '  ok   clang-format: clang-format detail',
      '  opt  cmake-format 0.6.13: cmake-format detail (optional: without it, CMake files are reported as not checked)',
      '       fix: fix cmake-format',
      'verify: NOT READY',
      '  FAIL also needs checks listed under format; not ready: cmake-format 0.6.13',
      '  ok   cmake: cmake detail',
      '  ok   compiler: compiler detail',
      '  ok   blas: blas detail',
      '  ok   disk: disk detail',
      '  opt  Ninja: ninja detail (optional)',
      '       fix: fix ninja',
      '  ok   ccache: ccache detail',
      '  FAIL Sphinx: sphinx detail',
      '       fix: fix sphinx',
      '  opt  metal-clang: metal-clang detail (optional: without it, the Metal type-check is not checked (required with --metal-cpp or --require-metal))',
      '       fix: fix metal-clang',
      '  opt  metal-libcxx: metal-libcxx detail (optional: without it, the Metal type-check is not checked (required with --metal-cpp or --require-metal))',
      '       fix: fix metal-libcxx',
      '',
      'Ready: format.',
      'Not ready: verify (needs cmake-format 0.6.13, Sphinx).',
      'Run the fix lines above, then `mlx-storage-pr doctor` again. `opt` marks what a command can do without; `n/c` what could not be checked.',
    ]);
    expect(report.ready).toBe(false);
    expect(report.commands).toEqual([
      { command: 'format', ready: true, missing: [], optionalMissing: ['cmake-format'] },
      {
        command: 'verify',
        ready: false,
        missing: ['cmake-format', 'sphinx'],
        optionalMissing: ['ninja', 'metal-clang', 'metal-libcxx'],
      },
    ]);
    expect(report.checks.find((c) => c.id === 'metal-clang')?.required).toBe(false);
    expect(report.checks.find((c) => c.id === 'cmake-format')?.required).toBe(true);
  });
});
