import { describe, expect, it } from 'vitest';

import { docsReportItem } from '../../src/readiness/docs-pages.js';
import { policyItems } from '../../src/readiness/policy.js';
import { READINESS_CHECKS } from '../../src/readiness/registry.js';
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
});
