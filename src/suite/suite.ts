import { createHash } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { z } from 'zod';

import { ifAbsent } from '../adapters/files.js';
import { readSaved, savedText } from './saved-results.js';
import type { Git } from '../adapters/git.js';
import { withLock } from '../adapters/lock.js';
import { probe } from '../adapters/process.js';
import { classify, isBlocking, LOCAL_EDITS_NOTE, summarize, type ClassifiedCase, type Summary } from './baseline.js';
import { itemsPass, formatItems, type ReportItem } from '../core/report-items.js';
import { closeCaseNames, DoctestRunSchema, type DoctestRun, type Failure } from './doctest.js';
import { isUserError, UserError } from '../core/errors.js';
import { lineOrigin } from '../series/origin.js';
import type { ApplyPlan } from '../series/plan.js';
import type { TreeLayout } from '../core/workdir.js';
import { buildsOffline } from '../core/readiness-inputs.js';
import { buildTarget, configureIfNeeded, listDoctestCases, logFiles, runDoctest, type BuildSpec } from './cmake.js';
import { inspectCheckout, prepareWorktree, requireAppliedCheckout } from '../series/checkout.js';
import type { Context } from '../series/context.js';
import { buildToolItems, inspectOffline } from './build-tools.js';
import { generateStandIns, probeOffline } from './offline-deps.js';
import {
  judgeSanitizer,
  SANITIZER_NAMES,
  sanitizerBuild,
  sanitizerRunEnv,
  STRICTER_THAN_MLX,
  type Sanitizer,
  type SoloCase,
} from './sanitize.js';
import { reportsInLog, runSanitized, type SanitizedRun } from './sanitize-run.js';
import { runTwin, twinBuildArgs, twinSpec, type TwinData } from './twin-run.js';
import { chooseTwin, type TwinChoice, type TwinDecision } from './twin-filter.js';

/** How `test` (and verify's build checks) build and run the suite. */
export interface SuiteOptions {
  debug?: boolean | undefined;
  tests?: string | undefined;
  offline?: boolean | undefined;
  depsDir?: string | undefined;
  baseline?: boolean | undefined;
  cmakeArgs?: string[] | undefined;
  /** Also build and run the Metal-only cases against the host twin of metal-cpp (Linux only). */
  metalTwin?: boolean | undefined;
  /**
   * Without metalTwin: also run the twin when `tests` matches a case of the
   * Metal-only test files and the twin can run here (`test --tests` without
   * --metal-twin or --no-metal-twin).
   */
  twinWhenTestsMatch?: boolean | undefined;
  /** Build and run the normal suite (the default); false with metalTwin runs the twin alone. */
  suite?: boolean | undefined;
  /** Run only the cases defined in these files (doctest --source-file patterns, comma-separated). */
  sourceFile?: string | undefined;
  /** Build both trees as MLX's sanitizer job does and attribute each report to a case (`--sanitize`). */
  sanitize?: Sanitizer | undefined;
  /** The C++ compiler of both trees (`--cxx`). */
  cxx?: string | undefined;
  /** MLX's Linux CI leg (`--upstream-ci`): without --cxx, g++-11 when it is on PATH. */
  upstreamCi?: boolean | undefined;
  /** Compilers to run at once (`test -j`); not part of the build's key. */
  jobs?: number | undefined;
}

export interface TestData {
  command: 'test';
  buildDir: string;
  logs: ReturnType<typeof logFiles>;
  dependencies: Array<{ dep: string; source: string }>;
  notes: string[];
  /** Files in the checkout that differ from the applied series (edited there, not in templates/ or patches/). */
  localEdits: string[];
  patched: { configured: boolean; buildSeconds: number; buildSteps: number; complete: boolean; crashes: string[] };
  baseline: {
    used: boolean;
    cached: boolean;
    buildDir: string | null;
    /** Seconds the baseline's build took in this run (0: saved results, or not built). */
    buildSeconds: number;
    summary: Summary | null;
  };
  /** The C++ compiler both trees built with (first line of its --version) and how it was chosen. */
  compiler: Compiler;
  /** False with --no-suite: only the twin ran, and summary and cases are empty. */
  suiteRan: boolean;
  summary: Summary;
  cases: Array<{
    name: string;
    classification: ClassifiedCase['classification'];
    status: string;
    baseline: string | null;
    failures: SourcedFailure[];
  }>;
  /** The Metal twin run (test --metal-twin, or --tests matching Metal-only cases), or null. */
  twin: TwinRunData | null;
  /** The sanitizer lane (test --sanitize), or null. */
  sanitizer: SanitizerData | null;
}

/** What `test --sanitize` found beyond the classification of the cases. */
export interface SanitizerData {
  sanitizer: Sanitizer;
  /** AddressSanitizer, UndefinedBehaviorSanitizer. */
  name: string;
  /** not-applicable: the unpatched tree does not build with this sanitizer (`reason`: its first error). */
  status: 'ran' | 'not-applicable';
  reason: string | null;
  /** How this lane differs from MLX's own sanitizer job. */
  stricter: string;
  /** The new cases and the twin cases, each run alone, with their reports. */
  alone: SoloCase[];
  /** The existing cases, run together once per tree: their number of reports, patched and unpatched. */
  rest: { cases: number; patched: number; baseline: number | null; extra: number; compared: boolean };
}

function sanitizerResult(
  sanitizer: Sanitizer,
  o: {
    notApplicable: string | null;
    suite: SanitizedRun | null;
    twin: SoloCase[];
    baselineReports: number | null;
    compared: boolean;
  },
): SanitizerData {
  const alone = [...(o.suite?.alone ?? []), ...o.twin];
  const patched = o.suite?.rest.reports ?? 0;
  // With --tests only part of the existing cases ran, so their count says nothing against the whole baseline.
  const verdict = judgeSanitizer(alone, { patched, baseline: o.compared ? o.baselineReports : null });
  return {
    sanitizer,
    name: SANITIZER_NAMES[sanitizer],
    status: o.notApplicable === null ? 'ran' : 'not-applicable',
    reason: o.notApplicable,
    stricter: STRICTER_THAN_MLX,
    alone,
    rest: {
      cases: o.suite?.rest.cases ?? 0,
      patched,
      baseline: o.baselineReports,
      extra: o.compared || o.baselineReports === null ? verdict.extraReports : 0,
      compared: o.compared && o.baselineReports !== null,
    },
  };
}

/** The first compiler or CMake error of a failed build, for a one-line reason. */
function firstError(error: UserError): string {
  const errors = (error.details as { errors?: string[] } | undefined)?.errors ?? [];
  return (
    errors[0] ??
    error.message.split('\n').find((l) => /error/i.test(l)) ??
    error.message.split('\n')[0] ??
    ''
  ).trim();
}

/** The baseline's run as saved; under a sanitizer it also holds its number of reports. */
const SavedBaselineSchema = z.intersection(DoctestRunSchema, z.object({ reports: z.number().optional() }));

const SummarySchema = z
  .object({
    cases: z.number(),
    passed: z.number(),
    failed: z.number(),
    skipped: z.number(),
    assertions: z.object({ passed: z.number(), failed: z.number() }),
    byClass: z.record(z.number()),
  })
  .passthrough();

/**
 * The last `test` run as saved: the fields its readers (`verify`'s build
 * items) use are checked; the rest is the tool's own output of the same
 * version (the saved inputs hold the series hash and the binary's time).
 */
const SavedTestDataSchema = z
  .object({
    command: z.literal('test'),
    summary: SummarySchema,
    baseline: z.object({ used: z.boolean() }).passthrough(),
    cases: z.array(z.object({ name: z.string(), classification: z.string(), status: z.string() }).passthrough()),
  })
  .passthrough() as unknown as z.ZodType<TestData, z.ZodTypeDef, unknown>;

/** The twin run as `test` reports it: each failure with the template or patch line it comes from. */
export type TwinRunData = Omit<TwinData, 'cases'> & {
  cases: Array<Omit<TwinData['cases'][number], 'failures'> & { failures: SourcedFailure[] }>;
  /** What made it run: --metal-twin, or a --tests filter that matches Metal-only cases. */
  chosenBy: TwinChoice;
};

/** A failed assertion, with the template or patch line it comes from (null: MLX's own line, or a file edited in the checkout). */
export type SourcedFailure = Failure & { origin: string | null };

/** Adds to each failure the template or patch line of the series it comes from. */
function withOrigins(
  failures: readonly Failure[],
  o: { plan: ApplyPlan; buildDir: string; checkout: string; localEdits: readonly string[] },
): SourcedFailure[] {
  return failures.map((f) => {
    const relative = path.relative(o.checkout, path.resolve(o.buildDir, f.file)).split(path.sep).join('/');
    const known = !relative.startsWith('..') && !path.isAbsolute(relative) && !o.localEdits.includes(relative);
    return { ...f, origin: known ? lineOrigin(o.plan, relative, f.line) : null };
  });
}

/** Everything that decides a build's result, so equal keys can share a build folder and baseline results. */
export interface BuildSetup {
  cmakeArgs: string[];
  key: string;
  ccache: boolean;
  /** The C++ compiler both trees build with; its `--version` is part of the key. */
  compiler: Compiler;
  sanitizer: Sanitizer | null;
  dependencies: Array<{ dep: string; source: string }>;
  notes: string[];
  /** Compilers to run at once; not part of the key (the result does not depend on it). */
  jobs?: number | undefined;
}

/** The C++ compiler of a build: `command` is null for CMake's own choice (CXX, else c++). */
export interface Compiler {
  command: string | null;
  /** The first line of its `--version`. */
  version: string;
  chosenBy: 'cxx' | 'upstream-ci' | 'default';
}

/** --cxx, else g++-11 (MLX's Linux CI compiler) with --upstream-ci when it is on PATH, else CMake's choice. */
async function chooseCompiler(ctx: Context, options: SuiteOptions): Promise<Compiler> {
  const firstLine = (text: string | null) => text?.split('\n')[0]?.trim() ?? null;
  if (options.cxx !== undefined) {
    const version = firstLine(await probe(options.cxx, ['--version'], ctx.env));
    if (version === null)
      throw new UserError('USAGE', `--cxx ${options.cxx}: no compiler runs under that name.`, {
        hint: 'Give a C++ compiler on PATH or its path, e.g. --cxx g++-11 (sudo apt-get install g++-11).',
      });
    return { command: options.cxx, version, chosenBy: 'cxx' };
  }
  if (options.upstreamCi) {
    const version = firstLine(await probe('g++-11', ['--version'], ctx.env));
    if (version !== null) return { command: 'g++-11', version, chosenBy: 'upstream-ci' };
    ctx.log.warn(
      "--upstream-ci: g++-11 (MLX's Linux CI compiler) is not on PATH; building with the default compiler (sudo apt-get install g++-11).",
    );
  }
  const fallback = ctx.env['CXX'] ?? 'c++';
  const version = firstLine(await probe(fallback, ['--version'], ctx.env)) ?? `${fallback} (no --version)`;
  return { command: null, version, chosenBy: 'default' };
}

export async function prepareBuild(ctx: Context, options: SuiteOptions): Promise<BuildSetup> {
  const generator = (await probe('ninja', ['--version'], ctx.env)) ? ['-G', 'Ninja'] : [];
  const ccache = (await probe('ccache', ['--version'], ctx.env)) !== null;
  let dependencies: BuildSetup['dependencies'] = [];
  let notes: string[] = [];
  let offlineArgs: string[] = [];
  if (buildsOffline(options)) {
    const depsDir = options.depsDir ? path.resolve(ctx.cwd, options.depsDir) : undefined;
    const plan = probeOffline(depsDir, path.join(ctx.cacheRoot, 'deps'), ctx.platform);
    if (plan.missing.length) {
      const checks = inspectOffline(plan).filter((c) => c.status === 'fail');
      throw new UserError(
        'TOOL_MISSING',
        `Offline build: no local source for ${plan.missing.map((m) => m.dep).join(', ')}.\n${formatItems(checks).join('\n')}`,
        {
          hint: 'Install the packages named above, or pass --deps-dir <dir> holding a folder per dependency.',
        },
      );
    }
    await generateStandIns(plan);
    dependencies = plan.deps.map((d) => ({ dep: d.dep, source: d.source }));
    notes = plan.notes;
    offlineArgs = plan.cmakeArgs;
  }
  if (!ccache)
    notes.push('ccache not found: fresh build folders compile from scratch (install ccache to reuse objects).');
  const launcher = ccache ? ['-DCMAKE_C_COMPILER_LAUNCHER=ccache', '-DCMAKE_CXX_COMPILER_LAUNCHER=ccache'] : [];
  const sanitizer = options.sanitize ?? null;
  const sanitized = sanitizer ? sanitizerBuild(sanitizer) : null;
  const debug = options.debug === true || sanitized !== null;
  const compiler = await chooseCompiler(ctx, options);
  const cmakeArgs = [
    ...generator,
    `-DCMAKE_BUILD_TYPE=${debug ? 'Debug' : 'Release'}`,
    ...ctx.config.build.cmakeArgs,
    ...launcher,
    ...offlineArgs,
    ...twinBuildArgs(ctx),
    ...(compiler.command === null ? [] : [`-DCMAKE_CXX_COMPILER=${compiler.command}`]),
    ...(sanitized?.cmakeArgs ?? []),
    ...(options.cmakeArgs ?? []),
  ];
  const hash = createHash('sha256')
    .update(JSON.stringify({ cmakeArgs, compiler: compiler.version }))
    .digest('hex')
    .slice(0, 10);
  const key = `${debug ? 'debug' : 'release'}${sanitizer ? `-${sanitizer}` : ''}-${hash}`;
  return { cmakeArgs, key, ccache, compiler, sanitizer, dependencies, notes, jobs: options.jobs };
}

/**
 * Each tree is `<root>/mlx` with its build in `<root>/build-<key>`, so with
 * CCACHE_BASEDIR=<root> the patched and baseline compile commands are
 * identical and share cache entries. Dependencies live outside both roots.
 */
export function treeSpec(
  ctx: Context,
  sourceDir: string,
  buildDir: string,
  setup: BuildSetup,
  label: string,
): BuildSpec {
  // CCACHE_NOHASHDIR, as MLX's CI sets it: with -g (Debug) ccache otherwise hashes the build folder, and the
  // second tree compiles cold.
  const cache = setup.ccache ? { CCACHE_BASEDIR: path.dirname(sourceDir), CCACHE_NOHASHDIR: '1' } : {};
  const env = { ...ctx.env, ...cache, ...(setup.sanitizer ? sanitizerRunEnv(setup.sanitizer) : {}) };
  return {
    sourceDir,
    buildDir,
    cmakeArgs: setup.cmakeArgs,
    target: ctx.config.build.target,
    testBinary: ctx.config.build.testBinary,
    env,
    label,
    jobs: setup.jobs,
    rateFile: path.join(ctx.cacheRoot, 'build-rate.json'),
  };
}

/**
 * What the suite builds and compares: the patched tree, and the unpatched
 * commit that is its baseline (a worktree of `repo`). `test` builds the
 * checkout against the pinned commit; `check --build` builds another MLX
 * commit with the series against that commit.
 */
export interface SuiteTarget {
  /** The repository the baseline worktree is made from. */
  repo: Git;
  /** The patched source tree. */
  patched: Git;
  /** Where the patched tree's builds go. */
  patchedLayout: TreeLayout;
  /** The unpatched commit, its worktree, builds and saved results. */
  base: string;
  baselineLayout: TreeLayout & { results(commit: string, key: string): string };
  plan: ApplyPlan;
  /** Files in the patched tree that differ from the applied series. */
  localEdits: string[];
}

export interface BaselineRun {
  run: DoctestRun;
  cached: boolean;
  buildDir: string;
  buildSeconds: number;
  /** Under a sanitizer: the number of reports of the whole unpatched suite. */
  reports: number | null;
}

/** Builds and runs the unpatched tree once per build key; later runs read the saved results. */
export async function baselineRun(
  ctx: Context,
  target: Pick<SuiteTarget, 'repo' | 'base' | 'baselineLayout'>,
  setup: BuildSetup,
  stream: NodeJS.WritableStream,
): Promise<BaselineRun> {
  const { base, baselineLayout: tree, repo } = target;
  const buildDir = tree.build(setup.key);
  const resultsFile = tree.results(base, setup.key);
  // The baseline's run depends only on the commit (the build options are in the results file's name).
  const inputs = JSON.stringify({ commit: base });
  const saved = await readSaved(resultsFile, inputs, SavedBaselineSchema);
  // Under a sanitizer the saved run must hold its number of reports.
  if (saved && (setup.sanitizer === null || saved.reports !== undefined)) {
    ctx.log.info(`baseline: using saved results of the unpatched build (${resultsFile})`);
    return { run: saved, cached: true, buildDir, buildSeconds: 0, reports: saved.reports ?? null };
  }
  await prepareWorktree(ctx, repo, tree, base);
  const baseSpec = treeSpec(ctx, tree.source, buildDir, setup, 'baseline');
  await configureIfNeeded(baseSpec, ctx.log);
  const built = await buildTarget(baseSpec, ctx.log, stream);
  const run = await runDoctest(baseSpec, ctx.log, {});
  // Under a sanitizer the whole unpatched suite is one run: the number of its reports is what the patched tree's
  // existing cases are compared with.
  const reports = setup.sanitizer ? (await reportsInLog(baseSpec)).length : null;
  await writeFile(resultsFile, savedText(inputs, { ...run, ...(reports === null ? {} : { reports }) }));
  return { run, cached: false, buildDir, buildSeconds: built.seconds, reports };
}

/**
 * Builds the applied checkout, runs its suite and classifies every case
 * against the unpatched baseline. Saves the result next to the build so
 * `verify` can reuse it while it is current.
 */
export async function runSuite(ctx: Context, options: SuiteOptions): Promise<SuiteResult> {
  const { git, plan } = await requireAppliedCheckout(ctx, {
    hint: ', so the build tests what templates/ and patches/ say.',
    message: (head) =>
      head === null
        ? `No checkout in ${ctx.layout.checkout}.`
        : `The checkout does not hold the current series (${head.kind === 'applied' ? 'templates/ or patches/ changed since the last apply' : `HEAD is ${head.kind}`}).`,
  });

  // Edits made in the checkout are built too, but apply would not keep them and the PR does not hold them.
  const localEdits = (await git.status()).map((e) => e.path);
  if (localEdits.length) {
    const shown =
      localEdits.slice(0, 10).join(', ') + (localEdits.length > 10 ? ` and ${localEdits.length - 10} more` : '');
    ctx.log.warn(`${LOCAL_EDITS_NOTE}: ${shown}`);
  }

  await verifyBuildTools(ctx, git.dir);
  const target: SuiteTarget = {
    repo: git,
    patched: git,
    patchedLayout: ctx.layout.patched,
    base: ctx.config.upstream.commit,
    baselineLayout: ctx.layout.baseline,
    plan,
    localEdits,
  };
  return withLock(ctx.workdir, 'test', () => runSuiteOn(ctx, target, options));
}

/** Refuses to start a build on a machine that lacks a tool it needs (`source`: the MLX tree to build). */
export async function verifyBuildTools(ctx: Context, source: string): Promise<void> {
  const needsBlas = /find_package\(BLAS/.test(
    await ifAbsent(readFile(path.join(source, 'CMakeLists.txt'), 'utf8'), ''),
  );
  const checks: ReportItem[] = await buildToolItems(ctx.env, ctx.workdir, needsBlas, ctx.platform);
  for (const line of formatItems(checks.filter((c) => c.status !== 'pass'))) ctx.log.info(line);
  if (!itemsPass(checks)) {
    throw new UserError(
      'TOOL_MISSING',
      `The machine cannot build this project yet:\n${formatItems(checks.filter((c) => c.required && c.status !== 'pass')).join('\n')}`,
      {
        hint: 'Run the fix commands above (`mlx-storage-pr doctor test` lists every check).',
        details: { checks },
      },
    );
  }
}

/**
 * Builds the target's patched tree, runs its suite and classifies every case
 * against the target's unpatched baseline. The caller holds the workdir lock.
 */
export async function runSuiteOn(ctx: Context, target: SuiteTarget, options: SuiteOptions): Promise<SuiteResult> {
  const stream = ctx.log.stream;
  const { patched: git, plan } = target;
  const setup = await prepareBuild(ctx, options);
  for (const d of setup.dependencies) ctx.log.info(`dependency ${d.dep}: ${d.source}`);
  for (const n of setup.notes) ctx.log.info(`note: ${n}`);

  const buildDir = target.patchedLayout.build(setup.key);
  const patchedSpec = treeSpec(ctx, git.dir, buildDir, setup, 'patched');
  const twinChoice = await chooseTwin(ctx, git.dir, patchedSpec, options);
  const twinChosenBy = twinChoice.chosenBy;
  const runsSuite = options.suite !== false;
  const useBaseline = runsSuite && options.baseline !== false;
  const sanitizer = setup.sanitizer;

  // Under a sanitizer the baseline comes first: when the unpatched tree does not build that way, the lane does not apply.
  const first = sanitizer && useBaseline ? await sanitizedBaseline(ctx, target, setup) : null;
  let baseline: BaselineRun | null = first?.baseline ?? null;
  const notApplicable = first?.notApplicable ?? null;

  const configured = notApplicable === null ? await configureIfNeeded(patchedSpec, ctx.log) : false;
  let built = { seconds: 0, steps: 0 };
  let patchedRun: Awaited<ReturnType<typeof runDoctest>> = {
    cases: [],
    complete: true,
    interrupted: null,
    crashes: [],
  };
  let sanitized: SanitizedRun | null = null;
  if (runsSuite && notApplicable === null) {
    built = await buildTarget(patchedSpec, ctx.log, stream);
    if (sanitizer) {
      const known = baseline ? new Set(baseline.run.cases.map((c) => c.name)) : null;
      sanitized = await runSanitized(patchedSpec, ctx.log, { filter: options.tests, known, where: 'suite' });
      patchedRun = sanitized.run;
    } else {
      patchedRun = await runDoctest(patchedSpec, ctx.log, { filter: options.tests, sourceFile: options.sourceFile });
    }
  }
  const twin =
    twinChosenBy !== null && notApplicable === null
      ? {
          ...(await runTwin(ctx, patchedSpec, { filter: options.tests, sanitized: sanitizer !== null })),
          chosenBy: twinChosenBy,
        }
      : null;
  const matched = patchedRun.cases.length + (twin?.summary.cases ?? 0);
  if (options.tests && matched === 0 && notApplicable === null)
    throw await noMatch(options.tests, runsSuite ? patchedSpec : twinSpec(patchedSpec), ctx, twinChoice.declined);

  if (useBaseline && !sanitizer) baseline = await baselineRun(ctx, target, setup, stream);
  const classified = classify(patchedRun.cases, baseline?.run.cases ?? null);
  const summary = summarize(classified);
  const sanitizerData = sanitizer
    ? sanitizerResult(sanitizer, {
        notApplicable,
        suite: sanitized,
        twin: twin?.alone ?? [],
        baselineReports: baseline?.reports ?? null,
        compared: options.tests === undefined,
      })
    : null;
  const blocking =
    classified.filter(isBlocking).length +
    (twin ? twin.summary.byClass['new-test-failed'] : 0) +
    (sanitizerData && sanitizerData.rest.extra > 0 ? 1 : 0);

  const data = testData(target, {
    setup,
    buildDir,
    configured,
    built,
    patchedRun,
    useBaseline,
    baseline,
    runsSuite,
    summary,
    classified,
    sanitizer: sanitizerData,
    twin,
  });
  if (summary.cases + (twin?.summary.cases ?? 0) === 0 && notApplicable === null) {
    throw new UserError('TESTS_FAILED', `The test binary ${patchedSpec.testBinary} ran no test case.`, {
      hint: `Check build.testBinary in the config and the test log: ${logFiles(buildDir).test}`,
    });
  }
  if (runsSuite && notApplicable === null) {
    const binary = await mtime(path.join(buildDir, ctx.config.build.testBinary));
    await writeFile(lastRunFile(buildDir), savedText(lastRunInputs(plan.inputHash, runFilter(options), binary), data));
  }
  return { data, classified, blocking, inputHash: plan.inputHash };
}

/**
 * The baseline of a sanitizer run, built first; when the unpatched tree does
 * not build that way, the lane does not apply (`notApplicable` says why).
 */
async function sanitizedBaseline(
  ctx: Context,
  target: SuiteTarget,
  setup: BuildSetup,
): Promise<{ baseline: BaselineRun | null; notApplicable: string | null }> {
  try {
    return { baseline: await baselineRun(ctx, target, setup, ctx.log.stream), notApplicable: null };
  } catch (error) {
    if (!isUserError(error) || (error.code !== 'BUILD_FAILED' && error.code !== 'CONFIGURE_FAILED')) throw error;
    const notApplicable = firstError(error);
    ctx.log.warn(`--sanitize ${setup.sanitizer}: the unpatched tree does not build this way: ${notApplicable}`);
    return { baseline: null, notApplicable };
  }
}

/** What `test --json` reports of one run. */
function testData(
  target: SuiteTarget,
  run: {
    setup: BuildSetup;
    buildDir: string;
    configured: boolean;
    built: { seconds: number; steps: number };
    patchedRun: Awaited<ReturnType<typeof runDoctest>>;
    useBaseline: boolean;
    baseline: BaselineRun | null;
    runsSuite: boolean;
    summary: Summary;
    classified: ClassifiedCase[];
    sanitizer: TestData['sanitizer'];
    twin: (TwinData & { chosenBy: TwinChoice }) | null;
  },
): TestData {
  const { patched: git, plan, localEdits } = target;
  const { setup, buildDir, configured, built, patchedRun, useBaseline, baseline, runsSuite, summary, classified } = run;
  const sanitizerData = run.sanitizer;
  const twin = run.twin;
  return {
    command: 'test',
    buildDir,
    logs: logFiles(buildDir),
    dependencies: setup.dependencies,
    notes: setup.notes,
    compiler: setup.compiler,
    localEdits,
    patched: {
      configured,
      buildSeconds: built.seconds,
      buildSteps: built.steps,
      complete: patchedRun.complete,
      crashes: patchedRun.crashes,
    },
    baseline: {
      used: useBaseline,
      cached: baseline?.cached ?? false,
      buildDir: baseline?.buildDir ?? null,
      buildSeconds: baseline?.buildSeconds ?? 0,
      summary: baseline ? summarize(classify(baseline.run.cases, baseline.run.cases)) : null,
    },
    suiteRan: runsSuite,
    summary,
    cases: classified.map((c) => ({
      name: c.name,
      classification: c.classification,
      status: c.patched.status,
      baseline: c.baseline,
      failures: withOrigins(c.patched.failures, { plan, buildDir, checkout: git.dir, localEdits }),
    })),
    sanitizer: sanitizerData,
    twin: twin && {
      ...twin,
      cases: twin.cases.map((c) => ({
        ...c,
        failures: withOrigins(c.failures, { plan, buildDir, checkout: git.dir, localEdits }),
      })),
    },
  };
}

/**
 * The usage error for a `--tests` filter that matched no case: the twin's reason when the filter matched only
 * Metal-only cases that the twin cannot run here (`declined`), else the names closest to it.
 */
async function noMatch(
  filter: string,
  spec: BuildSpec,
  ctx: Context,
  declined: TwinDecision['declined'],
): Promise<UserError> {
  if (declined)
    return new UserError(
      'USAGE',
      `--tests "${filter}" matches ${declined.matched} Metal-only case(s) and no other, and the twin cannot run here: ${declined.why}`,
      {
        hint: declined.hint ?? 'Run the Metal-only cases on a Mac, or where the twin can run (Linux, a static build).',
      },
    );
  const names = await listDoctestCases(spec, ctx.log);
  const close = closeCaseNames(filter, names);
  const how = 'doctest matches whole case names, ignoring case, with * and ? wildcards (e.g. --tests "test my op*")';
  return new UserError('USAGE', `--tests "${filter}" matches none of the ${names.length} test cases.`, {
    hint: close.length ? `Close names: ${close.map((n) => `"${n}"`).join(', ')}. ${how}.` : `No name is close; ${how}.`,
    details: { filter, close },
  });
}

export interface SuiteResult {
  data: TestData;
  classified: ClassifiedCase[];
  /** New failures plus failing new tests. */
  blocking: number;
  inputHash: string;
}

/** What the saved last run depends on: the series, the --tests filter and the test binary. */
/** The filters a run was made with, for its saved results; null for a whole run. */
function runFilter(options: SuiteOptions): string | null {
  const parts = [options.tests, options.sourceFile && `source:${options.sourceFile}`].filter(Boolean);
  return parts.length ? parts.join(' ') : null;
}

function lastRunInputs(inputHash: string, filter: string | null, binaryMtimeMs: number | null): string {
  return JSON.stringify({ inputHash, filter, binaryMtimeMs });
}

export function lastRunFile(buildDir: string): string {
  return path.join(buildDir, 'mlx-storage-pr-last-run.json');
}

async function mtime(file: string): Promise<number | null> {
  return stat(file).then(
    (s) => s.mtimeMs,
    () => null,
  );
}

/**
 * The saved full-suite result of the last `test`, when the series, the build
 * options and the test binary are all unchanged since; otherwise null.
 */
export async function currentSavedRun(ctx: Context, options: SuiteOptions): Promise<TestData | null> {
  if ((await ctx.checkout()) === null) return null;
  const { plan } = await ctx.project();
  const setup = await prepareBuild(ctx, options);
  const buildDir = ctx.layout.patched.build(setup.key);
  // Only a run of the whole suite, of this series, with this test binary, against the baseline counts.
  const binary = await mtime(path.join(buildDir, ctx.config.build.testBinary));
  const saved = await readSaved(
    lastRunFile(buildDir),
    lastRunInputs(plan.inputHash, null, binary),
    SavedTestDataSchema,
  );
  if (!saved?.baseline.used) return null;
  if ((await inspectCheckout(ctx)).current === null) return null;
  return saved;
}
