import type { CaseResult } from './doctest.js';

export type Classification =
  'passed' | 'skipped' | 'new-failure' | 'pre-existing-failure' | 'new-test-passed' | 'new-test-failed' | 'fixed';

export interface ClassifiedCase {
  name: string;
  classification: Classification;
  patched: CaseResult;
  baseline: CaseResult['status'] | null;
}

export interface Summary {
  cases: number;
  passed: number;
  failed: number;
  skipped: number;
  assertions: { passed: number; failed: number };
  byClass: Record<Classification, number>;
}

const failing = (status: CaseResult['status']) => status === 'failed' || status === 'crashed';

/**
 * Sorts every patched case against the unpatched baseline, so only failures
 * the change introduced count. Without a baseline every failure is new.
 */
export function classify(patched: readonly CaseResult[], baseline: readonly CaseResult[] | null): ClassifiedCase[] {
  const before = new Map((baseline ?? []).map((c) => [c.name, c.status]));
  return patched.map((c) => {
    const old = before.get(c.name) ?? null;
    let classification: Classification;
    if (c.status === 'skipped') classification = 'skipped';
    else if (baseline !== null && old === null)
      classification = failing(c.status) ? 'new-test-failed' : 'new-test-passed';
    else if (failing(c.status)) classification = old !== null && failing(old) ? 'pre-existing-failure' : 'new-failure';
    else classification = old !== null && failing(old) ? 'fixed' : 'passed';
    return { name: c.name, classification, patched: c, baseline: old };
  });
}

export function summarize(cases: readonly ClassifiedCase[]): Summary {
  const byClass: Record<Classification, number> = {
    passed: 0,
    skipped: 0,
    'new-failure': 0,
    'pre-existing-failure': 0,
    'new-test-passed': 0,
    'new-test-failed': 0,
    fixed: 0,
  };
  const summary: Summary = {
    cases: cases.length,
    passed: 0,
    failed: 0,
    skipped: 0,
    assertions: { passed: 0, failed: 0 },
    byClass,
  };
  for (const c of cases) {
    byClass[c.classification]++;
    if (c.patched.status === 'skipped') summary.skipped++;
    else if (failing(c.patched.status)) summary.failed++;
    else summary.passed++;
    summary.assertions.passed += c.patched.assertions.passed;
    summary.assertions.failed += c.patched.assertions.failed;
  }
  return summary;
}

/** A run fails only on a new failure or a failing new test. */
export function isBlocking(c: ClassifiedCase): boolean {
  return c.classification === 'new-failure' || c.classification === 'new-test-failed';
}

/** What `test` says when the checkout holds edits that are not in the series. */
export const LOCAL_EDITS_NOTE =
  'the checkout has edits that are not in templates/ or patches/ (this build includes them, but the PR is made from templates/ and patches/ only: `mlx-storage-pr export` writes them there)';
