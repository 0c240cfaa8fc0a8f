import path from 'node:path';

import { ExitCode, UserError } from '../core/errors.js';
import { LOCAL_EDITS_NOTE, type ClassifiedCase } from '../suite/baseline.js';
import { withUpstreamCi } from '../suite/upstream-ci.js';
import { runSuite, type TestData } from '../suite/suite.js';
import { loadContext } from '../series/context.js';
import { verifyDepsDir } from '../suite/offline-deps.js';
import { NO_METAL_ROLE, seriesRoles } from '../series/config.js';
import { buildOptions, upstreamCiOption } from './options.js';
import { afterDashes, defineCommand, parseJobs } from './spec.js';

export const testCommand = defineCommand({
  name: 'test',
  describe:
    'Build the applied MLX with CMake, run its C++ suite and compare with the unpatched baseline (extra CMake arguments after --)',
  builder: (y) =>
    upstreamCiOption(
      buildOptions(
        y.option('tests', {
          type: 'string',
          placeholder: 'filter',
          describe:
            'doctest filter: run only matching test cases (e.g. "test my op*"); when it matches Metal-only cases, the twin runs them too (Linux)',
        }),
      ),
    )
      .option('metal-twin', {
        type: 'boolean',
        describe:
          "Also run the Metal-only cases on Linux against the host twin of metal-cpp (twin/): the PR's logic, not Metal itself. Without it, the twin runs when --tests matches Metal-only cases; --no-metal-twin leaves it out",
      })
      .option('metal-only', {
        type: 'boolean',
        default: false,
        describe: "Run only the cases of the series' Metal-only test files (roles.metal.tests; on a Mac, on Metal)",
      })
      .option('suite', {
        type: 'boolean',
        default: true,
        describe: 'Run the normal suite (the default; --no-suite with --metal-twin runs the twin alone)',
      })
      .check((argv) => {
        if (argv.tests !== undefined && argv.tests.trim() === '')
          throw new Error('--tests needs a doctest filter, e.g. --tests "test my op*".');
        if (!argv.suite && !argv.metalTwin)
          throw new Error('--no-suite needs --metal-twin: without it there is nothing to run.');
        return true;
      })
      .option('baseline', {
        type: 'boolean',
        default: true,
        describe: 'Compare with the unpatched pinned tree (the default; --no-baseline: every failure counts)',
      })
      .option('jobs', {
        alias: 'j',
        type: 'string',
        placeholder: 'n',
        describe: "Compilers to run at once (cmake --build --parallel; default: Ninja's own, one per CPU and 2)",
      })
      .example('$0 test --offline', 'build and run the whole suite from system packages')
      .example(
        '$0 test --tests "test my op*"',
        'the quick loop on the new cases (and on the twin, those that are Metal-only)',
      )
      .example('$0 test --offline --metal-twin --no-suite', 'the Metal-only cases on the host twin, alone')
      .example(
        '$0 test --offline --upstream-ci',
        "MLX's Linux CI leg: -DBUILD_SHARED_LIBS=ON -DCMAKE_COMPILE_WARNING_AS_ERROR=ON, Debug",
      )
      .example(
        '$0 test --offline --sanitize asan --metal-twin',
        "MLX's sanitizer job, both trees, and the twin: each new case alone, its reports attributed",
      )
      .example('$0 test -- -DMLX_METAL_DEBUG=ON', 'pass extra arguments to CMake'),
  run: async (o) => {
    verifyDepsDir(o.cwd, o.depsDir);
    const jobs = parseJobs(o.jobs);
    const ctx = await loadContext(o);
    // The twin runs the series' Metal-only files; a series without them has nothing for it.
    const metal = seriesRoles(ctx.config).metal;
    if (o.metalOnly && metal === null)
      throw new UserError('NO_METAL_ROLE', `--metal-only: ${NO_METAL_ROLE}.`, {
        hint: 'Declare the Metal-only files in roles.metal of mlx-storage-pr.config.json, or use --tests <filter>.',
      });
    const twinApplies = !o.metalTwin || metal !== null;
    if (!twinApplies && !o.suite)
      return { data: { command: 'test', notApplicable: NO_METAL_ROLE }, lines: [`Metal twin: ${NO_METAL_ROLE}`] };
    const result = await runSuite(ctx, {
      tests: o.tests,
      offline: o.offline,
      depsDir: o.depsDir,
      baseline: o.baseline,
      metalTwin: o.metalTwin === true && twinApplies,
      twinWhenTestsMatch: o.metalTwin === undefined,
      ...(o.metalOnly && metal ? { sourceFile: metal.tests.map((f) => `*/${f}`).join(',') } : {}),
      suite: o.suite,
      sanitize: o.sanitize,
      cxx: o.cxx,
      upstreamCi: o.upstreamCi,
      jobs,
      ...withUpstreamCi({ debug: o.debug, cmakeArgs: afterDashes(o) }, o.upstreamCi),
    });
    return {
      data: result.data,
      lines: [...testLines(result.data), ...(twinApplies ? [] : [`Metal twin: ${NO_METAL_ROLE}`])],
      exitCode: result.blocking ? ExitCode.testsFailed : ExitCode.ok,
    };
  },
});

const order: Array<ClassifiedCase['classification']> = [
  'new-failure',
  'new-test-failed',
  'pre-existing-failure',
  'fixed',
  'new-test-passed',
];

function testLines(data: TestData): string[] {
  const lines =
    data.sanitizer?.status === 'not-applicable'
      ? []
      : data.suiteRan
        ? suiteLines(data)
        : ['suite: not run (--no-suite)'];
  if (data.twin) lines.push(...twinLines(data.twin));
  if (data.sanitizer) lines.push(...sanitizerLines(data.sanitizer));
  lines.push(`compiler: ${data.compiler.version}${compilerChoice[data.compiler.chosenBy]}`);
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

const compilerChoice: Record<TestData['compiler']['chosenBy'], string> = {
  cxx: ' (--cxx)',
  'upstream-ci': " (--upstream-ci: g++-11, MLX's Linux CI compiler)",
  default: '',
};

/** The sanitizer lane: what ran alone, the reports of each, the existing cases' count against the baseline. */
function sanitizerLines(s: NonNullable<TestData['sanitizer']>): string[] {
  const head = `sanitizer: ${s.name} (--sanitize ${s.sanitizer})`;
  if (s.status === 'not-applicable')
    return [`${head}: not applicable: the unpatched tree does not build with it: ${s.reason ?? 'unknown error'}`];
  const suite = s.alone.filter((c) => c.where === 'suite').length;
  const twin = s.alone.length - suite;
  const failing = s.alone.filter((c) => c.reports.length > 0);
  const rest = s.rest.compared
    ? `${s.rest.patched} report(s), ${s.rest.baseline ?? 0} unpatched${s.rest.extra > 0 ? `: ${s.rest.extra} new` : ''}`
    : s.rest.baseline === null
      ? `${s.rest.patched} report(s) (no baseline: each counts)`
      : `${s.rest.patched} report(s) (not compared with the unpatched ${s.rest.baseline}: --tests ran part of the suite)`;
  const lines = [
    `${head}: ${s.stricter}`,
    `    ${suite} new case(s) and ${twin} twin case(s), each run alone: ${failing.length} with a report`,
    `    the ${s.rest.cases} existing case(s), one run per tree: ${rest}`,
  ];
  for (const c of failing) {
    lines.push(`sanitizer-report: ${c.name}${c.where === 'twin' ? ' (Metal twin)' : ''}`);
    for (const r of c.reports.slice(0, 3)) {
      lines.push(`    ${r.message}`);
      lines.push(...r.frames.slice(0, 4).map((f) => `      ${f}`));
    }
  }
  return lines;
}
