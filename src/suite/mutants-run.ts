import { createHash } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { z } from 'zod';

import { ifAbsent, readJsonFile } from '../adapters/files.js';
import type { Git } from '../adapters/git.js';
import { EQUIVALENTS_FILE, matchEquivalents, parseEquivalents, type Equivalent } from '../core/mutant-equivalents.js';
import { enumsIn, generateMutants, mutationScore, type GeneratedMutant } from '../core/mutant-operators.js';
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
import { prepareBuild, treeSpec, type BuildSetup, type SuiteOptions } from './suite.js';
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
function runnersOf(ctx: Context, spec: BuildSpec, testFiles: readonly string[]): (m: Pick<Mutant, 'judge'>) => Runner {
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
export async function mutantsItem(
  ctx: Context,
  options: SuiteOptions & { mutants?: MutantSelection | undefined; jobs?: number | undefined },
): Promise<ReportItem> {
  const base = { id: 'mutants', title: MUTANTS_TITLE, required: true };
  const selection = options.mutants ?? 'all';
  try {
    const listed = selection === 'generated' ? null : await runMutants(ctx, options, base);
    const generated = selection === 'listed' ? null : await runGenerated(ctx, options, base);
    return combine(base, listed, generated);
  } catch (error) {
    return failedItem(base, error);
  }
}

/** Which mutants `verify` runs: those of mutants.json, those the operators make, or both. */
export type MutantSelection = 'listed' | 'generated' | 'all';
export const MUTANT_SELECTIONS: readonly MutantSelection[] = ['listed', 'generated', 'all'];

/** One item from the listed and the generated mutants' items: it passes when each that applies passes. */
function combine(
  base: Pick<ReportItem, 'id' | 'title' | 'required'>,
  listed: ReportItem | null,
  generated: ReportItem | null,
): ReportItem {
  const parts = [listed, generated].filter((i): i is ReportItem => i !== null);
  const applicable = parts.filter((i) => !i.detail.startsWith('not applicable'));
  if (applicable.length === 0)
    return parts[0] ?? { ...base, status: 'not-checked', required: false, detail: 'not applicable' };
  if (applicable.length === 1) return applicable[0] as ReportItem;
  const [a, b] = applicable as [ReportItem, ReportItem];
  const fixes = [a.status !== 'pass' ? a.fix : undefined, b.status !== 'pass' ? b.fix : undefined].filter(Boolean);
  return {
    ...base,
    status: a.status === 'pass' && b.status === 'pass' ? 'pass' : 'fail',
    detail: `${MUTANTS_FILE}: ${a.detail}\ngenerated: ${b.detail}`,
    ...(fixes.length ? { fix: fixes.join(' ') } : {}),
  };
}

/** Why the mutant check does not apply to the series (no mutant listed and, unless only listed ones run, no C++ implementation), or null. */
export async function mutantsNotApplicable(ctx: Context, selection: MutantSelection = 'all'): Promise<string | null> {
  if (selection !== 'listed' && (await implementationFiles(ctx)).length > 0) return null;
  const file = path.join(ctx.projectRoot, MUTANTS_FILE);
  const text = await ifAbsent(readFile(file, 'utf8'), null);
  if (text === null)
    return `not applicable: no ${MUTANTS_FILE} in the project (docs/metal.md, "Mutants", says how to list edits the tests must catch)`;
  return parseMutants(text, file, templateVariables(ctx.config)).length === 0
    ? `not applicable: no mutants in ${MUTANTS_FILE}`
    : null;
}

/** The implementation files the series writes: C++ outside its test role and docs/. */
async function implementationFiles(ctx: Context): Promise<string[]> {
  const roles = seriesRoles(ctx.config);
  return plannedPaths((await ctx.project()).plan).filter(
    (p) => CXX_FILE.test(p) && !isTestPath(roles, p) && !p.startsWith('docs/'),
  );
}

/** verify's listed mutants: those of mutants.json, each applied to the source it must still fit and judged. */
async function runMutants(
  ctx: Context,
  options: SuiteOptions,
  base: Pick<ReportItem, 'id' | 'title' | 'required'>,
): Promise<ReportItem> {
  const file = path.join(ctx.projectRoot, MUTANTS_FILE);
  const text = await ifAbsent(readFile(file, 'utf8'), null);
  const notApplicable = await mutantsNotApplicable(ctx, 'listed');
  if (notApplicable !== null || text === null)
    return { ...base, status: 'not-checked', required: false, detail: notApplicable ?? '' };
  const mutants = parseMutants(text, file, templateVariables(ctx.config));
  verifyTwinJudges(ctx, mutants);
  const { git } = await requireAppliedCheckout(ctx, {
    hint: ', so the mutants edit what templates/ and patches/ say.',
  });
  const head = await git.head();
  if (head === null)
    throw new UserError('NOT_APPLIED', 'The checkout has no commit.', { hint: 'Run `mlx-storage-pr apply`.' });

  const { originals, mutated, problems } = await fitMutants(git, head, mutants);
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

  const check = await withLock(ctx.workdir, 'verify', () =>
    judgeListed({ ctx, git, head, setup, base }, mutants, originals, mutated),
  );
  if (check.status === 'pass') await savePassedItem(ctx, resultsFile, inputs, check);
  return check;
}

/** Refuses mutants judged by the Metal twin when the config has no Metal role. */
function verifyTwinJudges(ctx: Context, mutants: readonly Mutant[]): void {
  const twinJudged = mutants.filter((m) => m.judge.kind === 'twin');
  if (twinJudged.length > 0 && seriesRoles(ctx.config).metal === null)
    throw new UserError(
      'CONFIG_INVALID',
      `${MUTANTS_FILE}: ${twinJudged.map((m) => `"${m.name}"`).join(', ')} ${twinJudged.length === 1 ? 'is' : 'are'} judged by the Metal twin, but the config has no Metal role.`,
      {
        hint: `Declare roles.metal in ${CONFIG_FILE}, or give these mutants another judge ({"tests": "<doctest filter>"}).`,
      },
    );
}

/**
 * Applies each mutant to its file at `head`. Returns the original files, the
 * mutated text of each mutant, and the mutants that no longer fit the source.
 */
async function fitMutants(
  git: Git,
  head: string,
  mutants: readonly Mutant[],
): Promise<{ originals: Map<string, string>; mutated: Map<Mutant, string>; problems: string[] }> {
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
  return { originals, mutated, problems };
}

/** What judging the listed mutants needs: the applied checkout, its commit, the build setup, the item. */
interface ListedRun {
  ctx: Context;
  git: Git;
  head: string;
  setup: BuildSetup;
  base: Pick<ReportItem, 'id' | 'title' | 'required'>;
}

/**
 * Under the workdir lock: builds a scratch worktree of the applied series,
 * runs each runner's cases without a mutant, then writes each mutant in turn
 * and judges it. Returns the report of the outcomes.
 */
async function judgeListed(
  run: ListedRun,
  mutants: readonly Mutant[],
  originals: ReadonlyMap<string, string>,
  mutated: ReadonlyMap<Mutant, string>,
): Promise<ReportItem> {
  const { ctx, setup } = run;
  const tree = ctx.layout.mutants;
  await prepareWorktree(ctx, run.git, tree, run.head, { fresh: true });
  const spec = treeSpec(ctx, tree.source, tree.build(setup.key), setup, 'mutants');
  await configureIfNeeded(spec, ctx.log);

  const runnerFor = runnersOf(ctx, spec, await seriesTestFiles(ctx));
  if (ctx.platform !== 'darwin' && mutants.some((m) => m.judge.kind === 'twin')) await verifyTwinPossible(ctx, spec);
  // The cases that pass without a mutant are the ones that can kill one.
  const runners = [...new Set(mutants.map(runnerFor))];
  const passing = new Map<Runner, Passing>();
  for (const runner of runners) passing.set(runner, await listedPassing(ctx, runner));

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
  return report(run.base, outcomes);
}

/** The cases that pass without a mutant, and how long they took. */
interface Passing {
  names: string[];
  seconds: number;
}

/**
 * Builds the runner's target and runs its cases without a mutant, for the
 * listed mutants: a case that fails, or no case at all, stops the check.
 */
async function listedPassing(ctx: Context, runner: Runner): Promise<Passing> {
  const passing = await unmutatedRun(ctx, runner);
  if (passing.names.length === 0)
    throw new UserError('TESTS_FAILED', `No ${runner.kind} case runs for the mutants.`, {
      hint: 'Add test cases for the implementation.',
    });
  return passing;
}

/** Builds the runner's target and runs its cases without a mutant: the cases that pass; one that fails stops the check. */
async function unmutatedRun(ctx: Context, runner: Runner): Promise<Passing> {
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
  return { names, seconds: (Date.now() - start) / 1000 };
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
  m: Pick<Mutant, 'name' | 'file' | 'why'>,
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

const TWIN_JUDGE: Pick<Mutant, 'judge'> = { judge: { kind: 'twin' } };
const SUITE_JUDGE: Pick<Mutant, 'judge'> = { judge: { kind: 'series-tests' } };

/** C++ sources and headers: the files the operators mutate. */
const CXX_FILE = /\.(?:c|cc|cpp|cxx|h|hh|hpp|hxx|ipp|inl)$/;

interface GeneratedOutcome {
  id: string;
  result: 'killed' | 'survived' | 'invalid';
  by: string[];
  runner: MutantOutcome['runner'];
  seconds: number;
}

const GeneratedResultsSchema = z.record(
  z.object({
    id: z.string(),
    result: z.enum(['killed', 'survived', 'invalid']),
    by: z.array(z.string()),
    runner: z.enum(['twin', 'suite']),
    seconds: z.number(),
  }),
);

/** The implementation files of the series (C++, not tests, not docs), each with the lines the series adds. */
async function implementationLines(
  ctx: Context,
  git: Git,
  head: string,
): Promise<Array<{ file: string; text: string; lines: Set<number>; origin: (line: string, n: number) => string }>> {
  const { plan } = await ctx.project();
  const files = await implementationFiles(ctx);
  const out = [];
  for (const file of files) {
    const text = await git.fileAt(head, file);
    if (text === null) continue;
    const template = plan.files.find((f) => f.path === file);
    const lines = new Set<number>();
    if (template !== undefined) text.split('\n').forEach((_, i) => lines.add(i + 1));
    else {
      const diff = await git.raw(['diff', '--unified=0', '--no-color', '--no-ext-diff', plan.commit, head, '--', file]);
      for (const m of diff.matchAll(/^@@ -\S+ \+(\d+)(?:,(\d+))? @@/gm)) {
        const first = Number(m[1]);
        const count = m[2] === undefined ? 1 : Number(m[2]);
        for (let n = first; n < first + count; n++) lines.add(n);
      }
    }
    const origin = (line: string, n: number): string => {
      if (template !== undefined) return `templates/${template.template}:${n}`;
      for (const patch of plan.patches) {
        const at = patch.text.split('\n').findIndex((l) => l === `+${line}`);
        if (at >= 0) return `patches/${patch.name}:${at + 1}`;
      }
      return file;
    };
    out.push({ file, text, lines, origin });
  }
  return out;
}

/**
 * verify's generated mutants: the operators of core/mutant-operators.ts
 * applied to every line the series adds to its implementation files. Metal
 * sources are judged on the twin (on a Mac, by the Metal-only cases), other
 * files by the series' own test files on the Linux build and, when they
 * survive there and the series has a Metal role, on the twin too. Each
 * outcome is kept by the mutant's text and everything else the series
 * changes, so an unchanged `verify` runs no mutant again.
 */
async function runGenerated(
  ctx: Context,
  options: SuiteOptions & { jobs?: number | undefined },
  base: Pick<ReportItem, 'id' | 'title' | 'required'>,
): Promise<ReportItem> {
  const started = Date.now();
  const { git } = await requireAppliedCheckout(ctx, {
    hint: ', so the mutants are made from what templates/ and patches/ say.',
  });
  const head = await git.head();
  if (head === null)
    throw new UserError('NOT_APPLIED', 'The checkout has no commit.', { hint: 'Run `mlx-storage-pr apply`.' });
  const files = await implementationLines(ctx, git, head);
  const enums = new Map<string, string[]>();
  for (const f of files) for (const [name, members] of enumsIn(f.text)) enums.set(name, members);
  const mutants = files.flatMap((f) => generateMutants({ file: f.file, text: f.text, lines: f.lines, enums }));
  if (mutants.length === 0)
    return {
      ...base,
      status: 'not-checked',
      required: false,
      detail: 'not applicable: the operators make no mutant of the series',
    };
  const origins = new Map(files.map((f) => [f.file, f.origin]));

  const equivalentsPath = path.join(ctx.projectRoot, EQUIVALENTS_FILE);
  const equivalentsText = await ifAbsent(readFile(equivalentsPath, 'utf8'), null);
  const { equivalent, stale } = matchEquivalents(
    equivalentsText === null ? [] : parseEquivalents(equivalentsText, equivalentsPath),
    mutants,
  );
  const toJudge = mutants.filter((m) => !equivalent.has(m.id));

  const roles = seriesRoles(ctx.config);
  const metalSources = new Set(roles.metal?.sources ?? []);
  const setup = await prepareBuild(ctx, options);
  const resultsFile = path.join(path.dirname(ctx.layout.mutants.results(setup.key)), `generated-${setup.key}.json`);
  const { contents, keyOf } = await outcomeKeys(ctx, git, head, setup.key);
  const saved: Record<string, GeneratedOutcome> =
    (await readJsonFile(resultsFile, GeneratedResultsSchema).catch(() => null)) ?? {};
  const outcomes = new Map<string, GeneratedOutcome>();
  for (const m of toJudge) {
    const hit = saved[keyOf(m)];
    if (hit !== undefined && hit.id === m.id) outcomes.set(m.id, hit);
  }
  const pending = toJudge.filter((m) => !outcomes.has(m.id));
  let ran = 0;
  if (pending.length > 0) {
    const run: GeneratedRun = {
      ctx,
      git,
      head,
      setup,
      useTwin: roles.metal !== null,
      metalSources,
      contents,
      keyOf,
      saved,
      outcomes,
      resultsFile,
      queue: [...pending],
      ran: 0,
      saving: Promise.resolve(),
    };
    ran = await withLock(ctx.workdir, 'verify', () => judgeGenerated(run, options.jobs));
  }
  return generatedReport(base, {
    mutants,
    outcomes,
    equivalent,
    stale,
    origins,
    ran,
    seconds: (Date.now() - started) / 1000,
  });
}

/**
 * The files the series writes as they are at `head`, and the key that keeps
 * a generated mutant's outcome: its text and every other file the series
 * writes, with the build options and the twin.
 */
async function outcomeKeys(
  ctx: Context,
  git: Git,
  head: string,
  buildKey: string,
): Promise<{ contents: Map<string, string>; keyOf: (m: GeneratedMutant) => string }> {
  // A mutant's outcome depends on its text and on every other file the series writes (the tests above all).
  const { plan } = await ctx.project();
  const planned = plannedPaths(plan);
  const contents = new Map<string, string>();
  for (const p of planned) contents.set(p, (await git.fileAt(head, p)) ?? '');
  const twinHash = await twinFilesHash();
  const keyOf = (m: GeneratedMutant): string => {
    const hash = createHash('sha256').update(`${buildKey}\0${twinHash}\0${m.id}\0${m.text}`);
    for (const p of planned) if (p !== m.file) hash.update(`\0${p}\0${contents.get(p)}`);
    return hash.digest('hex');
  };
  return { contents, keyOf };
}

/** The judging of the generated mutants, shared by its workers. */
interface GeneratedRun {
  ctx: Context;
  git: Git;
  head: string;
  setup: BuildSetup;
  useTwin: boolean;
  metalSources: ReadonlySet<string>;
  /** The files the series writes, as they are at `head`. */
  contents: ReadonlyMap<string, string>;
  keyOf: (m: GeneratedMutant) => string;
  /** The saved outcomes by key, as written to `resultsFile`. */
  saved: Record<string, GeneratedOutcome>;
  outcomes: Map<string, GeneratedOutcome>;
  resultsFile: string;
  /** The mutants no worker has taken yet. */
  queue: GeneratedMutant[];
  /** How many mutants were judged. */
  ran: number;
  /** The last write of `resultsFile`: one write at a time. */
  saving: Promise<void>;
}

/**
 * Under the workdir lock: judges the queued mutants with one worker per core
 * (at most `jobs`). Returns how many it judged.
 */
async function judgeGenerated(run: GeneratedRun, jobs: number | undefined): Promise<number> {
  const testFiles = await seriesTestFiles(run.ctx);
  // One worker per core, each with its own worktree and build folder; each mutant is built once.
  const workers = Math.max(1, Math.min(jobs ?? availableParallelism(), run.queue.length));
  const results = await Promise.allSettled(
    Array.from({ length: workers }, (_, n) => generatedWorker(run, testFiles, n)),
  );
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
  return run.ran;
}

/** Worker `n`: makes its own worktree and build folder, then judges mutants from the queue until it is empty. */
async function generatedWorker(run: GeneratedRun, testFiles: readonly string[], n: number): Promise<void> {
  const { ctx, setup } = run;
  const main = ctx.layout.mutants;
  const root = path.join(main.root, `worker-${n}`);
  const tree =
    n === 0 ? main : { root, source: path.join(root, 'mlx'), build: (key: string) => path.join(root, `build-${key}`) };
  await prepareWorktree(ctx, run.git, tree, run.head, { fresh: true });
  const spec = treeSpec(ctx, tree.source, tree.build(setup.key), setup, 'mutants');
  await configureIfNeeded(spec, ctx.log);
  const runnerFor = runnersOf(ctx, spec, testFiles);
  if (ctx.platform !== 'darwin' && run.useTwin) await verifyTwinPossible(ctx, spec);
  const passing = new Map<Runner, Passing>();
  for (let m = run.queue.shift(); m !== undefined; m = run.queue.shift()) {
    const runners = run.metalSources.has(m.file)
      ? [runnerFor(TWIN_JUDGE)]
      : [runnerFor(SUITE_JUDGE), ...(run.useTwin ? [runnerFor(TWIN_JUDGE)] : [])];
    const outcome = await judgeGeneratedMutant(run, m, path.join(tree.source, m.file), runners, passing);
    if (outcome !== null) await saveOutcome(run, m, outcome);
  }
}

/**
 * Writes the mutant to `target` and judges it with each runner in turn until
 * one does not see it survive; the file is put back afterwards. Null when
 * there is no runner.
 */
async function judgeGeneratedMutant(
  run: GeneratedRun,
  m: GeneratedMutant,
  target: string,
  runners: readonly Runner[],
  passing: Map<Runner, Passing>,
): Promise<GeneratedOutcome | null> {
  const { ctx } = run;
  const original = run.contents.get(m.file) ?? m.text;
  const start = Date.now();
  ctx.log.info(`mutant ${m.id}: ${m.description}`);
  let outcome: GeneratedOutcome | null = null;
  try {
    for (const runner of runners) {
      // The unmutated build and run of this runner come first.
      await writeFile(target, original);
      const seen = await generatedPassing(ctx, runner, passing);
      await writeFile(target, m.text);
      const judged = await judge(ctx, { name: m.id, file: m.file, why: m.description }, runner, seen);
      outcome = { id: m.id, result: judged.result, by: judged.by, runner: runner.kind, seconds: 0 };
      if (judged.result !== 'survived') break;
    }
  } finally {
    await writeFile(target, original);
  }
  if (outcome === null) return null;
  outcome.seconds = (Date.now() - start) / 1000;
  return outcome;
}

/**
 * The runner's cases that pass without a mutant, for the generated mutants:
 * built and run once per worker (kept in `passing`); a case that fails stops the check.
 */
async function generatedPassing(ctx: Context, runner: Runner, passing: Map<Runner, Passing>): Promise<Passing> {
  const known = passing.get(runner);
  if (known) return known;
  const result = await unmutatedRun(ctx, runner);
  passing.set(runner, result);
  return result;
}

/** Keeps the mutant's outcome and saves all outcomes to the results file. */
async function saveOutcome(run: GeneratedRun, m: GeneratedMutant, outcome: GeneratedOutcome): Promise<void> {
  run.outcomes.set(m.id, outcome);
  run.saved[run.keyOf(m)] = outcome;
  run.ran++;
  // Saved after each mutant, one write at a time: an interrupted run keeps what it judged.
  const text = JSON.stringify(run.saved);
  run.saving = run.saving.then(() => writeFile(run.resultsFile, text));
  await run.saving;
}

function generatedReport(
  base: Pick<ReportItem, 'id' | 'title' | 'required'>,
  r: {
    mutants: GeneratedMutant[];
    outcomes: Map<string, GeneratedOutcome>;
    equivalent: Map<string, Equivalent>;
    stale: Equivalent[];
    origins: Map<string, (line: string, n: number) => string>;
    ran: number;
    seconds: number;
  },
): ReportItem {
  const all = [...r.outcomes.values()];
  const counts = {
    generated: r.mutants.length,
    notViable: all.filter((o) => o.result === 'invalid').length,
    killed: all.filter((o) => o.result === 'killed').length,
    survived: all.filter((o) => o.result === 'survived').length,
    equivalent: r.equivalent.size,
  };
  const score = mutationScore(counts);
  const judged = all.filter((o) => o.result !== 'invalid');
  const perMutant = judged.length ? judged.reduce((a, o) => a + o.seconds, 0) / judged.length : 0;
  const byId = new Map(r.mutants.map((m) => [m.id, m]));
  const survivors = r.mutants.filter((m) => r.outcomes.get(m.id)?.result === 'survived');
  const lines = [
    `${counts.generated} generated, ${counts.notViable} not viable, ${counts.killed} killed, ${counts.survived} survived, ${counts.equivalent} equivalent: score ${score.toFixed(1)}% (${r.ran} run now, ${r.outcomes.size - r.ran} saved; ${perMutant.toFixed(1)} s per mutant; ${r.seconds.toFixed(0)} s in all)`,
    ...survivors.flatMap((m) => [
      `survived ${m.id}: ${m.description} (from ${r.origins.get(m.file)?.(m.original, m.line) ?? m.file})`,
      `  - ${m.original.trim()}`,
      `  + ${m.mutated.trim() || '(line removed)'}`,
    ]),
    ...[...r.equivalent.values()].map((e) => `equivalent ${e.id}: ${e.reason}`),
    ...r.stale.map(
      (e) =>
        `stale ${EQUIVALENTS_FILE} entry ${e.id}: ${byId.has(e.id) ? 'the mutated line differs' : 'no such mutant'}`,
    ),
  ];
  const failing = survivors.length > 0 || r.stale.length > 0;
  return {
    ...base,
    status: failing ? 'fail' : 'pass',
    detail: lines.join('\n'),
    ...(failing
      ? {
          fix: [
            survivors.length
              ? `Add a test that fails for each surviving mutant, or list it in ${EQUIVALENTS_FILE} with the reason it behaves as the original.`
              : '',
            r.stale.length ? `Remove or update the stale entries of ${EQUIVALENTS_FILE}.` : '',
          ]
            .filter(Boolean)
            .join(' '),
        }
      : {}),
  };
}
