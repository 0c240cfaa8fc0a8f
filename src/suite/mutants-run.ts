import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { ifAbsent } from '../adapters/files.js';
import { withLock } from '../adapters/lock.js';
import { failedItem, type ReportItem } from '../core/report-items.js';
import type { CaseResult } from './doctest.js';
import { isUserError, UserError } from '../core/errors.js';
import { mutate, MUTANTS_FILE, parseMutants, type Mutant } from './mutants.js';
import { CONFIG_FILE, isTestPath, seriesRoles, templateVariables } from '../series/config.js';
import { plannedPaths } from '../series/plan.js';
import { buildTarget, configureIfNeeded, runDoctest, type BuildSpec } from './cmake.js';
import { prepareWorktree, requireAppliedCheckout } from '../series/checkout.js';
import type { Context } from '../series/context.js';
import { readSavedItem, savePassedItem } from './saved-results.js';
import { prepareBuild, treeSpec, type SuiteOptions } from './suite.js';
import { explainTwinBuildError, twinFilesHash, twinSpec, verifyTwinPossible } from './twin-run.js';

export const MUTANTS_TITLE = 'Mutants of the implementation are killed by the tests';

export interface MutantOutcome {
  name: string;
  file: string;
  why: string;
  /** killed: a case failed; survived: every case passed; invalid: it does not compile. */
  result: 'killed' | 'survived' | 'invalid';
  /** The cases that failed (killed), or the first compile error (invalid). */
  by: string[];
  /** Which cases judged it: the Metal-only cases on the twin, or the suite's new cases. */
  runner: 'twin' | 'suite';
  seconds: number;
}

/** How one kind of mutant is judged: which target to build and which cases to run. */
interface Runner {
  kind: MutantOutcome['runner'];
  spec: BuildSpec;
  filter?: string;
  sourceFile?: string;
}

/** The test files the series adds or changes (its test role), as doctest source-file filters. */
async function seriesTestFiles(ctx: Context): Promise<string[]> {
  const roles = seriesRoles(ctx.config);
  return plannedPaths((await ctx.project()).plan).filter((p) => isTestPath(roles, p));
}

/**
 * One runner per judge: the twin (on a Mac, the Metal-only test files in the
 * real suite), a doctest filter, or the series' own test files. Mutants with
 * the same judge share a runner, so its unmutated run happens once.
 */
function runnersOf(ctx: Context, spec: BuildSpec, testFiles: readonly string[]): (m: Mutant) => Runner {
  const runners = new Map<string, Runner>();
  const sourceFilter = (files: readonly string[]) => files.map((f) => `*/${f}`).join(',');
  return (m) => {
    const key = m.judge.kind === 'tests' ? `tests:${m.judge.filter}` : m.judge.kind;
    let runner = runners.get(key);
    if (runner === undefined) {
      const metal = seriesRoles(ctx.config).metal;
      runner =
        m.judge.kind === 'twin'
          ? ctx.platform === 'darwin'
            ? { kind: 'suite', spec, sourceFile: sourceFilter(metal?.tests ?? []) }
            : { kind: 'twin', spec: twinSpec(spec) }
          : m.judge.kind === 'tests'
            ? { kind: 'suite', spec, filter: m.judge.filter }
            : { kind: 'suite', spec, sourceFile: sourceFilter(testFiles) };
      runners.set(key, runner);
    }
    return runner;
  };
}

/**
 * verify's mutant check: each mutant in mutants.json is a small edit to the
 * PR's implementation that the tests must notice. Each is built in a scratch
 * worktree of the applied series (never the checkout), only the edited unit
 * recompiles, and the cases that pass unmutated are run: those of the
 * mutant's judge (the Metal-only cases on the host twin, or on a Mac in the
 * real suite; a doctest filter; by default the series' own test files).
 */
export async function mutantsItem(ctx: Context, options: SuiteOptions): Promise<ReportItem> {
  const base = { id: 'mutants', title: MUTANTS_TITLE, required: true };
  try {
    return await runMutants(ctx, options, base);
  } catch (error) {
    return failedItem(base, error);
  }
}

/** Why the mutant check does not apply to the series (no mutants.json, or no mutant in it), or null. */
export async function mutantsNotApplicable(ctx: Context): Promise<string | null> {
  const file = path.join(ctx.projectRoot, MUTANTS_FILE);
  const text = await ifAbsent(readFile(file, 'utf8'), null);
  if (text === null)
    return `not applicable: no ${MUTANTS_FILE} in the project (docs/metal.md, "Mutants", says how to list edits the tests must catch)`;
  return parseMutants(text, file, templateVariables(ctx.config)).length === 0
    ? `not applicable: no mutants in ${MUTANTS_FILE}`
    : null;
}

async function runMutants(
  ctx: Context,
  options: SuiteOptions,
  base: Pick<ReportItem, 'id' | 'title' | 'required'>,
): Promise<ReportItem> {
  const file = path.join(ctx.projectRoot, MUTANTS_FILE);
  const text = await ifAbsent(readFile(file, 'utf8'), null);
  const notApplicable = await mutantsNotApplicable(ctx);
  if (notApplicable !== null || text === null)
    return { ...base, status: 'not-checked', required: false, detail: notApplicable ?? '' };
  const mutants = parseMutants(text, file, templateVariables(ctx.config));
  const twinJudged = mutants.filter((m) => m.judge.kind === 'twin');
  if (twinJudged.length > 0 && seriesRoles(ctx.config).metal === null)
    throw new UserError(
      'CONFIG_INVALID',
      `${MUTANTS_FILE}: ${twinJudged.map((m) => `"${m.name}"`).join(', ')} ${twinJudged.length === 1 ? 'is' : 'are'} judged by the Metal twin, but the config has no Metal role.`,
      {
        hint: `Declare roles.metal in ${CONFIG_FILE}, or give these mutants another judge ({"tests": "<doctest filter>"}).`,
      },
    );
  const { git } = await requireAppliedCheckout(ctx, {
    hint: ', so the mutants edit what templates/ and patches/ say.',
  });
  const head = await git.head();
  if (head === null)
    throw new UserError('NOT_APPLIED', 'The checkout has no commit.', { hint: 'Run `mlx-storage-pr apply`.' });

  // Every mutant must still fit the source: a list that no longer matches would test nothing.
  const originals = new Map<string, string>();
  const mutated = new Map<Mutant, string>();
  const problems: string[] = [];
  for (const m of mutants) {
    const original = originals.get(m.file) ?? (await git.fileAt(head, m.file));
    if (original === null) {
      problems.push(`"${m.name}": ${m.file} is not in the applied series`);
      continue;
    }
    originals.set(m.file, original);
    const result = mutate(original, m);
    if ('problem' in result) problems.push(`"${m.name}": ${result.problem}`);
    else mutated.set(m, result.text);
  }
  if (problems.length)
    return {
      ...base,
      status: 'fail',
      detail: `${problems.length} mutant(s) no longer fit the source:\n${problems.join('\n')}`,
      fix: `Update "find" in ${MUTANTS_FILE} to the current source (or remove a mutant whose code is gone).`,
    };

  // A pass for exactly this series, mutants.json, twin and build options is not run again. A failure
  // is never kept: a mutant that survived a slow machine's timeout gets another run.
  const setup = await prepareBuild(ctx, options);
  const resultsFile = ctx.layout.mutants.results(setup.key);
  const inputs = JSON.stringify({
    inputHash: (await ctx.project()).plan.inputHash,
    key: setup.key,
    mutants: createHash('sha256').update(text).digest('hex'),
    twin: await twinFilesHash(),
  });
  const saved = await readSavedItem(resultsFile, inputs);
  if (saved?.status === 'pass')
    return {
      ...saved,
      detail: `${saved.detail} (saved result; the series, mutants.json and build options are unchanged)`,
    };

  const check = await withLock(ctx.workdir, 'verify', async () => {
    const tree = ctx.layout.mutants;
    await prepareWorktree(ctx, git, tree, head, { fresh: true });
    const spec = treeSpec(ctx, tree.source, tree.build(setup.key), setup, 'mutants');
    await configureIfNeeded(spec, ctx.log);

    const runnerFor = runnersOf(ctx, spec, await seriesTestFiles(ctx));
    if (ctx.platform !== 'darwin' && mutants.some((m) => m.judge.kind === 'twin')) await verifyTwinPossible(ctx, spec);
    // The cases that pass without a mutant are the ones that can kill one.
    const runners = [...new Set(mutants.map(runnerFor))];
    const passing = new Map<Runner, { names: string[]; seconds: number }>();
    for (const runner of runners) {
      await build(ctx, runner);
      const start = Date.now();
      const run = await runDoctest(runner.spec, ctx.log, { filter: runner.filter, sourceFile: runner.sourceFile });
      const failing = run.cases.filter((c) => c.status !== 'passed' && c.status !== 'skipped');
      if (failing.length)
        throw new UserError(
          'TESTS_FAILED',
          `Without any mutant, these ${runner.kind === 'twin' ? 'Metal twin' : 'suite'} cases already fail: ${failing.map((c) => c.name).join(', ')}.`,
          { hint: `Fix them first (\`mlx-storage-pr test${runner.kind === 'twin' ? ' --metal-twin' : ''}\`).` },
        );
      const names = run.cases.filter((c) => c.status === 'passed').map((c) => c.name);
      if (names.length === 0)
        throw new UserError('TESTS_FAILED', `No ${runner.kind} case runs for the mutants.`, {
          hint: 'Add test cases for the implementation.',
        });
      passing.set(runner, { names, seconds: (Date.now() - start) / 1000 });
    }

    const outcomes: MutantOutcome[] = [];
    for (const m of mutants) {
      const runner = runnerFor(m);
      const original = originals.get(m.file) as string;
      const target = path.join(tree.source, m.file);
      const start = Date.now();
      ctx.log.info(`mutant "${m.name}" (${m.file})`);
      await writeFile(target, mutated.get(m) as string);
      try {
        outcomes.push({ ...(await judge(ctx, m, runner, passing.get(runner)!)), seconds: (Date.now() - start) / 1000 });
      } finally {
        await writeFile(target, original);
      }
    }
    return report(base, outcomes);
  });
  if (check.status === 'pass') await savePassedItem(ctx, resultsFile, inputs, check);
  return check;
}

async function build(ctx: Context, runner: Runner): Promise<void> {
  try {
    await buildTarget(runner.spec, ctx.log, ctx.log.stream);
  } catch (error) {
    throw runner.kind === 'twin' ? explainTwinBuildError(error) : error;
  }
}

async function judge(
  ctx: Context,
  m: Mutant,
  runner: Runner,
  passing: { names: string[]; seconds: number },
): Promise<Omit<MutantOutcome, 'seconds'>> {
  const outcome = { name: m.name, file: m.file, why: m.why, runner: runner.kind };
  try {
    await build(ctx, runner);
  } catch (error) {
    if (!isUserError(error) || error.code !== 'BUILD_FAILED') throw error;
    const errors = (error.details as { errors?: string[] } | undefined)?.errors ?? [];
    return { ...outcome, result: 'invalid', by: [errors[0]?.replace(/^.*?\/mlx\//, '') ?? 'compile error'] };
  }
  // A mutant can hang a case (a wait that never ends): that kills it too.
  const timeoutMs = Math.max(20_000, passing.seconds * 20_000);
  const run = await runDoctest(runner.spec, ctx.log, {
    filter: runner.filter,
    sourceFile: runner.sourceFile,
    timeoutMs,
  });
  const byName = new Map<string, CaseResult>(run.cases.map((c) => [c.name, c]));
  const killers = passing.names.filter((n) => byName.get(n)?.status !== 'passed');
  return { ...outcome, result: killers.length ? 'killed' : 'survived', by: killers };
}

function report(base: Pick<ReportItem, 'id' | 'title' | 'required'>, outcomes: MutantOutcome[]): ReportItem {
  const survived = outcomes.filter((o) => o.result === 'survived');
  const invalid = outcomes.filter((o) => o.result === 'invalid');
  const seconds = outcomes.map((o) => o.seconds);
  const mean = seconds.reduce((a, b) => a + b, 0) / Math.max(1, seconds.length);
  const lines = outcomes.map(
    (o) =>
      `${o.result.padEnd(8)} "${o.name}" (${o.runner}, ${o.seconds.toFixed(1)} s)` +
      (o.result === 'killed'
        ? `: ${o.by.length} case(s) fail, e.g. "${o.by[0]}"`
        : o.result === 'survived'
          ? `: every case passes; ${o.why}`
          : `: does not compile: ${o.by[0]}`),
  );
  const head =
    survived.length + invalid.length === 0
      ? `all ${outcomes.length} mutants killed (${mean.toFixed(1)} s per mutant, max ${Math.max(...seconds).toFixed(1)} s)`
      : `${survived.length} of ${outcomes.length} mutant(s) survive${invalid.length ? `, ${invalid.length} do not compile` : ''}: ${[...survived, ...invalid].map((o) => `"${o.name}"`).join(', ')}`;
  return {
    ...base,
    status: survived.length + invalid.length === 0 ? 'pass' : 'fail',
    detail: [head, ...lines].join('\n'),
    ...(survived.length + invalid.length
      ? {
          fix: `${survived.length ? 'Add a test case that fails for each surviving mutant (its "why" says what to pin)' : ''}${survived.length && invalid.length ? '; ' : ''}${invalid.length ? `fix the replacement of each mutant that does not compile in ${MUTANTS_FILE}` : ''}.`,
        }
      : {}),
  };
}
