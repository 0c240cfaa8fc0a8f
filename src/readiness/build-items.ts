import { withLock } from '../adapters/lock.js';
import { failedItem, type ReportItem } from '../core/report-items.js';
import { isUserError, UserError } from '../core/errors.js';
import type { Git } from '../adapters/git.js';
import { joinPatch, sectionPath, splitPatch } from '../core/patch.js';
import { changedLines, casesAtLines } from '../core/test-cases.js';
import { isTestPath, NO_METAL_ROLE, seriesRoles } from '../series/config.js';
import { plannedPaths, type ApplyPlan } from '../series/plan.js';
import { buildTarget, configureIfNeeded, runDoctest } from '../suite/cmake.js';
import { prepareWorktree } from '../series/checkout.js';
import type { Context } from '../series/context.js';
import {
  currentSavedRun,
  prepareBuild,
  runSuite,
  treeSpec,
  type BuildSetup,
  type SuiteOptions,
  type TestData,
} from '../suite/suite.js';
import { mutantsItem, mutantsNotApplicable, type MutantSelection } from '../suite/mutants-run.js';
import { readSavedItem, savePassedItem } from '../suite/saved-results.js';
import { buildTree } from '../series/applied-tree.js';
import { SANITIZER_NAMES, type Sanitizer } from '../suite/sanitize.js';

export type BuildItemOptions = SuiteOptions & { mutants?: MutantSelection | undefined; jobs?: number | undefined };

/** A check's id, title and whether it is required, as the registry declares them. */
type Base = Pick<ReportItem, 'id' | 'title' | 'required'>;

/**
 * The PR's suite cases and (on Linux, for a series with Metal-only tests) its twin cases under a sanitizer, built
 * as MLX's sanitizer job builds, each new case run alone (`test --sanitize`).
 */
export async function sanitizerItem(
  ctx: Context,
  options: BuildItemOptions,
  sanitizer: Sanitizer,
): Promise<ReportItem> {
  const metal = seriesRoles(ctx.config).metal;
  const planned = plannedPaths((await ctx.project()).plan);
  const metalTests = metal !== null && metal.tests.some((f) => planned.includes(f));
  const twin = metalTests && ctx.platform !== 'darwin';
  const base = {
    id: 'sanitizer',
    title: `Suite${twin ? ' and Metal twin' : ''} under ${SANITIZER_NAMES[sanitizer]} (--sanitize ${sanitizer})`,
    required: true,
  };
  const fix = `mlx-storage-pr test --sanitize ${sanitizer}${twin ? ' --metal-twin' : ''}  (lists each report with its frames)`;
  try {
    const { data, blocking } = await runSuite(ctx, {
      ...options,
      tests: undefined,
      sanitize: sanitizer,
      metalTwin: twin,
    });
    const s = data.sanitizer;
    if (s === null) throw new Error('the sanitizer lane did not run');
    if (s.status === 'not-applicable')
      return {
        ...base,
        status: 'not-checked',
        required: false,
        detail: `not applicable: the unpatched tree does not build with ${SANITIZER_NAMES[sanitizer]}: ${s.reason ?? ''}`,
      };
    const failing = s.alone.filter((c) => c.reports.length > 0);
    const detail =
      `${s.alone.length} new and twin case(s) run alone: ${failing.length} with a report` +
      (failing.length ? ` (${failing.map((c) => `${c.name}: ${c.reports[0]?.message ?? ''}`).join('; ')})` : '') +
      `; ${s.rest.cases} existing case(s): ${s.rest.patched} report(s), ${s.rest.baseline ?? 0} unpatched; ` +
      `${blocking} failure(s) in all; ${s.stricter}`;
    return { ...base, status: blocking ? 'fail' : 'pass', detail, ...(blocking ? { fix } : {}) };
  } catch (error) {
    return failedItem(base, error);
  }
}

/**
 * The mutants check runs only on a passing Linux build and Metal twin run
 * (`twin` is null when the twin check was left out).
 */
export async function mutantsCheck(
  ctx: Context,
  options: BuildItemOptions,
  full: TestData | null,
  twin: ReportItem | null,
  base: Base,
): Promise<ReportItem> {
  const blocked = full === null || (twin !== null && twin.status === 'fail');
  if (!blocked) return mutantsItem(ctx, options);
  const notApplicable = await mutantsNotApplicable(ctx, options.mutants).catch(() => null);
  const { id, title } = base;
  return notApplicable !== null
    ? { id, title, status: 'not-checked', required: false, detail: notApplicable }
    : {
        id,
        title,
        status: 'not-checked',
        detail: 'needs a passing Linux build and Metal twin run first',
        required: base.required,
      };
}

/**
 * The PR's Metal-only cases on the host twin (Linux). On macOS they run for
 * real in the suite, so there is nothing to twin.
 */
export async function twinItem(
  ctx: Context,
  options: BuildItemOptions,
  full: TestData | null,
  base: Base,
): Promise<ReportItem> {
  if (ctx.platform === 'darwin')
    return {
      ...base,
      status: 'not-checked',
      required: false,
      detail: 'not needed on macOS: the suite runs the Metal-only cases on Metal',
    };
  const metal = seriesRoles(ctx.config).metal;
  if (metal === null) return { ...base, status: 'not-checked', required: false, detail: NO_METAL_ROLE };
  const planned = plannedPaths((await ctx.project()).plan);
  if (!metal.tests.some((f) => planned.includes(f)))
    return {
      ...base,
      status: 'not-checked',
      required: false,
      detail: `the series adds none of the Metal-only test files of roles.metal (${metal.tests.join(', ')}): nothing to run on the twin`,
    };
  if (full === null) return { ...base, status: 'not-checked', detail: 'needs a passing Linux build first' };
  try {
    const { data } = await runSuite(ctx, { ...options, tests: undefined, metalTwin: true, suite: false });
    const twin = data.twin!;
    const s = twin.summary;
    const failed = twin.cases.filter((c) => c.classification === 'new-test-failed').map((c) => c.name);
    if (s.cases === 0)
      return { ...base, status: 'fail', detail: 'the twin ran no case', fix: 'mlx-storage-pr test --metal-twin' };
    return {
      ...base,
      status: failed.length ? 'fail' : 'pass',
      detail:
        `${s.cases} Metal-only case(s): ${s.passed} passed, ${s.failed} failed (${s.assertions.passed} assertions passed)` +
        (failed.length ? `; failing: ${failed.join(', ')}` : '') +
        `; shows ${twin.shows}; cannot show ${twin.cannotShow}`,
      ...(failed.length ? { fix: 'mlx-storage-pr test --metal-twin --no-suite  (lists every failure)' } : {}),
    };
  } catch (error) {
    return failedItem(base, error);
  }
}

/** The patched Linux build and its suite against the baseline; `data` is null when it could not run. */
export async function linuxBuild(
  ctx: Context,
  options: BuildItemOptions,
  base: Base,
): Promise<{ check: ReportItem; data: TestData | null }> {
  try {
    const saved = await currentSavedRun(ctx, options);
    const data = saved ?? (await runSuite(ctx, options)).data;
    const s = data.summary;
    const blocking = s.byClass['new-failure'] + s.byClass['new-test-failed'];
    const detail =
      `${s.cases} cases: ${s.passed} passed, ${s.failed} failed (${s.byClass['pre-existing-failure']} also fail unpatched); ` +
      `${s.byClass['new-failure']} new failure(s), ${s.byClass['new-test-failed']} failing new test(s), ${s.byClass['new-test-passed']} new test(s) passing` +
      (saved ? ' (saved results of the last `test`; the series and binary are unchanged)' : '');
    return {
      check: {
        id: base.id,
        title: base.title,
        status: blocking ? 'fail' : 'pass',
        detail,
        fix: 'mlx-storage-pr test  (lists every failure)',
        required: base.required,
      },
      data,
    };
  } catch (error) {
    if (!isUserError(error)) throw error;
    return {
      check: {
        id: base.id,
        title: base.title,
        status: 'fail',
        detail: error.message,
        ...(error.hint ? { fix: error.hint } : {}),
        required: base.required,
      },
      data: null,
    };
  }
}

/**
 * The part of the series that adds or changes tests: the templates and the
 * file sections of each patch that lie in the test role. A patch that mixes
 * implementation and tests keeps only its test files.
 */
export function testsOnlyPlan(plan: ApplyPlan, isTest: (file: string) => boolean): ApplyPlan {
  const patches = plan.patches.flatMap((p) => {
    const split = splitPatch(p.text, `patches/${p.name}`);
    const sections = split.sections.filter((section) => {
      const file = sectionPath(section);
      return file !== null && isTest(file);
    });
    if (sections.length === 0) return [];
    return [{ ...p, text: joinPatch({ ...split, sections }), files: p.files.filter((f) => isTest(f.path)) }];
  });
  return {
    ...plan,
    files: plan.files.filter((f) => isTest(f.path)),
    patches,
    inputHash: `${plan.inputHash}-tests-only`,
  };
}

/**
 * The existing cases the series edits: the `TEST_CASE`s of the test files it
 * patches (files that exist at the pin) whose lines it changes.
 */
async function changedCases(git: Git, pinned: string, head: string, testFiles: readonly string[]): Promise<string[]> {
  const names = new Set<string>();
  for (const file of testFiles) {
    if ((await git.fileAt(pinned, file)) === null) continue;
    const text = await git.fileAt(head, file);
    if (text === null) continue;
    const diff = await git.raw(['diff', '--no-color', '--no-ext-diff', '-U0', pinned, head, '--', file]);
    for (const name of casesAtLines(text, changedLines(diff))) names.add(name);
  }
  return [...names];
}

/**
 * Proof that the new or changed tests fail without the implementation (MLX
 * CONTRIBUTING.md): the test part of the series is built alone on the pin.
 */
export async function withoutImplementation(
  ctx: Context,
  options: BuildItemOptions,
  full: TestData | null,
  base: Base,
): Promise<ReportItem> {
  const roles = seriesRoles(ctx.config);
  const isTest = (file: string) => isTestPath(roles, file);
  const { plan } = await ctx.project();
  const testFiles = plannedPaths(plan).filter(isTest);
  if (testFiles.length === 0)
    return {
      ...base,
      status: 'not-checked',
      required: false,
      detail: `not applicable: the series changes no test (test paths: ${roles.tests.join(', ')})`,
    };
  if (full === null) return { ...base, status: 'not-checked', detail: 'needs a passing Linux build first' };

  try {
    const git = await ctx.checkout();
    const head = git === null ? null : await git.head();
    if (git === null || head === null)
      throw new UserError('NOT_APPLIED', 'No checkout.', { hint: 'Run `mlx-storage-pr apply` first.' });
    const pinned = ctx.config.upstream.commit;
    // New cases are those the baseline lacks; changed ones are existing cases whose lines the series edits.
    const added = full.cases
      .filter((c) => c.classification === 'new-test-passed' || c.classification === 'new-test-failed')
      .map((c) => c.name);
    const changed = (await changedCases(git, pinned, head, testFiles)).filter((n) => !added.includes(n));
    const judged = [...added, ...changed].sort();
    if (judged.length === 0)
      return {
        ...base,
        status: 'fail',
        detail: `the series changes ${testFiles.join(', ')} but adds or changes no test case that this build runs`,
        fix: 'Add doctest cases for the new code, or extend the case that covers it',
      };
    const notPassing = judged.filter((n) => full.cases.find((c) => c.name === n)?.status !== 'passed');
    if (notPassing.length)
      return {
        ...base,
        status: 'fail',
        detail: `with the whole series these cases do not pass: ${notPassing.join(', ')}`,
        fix: 'mlx-storage-pr test  (lists every failure)',
      };

    // A result for exactly this series, these build options and these cases is not built again.
    const setup = await prepareBuild(ctx, options);
    const resultsFile = ctx.layout.withoutImplementation.results(setup.key);
    const inputs = JSON.stringify({ inputHash: plan.inputHash, key: setup.key, cases: judged });
    const saved = await readSavedItem(resultsFile, inputs);
    if (saved !== null)
      return { ...saved, detail: `${saved.detail} (saved result; the series and build options are unchanged)` };
    const what = `${added.length} new and ${changed.length} changed case(s)`;

    // The workdir lock keeps a concurrent `test` or `apply` out of the shared checkout and cache.
    const item = await withLock(ctx.workdir, 'verify', () =>
      buildWithoutImplementation(ctx, { git, plan, isTest, setup, judged, what, base }),
    );
    await savePassedItem(ctx, resultsFile, inputs, item);
    return item;
  } catch (error) {
    return failedItem(base, error);
  }
}

/** Builds the test part of the series alone on the pin and runs the judged cases: they must not pass. */
async function buildWithoutImplementation(
  ctx: Context,
  o: {
    git: Git;
    plan: ApplyPlan;
    isTest: (file: string) => boolean;
    setup: BuildSetup;
    judged: readonly string[];
    what: string;
    base: Base;
  },
): Promise<ReportItem> {
  const { git, setup, base, what } = o;
  const built = await buildTree(git, testsOnlyPlan(o.plan, o.isTest));
  if (built.tree === null)
    return {
      ...base,
      status: 'fail',
      detail: 'the test changes do not apply on their own',
      fix: `Keep the test edits apart from the implementation's (the test paths: ${seriesRoles(ctx.config).tests.join(', ')})`,
    };
  const pinned = ctx.config.upstream.commit;
  const commit = await git.commitTree(built.tree, pinned, 'mlx-storage-pr: tests without the implementation');

  // Its own tree at the same depth as the others, so ccache reuses their objects.
  const tree = ctx.layout.withoutImplementation;
  await prepareWorktree(ctx, git, tree, commit, { fresh: true });
  const spec = treeSpec(ctx, tree.source, tree.build(setup.key), setup, 'without implementation');
  await configureIfNeeded(spec, ctx.log);
  try {
    await buildTarget(spec, ctx.log, ctx.log.stream);
  } catch (error) {
    if (!isUserError(error) || error.code !== 'BUILD_FAILED') throw error;
    const errors = (error.details as { errors?: string[] } | undefined)?.errors ?? [];
    const first = errors[0]?.replace(/^.*?\/mlx\//, '') ?? 'compile error';
    return {
      ...base,
      status: 'pass',
      detail: `without the implementation the tests do not compile (${first}); with it ${what} build and pass`,
    };
  }
  const run = await runDoctest(spec, ctx.log, {});
  const passing = o.judged.filter((name) => run.cases.find((c) => c.name === name)?.status === 'passed');
  if (passing.length)
    return {
      ...base,
      status: 'fail',
      detail: `these cases pass without the implementation: ${passing.join(', ')}`,
      fix: 'Make each new or changed test check behaviour that only the implementation provides',
    };
  return { ...base, status: 'pass', detail: `all ${what} fail without the implementation: ${o.judged.join(', ')}` };
}
