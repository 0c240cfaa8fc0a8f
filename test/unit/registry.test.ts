import { describe, expect, it } from 'vitest';

import { commandNeeds } from '../../src/readiness/doctor-report.js';
import { docsReportItem } from '../../src/readiness/docs-pages.js';
import { policyItems } from '../../src/readiness/policy.js';
import { MACHINE_CHECKS, READINESS_CHECKS } from '../../src/readiness/registry.js';
import { SKIP_NAMES, skippedItems, VERIFY_GROUPS } from '../../src/readiness/skip.js';

const declared = (id: string) => READINESS_CHECKS.find((c) => c.id === id);

describe('the readiness registry', () => {
  it('declares each check once, and the --skip groups in report order from it', () => {
    const ids = READINESS_CHECKS.map((c) => c.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(VERIFY_GROUPS).toEqual({
      format: ['format-cpp', 'format-cmake'],
      'metal-typecheck': ['metal-typecheck'],
      docs: ['docs'],
      'pr-text': ['pr-files', 'pr-placeholders', 'pr-ai-disclosure'],
      build: ['linux-build', 'tests-fail-without-implementation', 'metal-twin', 'mutants', 'sanitizer'],
    });
    // A group's checks sit together, so the report keeps a group's lines together.
    const groups = READINESS_CHECKS.map((c) => c.group);
    expect(groups.filter((g, i) => g !== groups[i - 1])).toEqual(Object.keys(VERIFY_GROUPS));
    expect(SKIP_NAMES.slice(0, 5)).toEqual(Object.keys(VERIFY_GROUPS));
  });

  it('leaves out a group by name and single checks by id, in report order', () => {
    expect(skippedItems(['mutants', 'format'])).toEqual(['format-cpp', 'format-cmake', 'mutants']);
    expect(skippedItems([])).toEqual([]);
  });

  it('holds the titles the checks report', () => {
    for (const item of policyItems([])) expect(declared(item.id)?.title).toBe(item.title);
    const docs = docsReportItem({ files: [], sphinx: null, reason: null });
    expect(declared(docs.id)?.title).toBe(docs.title);
  });

  it('declares which commands need each machine check, required or optional, as doctor reports them', () => {
    const needs = (command: Parameters<typeof commandNeeds>[0], offline = false) =>
      commandNeeds(command, { offline }).map((n) => `${n.id}${n.required ? '' : '?'}`);
    const build = [
      'git',
      'cmake',
      'compiler',
      'blas',
      'xcode',
      'metal',
      'disk',
      'ninja?',
      'ccache?',
      'gxx-11?',
      'sanitizers?',
    ];
    expect(needs('apply')).toEqual(['git']);
    expect(needs('test')).toEqual([...build, 'twin?', 'offline-?']);
    expect(needs('test', true)).toEqual([...build, 'twin?', 'offline-']);
    expect(needs('format')).toEqual(['git', 'clang-format', 'cmake-format?']);
    expect(needs('check-metal')).toEqual(['git', 'metal-clang', 'metal-libcxx', 'metal-cpp']);
    expect(needs('verify')).toEqual([
      ...build,
      'twin',
      'offline-?',
      'clang-format',
      'cmake-format',
      'sphinx',
      'metal-clang?',
      'metal-libcxx?',
      'metal-cpp?',
    ]);
    expect(commandNeeds('format', { offline: false }).find((n) => n.id === 'cmake-format')?.without).toBe(
      'CMake files are reported as not checked',
    );
    expect(new Set(MACHINE_CHECKS.map((c) => c.id)).size).toBe(MACHINE_CHECKS.length);
  });
});
