import { readFile } from 'node:fs/promises';

import { ifAbsent } from '../adapters/files.js';
import type { Logger } from '../adapters/log.js';
import { listDoctestCases, logFiles, runDoctest, type BuildSpec } from './cmake.js';
import { doctestFilterEscape, type CaseResult, type DoctestRun } from './doctest.js';
import { parseSanitizerReports, withReports, type SoloCase } from './sanitize.js';

/** The reports in a run's test log. */
export async function reportsInLog(spec: BuildSpec): Promise<ReturnType<typeof parseSanitizerReports>> {
  return parseSanitizerReports(await ifAbsent(readFile(logFiles(spec.buildDir, spec.logName).test, 'utf8'), ''));
}

export interface SanitizedRun {
  run: DoctestRun & { crashes: string[] };
  /** The cases run alone, each with its own reports. */
  alone: SoloCase[];
  /** The cases run together in one run, and the reports that run wrote. */
  rest: { cases: number; reports: number };
}

/**
 * Runs a test binary built with a sanitizer. ASAN stops the process at the first report and UBSAN writes to stderr,
 * not to doctest's XML, so a report can be tied to a case only when the case runs alone: every case not in `known`
 * runs alone (`-tc=<name>`); the known cases run together once. A case with a report gets it as a failure.
 */
export async function runSanitized(
  spec: BuildSpec,
  log: Logger,
  options: { filter?: string | undefined; known: ReadonlySet<string> | null; where: SoloCase['where'] },
): Promise<SanitizedRun> {
  const names = await listDoctestCases(spec, log, options.filter);
  const alone = options.known === null ? [] : names.filter((n) => !options.known?.has(n));
  const cases: CaseResult[] = [];
  const crashes: string[] = [];
  let complete = true;
  let interrupted: string | null = null;
  let restReports = 0;
  if (alone.length < names.length) {
    const rest = await runDoctest(spec, log, { filter: options.filter, exclude: alone });
    restReports = (await reportsInLog(spec)).length;
    cases.push(...rest.cases);
    crashes.push(...rest.crashes);
    complete = rest.complete;
    interrupted = rest.interrupted;
  }
  const soloSpec: BuildSpec = { ...spec, logName: `${spec.logName ?? 'suite'}-alone` };
  const solo: SoloCase[] = [];
  for (const name of alone) {
    const run = await runDoctest(soloSpec, log, { filter: doctestFilterEscape(name) });
    const reports = await reportsInLog(soloSpec);
    const result = run.cases.find((c) => c.name === name);
    if (result) cases.push(withReports(result, reports));
    crashes.push(...run.crashes.filter((c) => c === name));
    solo.push({ name, where: options.where, reports });
  }
  return {
    run: { cases, complete, interrupted, crashes },
    alone: solo,
    rest: { cases: names.length - alone.length, reports: restReports },
  };
}
