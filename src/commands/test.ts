import path from 'node:path';

import { ExitCode } from '../core/errors.js';
import type { ClassifiedCase } from '../core/baseline.js';
import { verifyDepsDir } from '../ops/offline.js';
import { LOCAL_EDITS_NOTE, runSuite, type SuiteOptions, type TestData } from '../ops/suite.js';
import { loadContext, type CommandResult, type GlobalOptions } from './context.js';

export type { TestData } from '../ops/suite.js';

export interface TestOptions extends GlobalOptions, SuiteOptions {}

export async function test(options: TestOptions): Promise<CommandResult<TestData>> {
  verifyDepsDir(options.cwd, options.depsDir);
  const ctx = await loadContext(options);
  const result = await runSuite(ctx, options);
  return {
    data: result.data,
    lines: testLines(result.data),
    exitCode: result.blocking ? ExitCode.testsFailed : ExitCode.ok,
  };
}

const order: Array<ClassifiedCase['classification']> = [
  'new-failure',
  'new-test-failed',
  'pre-existing-failure',
  'fixed',
  'new-test-passed',
];

function testLines(data: TestData): string[] {
  const lines = data.suiteRan ? suiteLines(data) : ['suite: not run (--no-suite)'];
  if (data.twin) lines.push(...twinLines(data.twin));
  if (data.localEdits.length) {
    const shown =
      data.localEdits.slice(0, 10).join(', ') +
      (data.localEdits.length > 10 ? ` and ${data.localEdits.length - 10} more` : '');
    lines.push(`note: ${LOCAL_EDITS_NOTE}: ${shown}`);
  }
  lines.push(`build: ${data.buildDir} (logs: ${path.basename(data.logs.build)}, ${path.basename(data.logs.test)})`);
  return lines;
}

function failureLines(failures: TestData['cases'][number]['failures']): string[] {
  return failures
    .slice(0, 5)
    .map((f) => `    ${f.file}:${f.line}: ${f.message}${f.origin ? ` (from ${f.origin})` : ''}`);
}

/** The twin run: what it is (never a Metal run), its numbers and every failing case. */
function twinLines(twin: NonNullable<TestData['twin']>): string[] {
  const s = twin.summary;
  const lines = [
    `Metal twin (host stand-in for metal-cpp on a Linux build, not a Metal run): ${s.cases} Metal-only case(s) run, ${s.passed} passed, ${s.failed} failed; assertions: ${s.assertions.passed} passed, ${s.assertions.failed} failed`,
    `    shows: ${twin.shows}`,
    `    cannot show (only a Mac can): ${twin.cannotShow}`,
  ];
  if (twin.weakened.length)
    lines.push(
      `    the PR's Metal definitions replace ${twin.weakened.length} stub definition(s) of ${[...new Set(twin.weakened.map((w) => w.member))].join(', ')} (weak in a copy of the library)`,
    );
  for (const c of twin.cases.filter((x) => x.classification === 'new-test-failed')) {
    lines.push(`twin-failed: ${c.name}`);
    lines.push(...failureLines(c.failures));
  }
  lines.push(
    `    twin binary: ${twin.binary} (logs: ${path.basename(twin.logs.build)}, ${path.basename(twin.logs.test)})`,
  );
  return lines;
}

function suiteLines(data: TestData): string[] {
  const s = data.summary;
  const lines = [
    `test cases: ${s.cases} run, ${s.passed} passed, ${s.failed} failed, ${s.skipped} skipped; assertions: ${s.assertions.passed} passed, ${s.assertions.failed} failed`,
    data.baseline.used
      ? `against the unpatched baseline${data.baseline.cached ? ' (saved results)' : ''}: ${s.byClass['new-failure']} new failure(s), ${s.byClass['new-test-failed']} failing new test(s), ${s.byClass['pre-existing-failure']} pre-existing failure(s), ${s.byClass['fixed']} fixed, ${s.byClass['new-test-passed']} new test(s) passing`
      : 'baseline: not used (--no-baseline): every failure counts as new',
  ];
  for (const kind of order) {
    for (const c of data.cases.filter((x) => x.classification === kind)) {
      lines.push(`${kind}: ${c.name}`);
      lines.push(...failureLines(c.failures));
    }
  }
  return lines;
}
