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
      for (const f of c.failures.slice(0, 5))
        lines.push(`    ${f.file}:${f.line}: ${f.message}${f.origin ? ` (from ${f.origin})` : ''}`);
    }
  }
  if (data.localEdits.length) {
    const shown =
      data.localEdits.slice(0, 10).join(', ') +
      (data.localEdits.length > 10 ? ` and ${data.localEdits.length - 10} more` : '');
    lines.push(`note: ${LOCAL_EDITS_NOTE}: ${shown}`);
  }
  lines.push(`build: ${data.buildDir} (logs: ${path.basename(data.logs.build)}, ${path.basename(data.logs.test)})`);
  return lines;
}
