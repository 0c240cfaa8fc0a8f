import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

import { VERIFY_GROUPS } from '../../src/readiness/skip.js';
import {
  asString,
  evaluate,
  expandMatrix,
  interpolate,
  pushTriggers,
  runs,
  type Context,
  type Status,
  type Value,
} from '../support/github-actions.js';
import { storedZip } from '../support/check-metal-fixtures.js';
import { describeName, mlxRepo } from '../support/mlx.js';
import { git, makeUpstream, REPO_ROOT, tempDir } from '../support/repos.js';

type Step = {
  name?: string;
  id?: string;
  uses?: string;
  run?: string;
  if?: string;
  with?: Record<string, unknown>;
  env?: Record<string, unknown>;
} & Record<string, unknown>;
/** A job that runs steps, or (`uses`) one that runs another workflow's jobs. */
type Job = {
  steps: Step[];
  uses?: string;
  if?: string;
  needs?: string | string[];
  with?: Record<string, unknown>;
  strategy?: { matrix: Record<string, unknown> };
  env?: Record<string, unknown>;
  permissions?: Record<string, string>;
} & Record<string, unknown>;
type Workflow = {
  name: string;
  on: Record<string, unknown>;
  jobs: Record<string, Job>;
  env?: Record<string, unknown>;
  concurrency?: { group: string; 'cancel-in-progress': unknown };
} & Record<string, unknown>;

const GITHUB = path.join(REPO_ROOT, '.github');
const files = readdirSync(path.join(GITHUB, 'workflows')).filter((f) => /\.ya?ml$/.test(f));
const read = (file: string) => readFileSync(path.join(GITHUB, 'workflows', file), 'utf8');
const load = (file: string) => parse(read(file)) as Workflow;
const steps = (wf: Workflow) => Object.values(wf.jobs).flatMap((job) => job.steps ?? []);
const uses = (wf: Workflow, action: string) => steps(wf).filter((s) => s.uses?.split('@')[0] === action);
const needsOf = (job: Job) => [job.needs ?? []].flat();
/** The commit each action is pinned to in ci.yml. */
const ciPins = new Map(
  steps(load('ci.yml'))
    .map((s) => s.uses?.split('@') ?? [])
    .filter((parts): parts is [string, string] => parts.length === 2),
);
const packageJson = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  scripts: Record<string, string>;
};

// ---------------------------------------------------------------------------------------------------------------
// The events the tests replay: the contexts GitHub gives a workflow's expressions for each.

const SHA = 'c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00';
type Scenario = { github: Record<string, Value>; inputs?: Record<string, Value>; status?: Status };
const github = (workflow: string, event_name: string, ref: string): Record<string, Value> => ({
  workflow,
  event_name,
  ref,
  ref_name: ref.replace(/^refs\/(heads|tags)\//, ''),
  repository: 'alice/mlx-storage-pr',
  server_url: 'https://github.com',
  sha: SHA,
  run_id: '42',
  run_attempt: '1',
});
const SCENARIOS = {
  'a push to main': (wf: string) => ({ github: github(wf, 'push', 'refs/heads/main') }),
  'a push to another branch': (wf: string) => ({ github: github(wf, 'push', 'refs/heads/feature') }),
  'a pull request': (wf: string) => ({ github: github(wf, 'pull_request', 'refs/pull/7/merge') }),
  'a dispatch from main': (wf: string) => ({ github: github(wf, 'workflow_dispatch', 'refs/heads/main') }),
  'a dispatch from another branch': (wf: string) => ({ github: github(wf, 'workflow_dispatch', 'refs/heads/feature') }),
  'a schedule': (wf: string) => ({ github: github(wf, 'schedule', 'refs/heads/main') }),
  'a cancel': (wf: string) => ({ github: github(wf, 'push', 'refs/heads/main'), status: { cancelled: true } }),
} satisfies Record<string, (wf: string) => Scenario>;

/** ci.yml as refresh-pr.yml's `ci` job calls it: the github context is the caller's, the inputs the job's `with`. */
function calledFromRefresh(ref = 'refs/heads/main'): Scenario {
  const caller = load('refresh-pr.yml');
  const callerGithub = github(caller.name, 'workflow_dispatch', ref);
  const job = Object.values(caller.jobs).find((j) => j.uses === './.github/workflows/ci.yml');
  const inputs = Object.fromEntries(
    Object.entries(job?.with ?? {}).map(([k, v]) => [k, interpolate(v, { github: callerGithub, inputs: {} })]),
  );
  return { github: callerGithub, inputs };
}

const context = (scenario: Scenario, extra: Context = {}): Context => ({
  inputs: {},
  secrets: { MLX_PR_TOKEN: 'token' },
  vars: {},
  env: {},
  runner: { os: 'Linux', temp: '/tmp' },
  ...scenario,
  ...extra,
});

/** The concurrency group and cancel-in-progress of a workflow for a scenario. */
function concurrency(wf: Workflow, scenario: Scenario): { group: string; cancel: boolean } {
  const c = wf.concurrency;
  if (c === undefined) throw new Error(`${wf.name}: no concurrency`);
  const ctx = context(scenario);
  return {
    group: asString(interpolate(c.group, ctx)),
    cancel: c['cancel-in-progress'] === true || interpolate(c['cancel-in-progress'], ctx) === true,
  };
}

/** The status a job's `if:` sees, from the results of the jobs it needs. */
function jobStatus(needs: Record<string, { result: string }>, cancelled = false): Status {
  const results = Object.values(needs).map((n) => n.result);
  return { cancelled, failed: results.includes('failure'), notAllSucceeded: results.some((r) => r !== 'success') };
}

/** The env a step sees: the workflow's, the job's and the step's, with their expressions evaluated. */
function stepEnv(wf: Workflow, job: Job, step: Step, ctx: Context): Record<string, string> {
  const env: Record<string, string> = {};
  for (const layer of [wf.env, job.env, step.env])
    for (const [k, v] of Object.entries(layer ?? {})) env[k] = asString(interpolate(v, { ...ctx, env }));
  return env;
}

/** Key/values a step wrote to $GITHUB_OUTPUT (`k=v` lines and `k<<DELIMITER` blocks). */
function parseOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] as string;
    const heredoc = /^([^=<]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2] as string, i + 1);
      out[heredoc[1] as string] = lines.slice(i + 1, end).join('\n');
      i = end;
    } else if (line.includes('=')) out[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
  }
  return out;
}

/**
 * Runs a `run:` block as GitHub does (bash -eo pipefail) after `prelude` (shell functions standing in for
 * commands), with $GITHUB_OUTPUT and $GITHUB_STEP_SUMMARY as files. Returns the exit code, output and files.
 */
async function runStep(
  script: string,
  options: { cwd?: string; env?: Record<string, string>; prelude?: string; path?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string; outputs: Record<string, string>; summary: string }> {
  const dir = tempDir('msp-step-');
  const output = path.join(dir, 'output');
  const summary = path.join(dir, 'summary');
  writeFileSync(output, '');
  writeFileSync(summary, '');
  const result = await execa('bash', ['-eo', 'pipefail', '-c', `${options.prelude ?? ''}\n${script}`], {
    cwd: options.cwd ?? REPO_ROOT,
    reject: false,
    stripFinalNewline: false,
    extendEnv: false,
    env: {
      PATH: `${options.path ? `${options.path}:` : ''}${process.env['PATH'] ?? ''}`,
      HOME: process.env['HOME'] ?? '/tmp',
      GITHUB_OUTPUT: output,
      GITHUB_STEP_SUMMARY: summary,
      RUNNER_TEMP: dir,
      ...options.env,
    },
  });
  return {
    code: result.exitCode ?? null,
    stdout: result.stdout,
    stderr: result.stderr,
    outputs: parseOutputs(readFileSync(output, 'utf8')),
    summary: readFileSync(summary, 'utf8'),
  };
}

/** Shell functions that record each call of the named commands (one line each in $CALLS) and succeed. */
const recorders = (...names: string[]) =>
  names.map((n) => `${n}() { printf '%s\\n' "${n} $*" >> "$CALLS"; }`).join('\n');

/** A folder of executables named `name`, each running `body` (a bash script). */
function stubBin(programs: Record<string, string>): string {
  const dir = tempDir('msp-stub-');
  for (const [name, body] of Object.entries(programs)) {
    writeFileSync(path.join(dir, name), `#!/usr/bin/env bash\n${body}\n`);
    chmodSync(path.join(dir, name), 0o755);
  }
  return dir;
}

// ---------------------------------------------------------------------------------------------------------------

describe('the expression model the tests use', () => {
  it('evaluates the forms the workflows use, as GitHub does', () => {
    const ctx = { github: { ref: 'refs/heads/main' }, inputs: {}, steps: { a: { outcome: 'skipped' } } };
    expect(evaluate("${{ github.ref != 'refs/heads/main' }}", ctx)).toBe(false);
    expect(evaluate("inputs.caller || 'push'", ctx)).toBe('push');
    expect(evaluate("steps.a.outcome != 'skipped' && steps.a.outcome || 'other'", ctx)).toBe('other');
    expect(evaluate("github.ref == 'REFS/HEADS/MAIN'", ctx)).toBe(true);
    expect(evaluate("startsWith(github.ref, 'refs/heads/')", ctx)).toBe(true);
    expect(evaluate("case(false, 'a', true, 'b', 'c')", ctx)).toBe('b');
    expect(runs('matrix.x', { matrix: { x: true } }, { failed: true })).toBe(false);
    expect(runs('!cancelled()', {}, { failed: true })).toBe(true);
    expect(runs('always()', {}, { cancelled: true })).toBe(true);
    expect(() => evaluate('github.ref ~ 1', ctx)).toThrow();
  });

  it('expands a matrix with include as GitHub does', () => {
    const legs = expandMatrix({
      t: ['1', '2'],
      k: ['a', 'b'],
      include: [
        { k: 'a', extra: 'x' },
        { t: '2', k: 'a', only: true },
        { t: '3', k: 'c' },
      ],
    });
    expect(legs).toContainEqual({ t: '2', k: 'a', extra: 'x', only: true });
    expect(legs).toContainEqual({ t: '1', k: 'a', extra: 'x' });
    expect(legs).toContainEqual({ t: '3', k: 'c' });
    expect(legs).toHaveLength(5);
  });
});

describe.each(files)('workflow %s', (file) => {
  const wf = load(file);

  it('grants contents: read at the top; a job widens it by one scope at most, and such a job can read no secret', () => {
    expect(wf['permissions']).toEqual({ contents: 'read' });
    for (const [id, job] of Object.entries(wf.jobs)) {
      if (job.permissions === undefined) continue;
      const widened = Object.entries(job.permissions).filter(([k, v]) => !(k === 'contents' && v === 'read'));
      expect(widened.length, id).toBeLessThanOrEqual(1);
      expect(JSON.stringify(job), id).not.toContain('secrets.');
    }
  });

  it('concurrency: superseded runs are cancelled on pull requests and other branches, never on main or for a schedule', () => {
    for (const [name, make] of Object.entries(SCENARIOS)) {
      const scenario = make(wf.name);
      const { cancel } = concurrency(wf, scenario);
      const ref = asString(scenario.github['ref'] ?? null);
      if (file === 'refresh-pr.yml') expect(cancel, `${file}, ${name}`).toBe(false);
      else expect(cancel, `${file}, ${name}`).toBe(ref !== 'refs/heads/main');
    }
  });

  it("sets timeout-minutes on every job (a job that runs another workflow has that workflow's limits)", () => {
    for (const [id, job] of Object.entries(wf.jobs))
      if (job.uses === undefined) expect(job['timeout-minutes'], id).toBeGreaterThan(0);
  });

  it('lets no job or step continue on error, so a failed build fails the run', () => {
    for (const [id, job] of Object.entries(wf.jobs)) {
      expect(job, id).not.toHaveProperty('continue-on-error');
      for (const step of job.steps ?? [])
        expect(step, `${id}: ${step.name ?? step.uses ?? step.run}`).not.toHaveProperty('continue-on-error');
    }
  });

  it('pins every third-party action by a full commit SHA with its version in a comment', () => {
    const lines = read(file)
      .split('\n')
      .filter((l) => /^\s*(-\s+)?uses:/.test(l));
    // Every `uses:` the parser sees (of steps and of jobs) is on one of these lines, so none escapes the check.
    const jobUses = Object.values(wf.jobs).filter((j) => j.uses).length;
    expect(lines.length).toBe(steps(wf).filter((s) => s.uses).length + jobUses);
    const pins = new Map<string, string>();
    for (const line of lines) {
      const match = /uses:\s*(\S+)(?:\s+#\s*(.*))?$/.exec(line);
      const [action, ref] = (match?.[1] ?? '').split('@');
      if (action?.startsWith('./')) continue;
      expect(action, line).toMatch(/^[\w.-]+\/[\w./-]+$/);
      expect(ref, line).toMatch(/^[0-9a-f]{40}$/);
      expect(match?.[2], line).toMatch(/^v\d+\.\d+\.\d+$/);
      // One action, one commit across the file.
      expect(pins.get(action as string) ?? ref, line).toBe(ref);
      pins.set(action as string, ref as string);
      // And the same commit as ci.yml, so one update moves every workflow.
      expect(ciPins.get(action as string) ?? ref, `${file}: ${line}`).toBe(ref);
    }
  });

  it('checks out without keeping the token in .git/config', () => {
    for (const step of uses(wf, 'actions/checkout')) expect(step.with?.['persist-credentials']).toBe(false);
  });

  it('caches npm in setup-node in the jobs that hold no secret (#2: the job with the token restores no cache)', () => {
    for (const job of Object.values(wf.jobs)) {
      const secret = JSON.stringify(job).includes('secrets.');
      for (const step of (job.steps ?? []).filter((s) => s.uses?.startsWith('actions/setup-node@') === true))
        expect(step.with?.['cache']).toBe(secret ? undefined : 'npm');
    }
  });

  it('keys ccache by the pinned commit and the series, and saves it only outside pull requests', () => {
    for (const step of uses(wf, 'hendrikmuhs/ccache-action')) {
      expect(step.with?.['key']).toContain('${{ steps.pin.outputs.commit }}');
      expect(step.with?.['key']).toContain("hashFiles('templates/**', 'patches/**', 'mlx-storage-pr.config.json')");
      for (const [name, make] of Object.entries(SCENARIOS)) {
        const save = interpolate(step.with?.['save'], context(make(wf.name), { matrix: { toolkit: 'metal' } }));
        expect(save === true || save === 'true', name).toBe(name !== 'a pull request');
      }
    }
  });

  it('#10 ccache keeps a size limit and evicts the entries the job did not use, so a cache does not fill with old objects', () => {
    for (const step of uses(wf, 'hendrikmuhs/ccache-action')) {
      expect(step.with?.['max-size']).toMatch(/^\d+[MG]$/);
      expect(step.with?.['evict-old-files']).toBe('job');
    }
  });

  it('names only runner labels that actionlint knows or that .github/actionlint.yaml declares', () => {
    const declared = (
      parse(readFileSync(path.join(GITHUB, 'actionlint.yaml'), 'utf8')) as {
        'self-hosted-runner': { labels: string[] };
      }
    )['self-hosted-runner'].labels;
    for (const job of Object.values(wf.jobs)) {
      if (job.uses !== undefined) continue;
      const label = String(job['runs-on']);
      if (!/^(ubuntu-(22|24)\.04|macos-1[45])$/.test(label)) expect(declared, label).toContain(label);
    }
  });

  it('#10 no step and no job runs after a cancel (always() does; !cancelled() does not), and the summaries and log uploads still run after a failure', () => {
    for (const [id, job] of Object.entries(wf.jobs)) {
      const legs = expandMatrix(job.strategy?.matrix);
      const needs = Object.fromEntries(needsOf(job).map((n) => [n, { result: 'success', outputs: {} }]));
      for (const matrix of legs) {
        const ctx = context(SCENARIOS['a cancel'](wf.name), { matrix, needs });
        expect(runs(job.if, ctx, jobStatus(needs, true)), `${id} after a cancel`).toBe(false);
        for (const step of job.steps ?? []) {
          const label = `${id} (${JSON.stringify(matrix)}): ${step.name ?? step.uses ?? step.run}`;
          expect(runs(step.if, ctx, { cancelled: true }), `${label}, after a cancel`).toBe(false);
          const reporting = step.name === 'Job summary' || step.uses?.startsWith('actions/upload-artifact@') === true;
          if (reporting) {
            const failed = context(SCENARIOS['a push to main'](wf.name), { matrix, needs });
            expect(runs(step.if, failed, { failed: true }), `${label}, after a failure`).toBe(true);
          }
        }
      }
    }
  });

  it('#10 an artifact upload succeeds on a re-run of the failed job (a second upload of one name returns 409), and expires', () => {
    for (const step of uses(wf, 'actions/upload-artifact')) {
      const names = ['1', '2'].map((attempt) =>
        interpolate(step.with?.['name'], {
          ...context(SCENARIOS['a push to main'](wf.name)),
          github: { ...github(wf.name, 'push', 'refs/heads/main'), run_attempt: attempt },
          matrix: { target: '14.0', toolkit: 'cpu' },
        }),
      );
      expect(step.with?.['overwrite'] === true || names[0] !== names[1], asString(names[0] ?? null)).toBe(true);
      expect(step.with?.['retention-days']).toBeGreaterThan(0);
      expect(step.with?.['retention-days']).toBeLessThanOrEqual(30);
    }
  });

  it('#10 Node 22 or later in every job outside the Node matrix (Node 20 is past its end of life), and a Node the matrix tests', () => {
    const matrix = (load('ci.yml').jobs['tool-tests']?.strategy?.matrix['node'] ?? []) as number[];
    for (const [id, job] of Object.entries(wf.jobs))
      for (const step of (job.steps ?? []).filter((s) => s.uses?.startsWith('actions/setup-node@') === true)) {
        const version = String(step.with?.['node-version']);
        if (version.includes('matrix.node')) continue;
        expect(Number(version), id).toBeGreaterThanOrEqual(22);
        expect(matrix, id).toContain(Number(version));
      }
  });

  it('#10 apt-get runs with DEBIAN_FRONTEND=noninteractive, so a package that asks a question cannot hang the job', () => {
    for (const [id, job] of Object.entries(wf.jobs))
      for (const step of job.steps ?? []) {
        const script = step.run ?? '';
        const install = script.indexOf('apt-get install');
        if (install < 0) continue;
        const env = stepEnv(wf, job, step, context(SCENARIOS['a push to main'](wf.name)));
        const exported = script.slice(0, install).includes('export DEBIAN_FRONTEND=noninteractive');
        expect(env['DEBIAN_FRONTEND'] === 'noninteractive' || exported, `${id}: ${step.name ?? script}`).toBe(true);
      }
  });
});

describe('every workflow', () => {
  it('pins each action at the same commit as the other workflows do', () => {
    const pins = new Map<string, Set<string>>();
    for (const file of files)
      for (const step of steps(load(file))) {
        const [action, ref] = (step.uses ?? '').split('@');
        if (action && ref && !action.startsWith('./')) pins.set(action, (pins.get(action) ?? new Set()).add(ref));
      }
    for (const [action, refs] of pins) expect([...refs], action).toHaveLength(1);
  });
});

describe('ci.yml', () => {
  const wf = load('ci.yml');
  const job = (id: string) => wf.jobs[id] as Job;
  const step = (jobId: string, test: (s: Step) => boolean) => {
    const found = job(jobId).steps.find(test);
    expect(found, `${jobId}: step not found`).toBeDefined();
    return found as Step;
  };
  /** The jobs that run `test --upstream-ci` (the Linux legs built as MLX's Linux CI builds). */
  const upstreamCiJobs = () =>
    Object.entries(wf.jobs).filter(([, j]) => (j.steps ?? []).some((s) => /test --upstream-ci/.test(s.run ?? '')));

  it('runs on pushes to main, on pull requests, by hand and when another workflow calls it (refresh-pr.yml), and on nothing else', () => {
    expect(Object.keys(wf.on).sort()).toEqual(['pull_request', 'push', 'workflow_call', 'workflow_dispatch']);
    expect(pushTriggers(wf.on, 'main', ['src/cli.ts'])).toBe(true);
    expect(pushTriggers(wf.on, 'feature', ['src/cli.ts'])).toBe(false);
  });

  it('#10 a push to main that changes only Markdown or the PR text in pr/ does not start CI (nine macOS legs); any other change does', () => {
    for (const only of [['README.md'], ['pr/description.md', 'pr/commit-message.txt'], ['shims/README.md', 'pr/x']])
      expect(pushTriggers(wf.on, 'main', only), only.join(' ')).toBe(false);
    for (const changed of [['src/cli.ts'], ['README.md', 'templates/a.h'], ['patches/series'], ['.ci/run']])
      expect(pushTriggers(wf.on, 'main', changed), changed.join(' ')).toBe(true);
    // Pull requests run whatever they change.
    expect(wf.on['pull_request'] ?? null).toBeNull();
  });

  it('#5 a run called by refresh-pr.yml is never cancelled by or queued behind a push run, and never shares its caller group (github.workflow there is the caller name)', () => {
    const refresh = load('refresh-pr.yml');
    for (const ref of ['refs/heads/main', 'refs/heads/feature']) {
      const called = concurrency(wf, calledFromRefresh(ref));
      expect(called.cancel, `called from ${ref}`).toBe(false);
      for (const name of [
        'a push to main',
        'a push to another branch',
        'a pull request',
        'a dispatch from main',
      ] as const)
        expect(called.group, `vs ${name}`).not.toBe(concurrency(wf, SCENARIOS[name](wf.name)).group);
      const callerScenario = { github: github(refresh.name, 'workflow_dispatch', ref) };
      expect(called.group).not.toBe(concurrency(refresh, callerScenario).group);
      // Nor the group of a caller that uses the common `${{ github.workflow }}-${{ github.ref }}` (as MLX's CI does).
      const common = {
        ...refresh,
        concurrency: { group: '${{ github.workflow }}-${{ github.ref }}', 'cancel-in-progress': false },
      };
      expect(called.group).not.toBe(concurrency(common, callerScenario).group);
    }
    // Two pushes to main queue, never cancel; two pushes to a pull request cancel.
    expect(concurrency(wf, SCENARIOS['a push to main']('ci')).cancel).toBe(false);
    expect(concurrency(wf, SCENARIOS['a pull request']('ci')).cancel).toBe(true);
  });

  it('restores ccache in every job that builds MLX, before the build', () => {
    for (const [id, j] of Object.entries(wf.jobs)) {
      const build = j.steps.findIndex((s) =>
        /mlx-storage-pr (test|verify)|vitest run test\/e2e|cmake --build/.test(s.run ?? ''),
      );
      if (build < 0) continue;
      const ccache = j.steps.findIndex((s) => s.uses?.startsWith('hendrikmuhs/ccache-action@') === true);
      expect(ccache, id).toBeGreaterThanOrEqual(0);
      expect(build, id).toBeGreaterThan(ccache);
    }
  });

  it("tests the tool on the lowest Node that package.json's engines allows and on each Node the other jobs use, LTS (even) majors only", () => {
    const matrix = job('tool-tests').strategy?.matrix['node'] as number[];
    const lowest = Number(/>=\s*(\d+)/.exec(packageJson.engines.node)?.[1]);
    expect(matrix).toContain(lowest);
    for (const n of matrix) expect(n % 2, String(n)).toBe(0);
    expect([...matrix].sort((a, b) => a - b)).toEqual(matrix);
    expect(step('tool-tests', (s) => s.uses?.startsWith('actions/setup-node') === true).with?.['node-version']).toBe(
      '${{ matrix.node }}',
    );
    const ciRun = readFileSync(path.join(REPO_ROOT, '.ci', 'run'), 'utf8');
    expect(ciRun).toMatch(/apt-get install[^\n]*(\\\n[^\n]*)*\bshellcheck\b/);
  });

  it('#10 lints once per run (eslint, prettier, the workflow lint), not in every Node leg, and every Node leg runs the tests', async () => {
    let lint = 0;
    let workflowLint = 0;
    const testedOn: unknown[] = [];
    const testScriptLints = /\bnpm run lint\b/.test(packageJson.scripts['test'] ?? '');
    for (const [id, j] of Object.entries(wf.jobs))
      for (const matrix of expandMatrix(j.strategy?.matrix))
        for (const s of (j.steps ?? []).filter((x) => x.run?.includes('.ci/run') === true)) {
          const calls = path.join(tempDir('msp-calls-'), 'calls');
          writeFileSync(calls, '');
          const bin = stubBin({
            'apt-get': 'exit 0',
            sudo: '"$@"',
            npm: `printf 'npm %s\\n' "$*" >> "${calls}"`,
            npx: `printf 'npx %s\\n' "$*" >> "${calls}"`,
          });
          const result = await runStep(
            asString(interpolate(s.run, context(SCENARIOS['a push to main']('ci'), { matrix }))),
            {
              path: bin,
            },
          );
          expect(result.code, `${id}: ${result.stderr}`).toBe(0);
          const lines = readFileSync(calls, 'utf8').split('\n');
          lint += lines.filter((l) => l === 'npm run lint' || (l === 'npm test' && testScriptLints)).length;
          workflowLint += lines.filter((l) => l.startsWith('npm run lint:workflows')).length;
          if (lines.some((l) => l === 'npm test' || /^npx vitest run\b/.test(l))) testedOn.push(matrix['node']);
        }
    expect(lint).toBe(1);
    expect(workflowLint).toBe(1);
    expect(testedOn.sort()).toEqual((job('tool-tests').strategy?.matrix['node'] as number[]).slice().sort());
  });

  it("#6 the real-MLX job fetches MLX with its history (the drift e2e test skips on a depth-1 copy) and the pull requests' merge refs (the open-prs e2e test skips without them)", async () => {
    const upstream = makeUpstream();
    for (const n of [1, 2]) {
      writeFileSync(path.join(upstream.dir, `f${n}`), `${n}\n`);
      git(upstream.dir, 'add', '-A');
      git(upstream.dir, 'commit', '--quiet', '-m', `c${n}`);
    }
    const pin = git(upstream.dir, 'rev-parse', 'HEAD').trim();
    git(upstream.dir, 'update-ref', 'refs/pull/7/merge', `${pin}~1`);
    git(upstream.dir, 'update-ref', 'refs/pull/7/head', `${pin}~1`);
    const dir = tempDir('msp-mlx-fetch-');
    writeFileSync(
      path.join(dir, 'mlx-storage-pr.config.json'),
      JSON.stringify({ upstream: { url: `file://${upstream.dir}`, commit: pin } }),
    );
    const fetch = step('mlx-linux', (s) => /git init --quiet --bare "\$MLX_REPO"/.test(s.run ?? ''));
    const repo = path.join(dir, 'mlx.git');
    const result = await runStep(fetch.run as string, { cwd: dir, env: { PIN: pin, MLX_REPO: repo } });
    expect(result.code, result.stderr).toBe(0);
    expect((await execa('git', ['--git-dir', repo, 'rev-parse', '--is-shallow-repository'])).stdout.trim()).toBe(
      'false',
    );
    expect((await execa('git', ['--git-dir', repo, 'rev-list', '--count', pin])).stdout.trim()).toBe('3');
    expect((await execa('git', ['--git-dir', repo, 'for-each-ref', '--format=%(refname)', 'refs/pull/'])).stdout).toBe(
      'refs/pull/7/merge',
    );
  });

  it('#6 the e2e step fails when an end-to-end test skipped (describe.skipIf passes silently otherwise); a skip outside test/e2e does not', async () => {
    const e2e = step('mlx-linux', (s) => s.id === 'e2e');
    const report = (file: string, status: string) =>
      JSON.stringify({
        testResults: [
          {
            name: path.join(REPO_ROOT, 'test/e2e/apply-mlx.test.ts'),
            assertionResults: [{ fullName: 'apply works', status: 'passed' }],
          },
          { name: path.join(REPO_ROOT, file), assertionResults: [{ fullName: 'check on the real MLX', status }] },
        ],
      });
    // vitest stands in: it writes the JSON report it is asked for, and passes.
    const prelude = `npx() { for a in "$@"; do case "$a" in --outputFile.json=*) printf '%s' "$REPORT" > "\${a#*=}";; esac; done; }`;
    const at = async (rep: string) => {
      const logDir = tempDir('msp-e2e-log-');
      return await runStep(e2e.run as string, { prelude, env: { REPORT: rep, LOG_DIR: logDir } });
    };
    const skipped = await at(report('test/e2e/check-mlx.test.ts', 'skipped'));
    expect(skipped.code).not.toBe(0);
    expect(skipped.stdout + skipped.stderr).toContain('check on the real MLX');
    expect((await at(report('test/e2e/check-mlx.test.ts', 'passed'))).code).toBe(0);
    expect((await at(report('test/unit/workflows.test.ts', 'skipped'))).code).toBe(0);
  });

  it('runs the e2e tests on the real MLX one file at a time, then verify without the PR text, and keeps the logs of a failure', () => {
    const linux = job('mlx-linux');
    const text = linux.steps.map((s) => s.run ?? '').join('\n');
    for (const pkg of [
      'nlohmann-json3-dev',
      'libfmt-dev',
      'libopenblas-dev',
      'liblapacke-dev',
      'doctest-dev',
      'clang-19',
    ])
      expect(text).toContain(pkg);
    expect(text).toMatch(/echo "MLX_REPO=/);
    expect(text).toMatch(/echo "METAL_CPP_DIR=/);
    expect(text).toContain('upstream.metalCpp.url');
    const e2e = step('mlx-linux', (s) => s.id === 'e2e');
    expect(e2e.run).toMatch(/vitest run test\/e2e test\/unit\/workflows\.test\.ts --no-file-parallelism /);
    const verify = step('mlx-linux', (s) => s.id === 'verify');
    expect(verify.run).toContain('verify --offline --skip pr-text --metal-cpp "$METAL_CPP_DIR"');
    expect(linux.steps.indexOf(verify)).toBeGreaterThan(linux.steps.indexOf(e2e));
    expect(step('mlx-linux', (s) => s.name === 'Job summary').run).toContain('cat "$LOG_DIR/verify.txt"');
    const upload = step('mlx-linux', (s) => s.uses?.startsWith('actions/upload-artifact') === true);
    expect(runs(upload.if, {}, { failed: true })).toBe(true);
    expect(runs(upload.if, {}, {})).toBe(false);
  });

  it('#8 builds the Linux shared-library leg as MLX does on its own runner image (no container), and keeps Debian 12 as a second compiler, named so', () => {
    const legs = upstreamCiJobs();
    expect(legs).toHaveLength(2);
    const [asMlx, others] = [
      legs.filter(([, j]) => j['container'] === undefined),
      legs.filter(([, j]) => j['container']),
    ];
    expect(asMlx, 'one leg on the runner image').toHaveLength(1);
    const mlxLeg = asMlx[0]?.[1] as Job;
    expect(String(mlxLeg['name'])).toMatch(/as MLX's CI/);
    // CMake from pip, as MLX's setup action installs it, not the distribution's.
    expect(mlxLeg.steps.some((s) => /pip install[^\n]* cmake\b/.test(s.run ?? ''))).toBe(true);
    expect(mlxLeg.steps.map((s) => s.run ?? '').join('\n')).not.toMatch(/apt-get install[^\n]*(\\\n[^\n]*)*\bcmake\b/);
    const debian = others[0]?.[1] as Job;
    expect(debian['container']).toBe('debian:12');
    expect(String(debian['name'])).toMatch(/second compiler.*g\+\+ 12/);
  });

  it("runs MLX's sanitizer job for asan and ubsan on both trees and the Metal twin, with the real-MLX job's container and packages, offline, one ccache per sanitizer", () => {
    const legs = Object.entries(wf.jobs).filter(([, j]) =>
      (j.steps ?? []).some((s) => /mlx-storage-pr test [^\n]*--sanitize/.test(s.run ?? '')),
    );
    expect(legs.map(([id]) => id)).toEqual(['mlx-linux-sanitizers']);
    const sanitizers = job('mlx-linux-sanitizers');
    expect(sanitizers.strategy?.matrix['sanitizer']).toEqual(['asan', 'ubsan']);
    // One failing sanitizer does not cancel the other.
    expect((sanitizers.strategy as Record<string, unknown> | undefined)?.['fail-fast']).toBe(false);
    expect(sanitizers.env?.['SANITIZER']).toBe('${{ matrix.sanitizer }}');
    const build = step('mlx-linux-sanitizers', (s) => s.id === 'build');
    expect(build.run).toMatch(/mlx-storage-pr test --offline --sanitize "\$SANITIZER" --metal-twin --json/);
    // The real-MLX job's container, and no package it does not install for its own build.
    expect(sanitizers['container']).toBe(job('mlx-linux')['container']);
    const packages = (id: string) =>
      new Set(
        (job(id).steps.find((s) => /apt-get install/.test(s.run ?? ''))?.run ?? '')
          .split(/[\s\\]+/)
          .filter((w) => /^[a-z0-9][a-z0-9.+-]*$/.test(w) && !['apt-get', 'install', 'update'].includes(w)),
      );
    const realMlx = packages('mlx-linux');
    expect([...packages('mlx-linux-sanitizers')].filter((p) => !realMlx.has(p) && p !== 'jq')).toEqual([]);
    for (const p of ['g++', 'binutils', 'ccache', 'doctest-dev', 'libopenblas-dev'])
      expect(realMlx.has(p), p).toBe(true);
    const ccache = step('mlx-linux-sanitizers', (s) => s.uses?.startsWith('hendrikmuhs/ccache-action@') === true);
    expect(String(ccache.with?.['key'])).toMatch(/^linux-\$\{\{ matrix\.sanitizer \}\}-/);
    expect(String(job('mlx-linux-sanitizers')['timeout-minutes'])).toMatch(/^\d+$/);
  });

  it('macOS: Homebrew tools without auto-update, the Metal toolchain with its download fallback, warnings as errors on every leg', () => {
    const mac = job('macos');
    expect(mac['runs-on']).toBe('macos-26');
    expect(mac.env?.['HOMEBREW_NO_AUTO_UPDATE']).toBe(1);
    expect(step('macos', (s) => s.run?.startsWith('brew install') === true).run).toBe(
      'brew install doctest ninja ccache',
    );
    const toolchain = step('macos', (s) => s.name === 'Metal toolchain').run ?? '';
    expect(toolchain).toContain('if ! xcrun -sdk macosx metal --version; then');
    expect(toolchain).toContain('xcodebuild -downloadComponent MetalToolchain');
    expect(mac.env?.['CMAKE_ARGS']).toBe('${{ matrix.cmake-args }} -DCMAKE_COMPILE_WARNING_AS_ERROR=ON');
    expect(mac.env?.['MACOSX_DEPLOYMENT_TARGET']).toBe('${{ matrix.target }}');
  });

  /** Per macOS leg: the steps that run (by their `if:`) when every step before succeeds. */
  const macLegs = () =>
    expandMatrix(job('macos').strategy?.matrix).map((matrix) => ({
      matrix,
      ran: job('macos').steps.filter((s) =>
        runs(s.if, context(SCENARIOS['a push to main']('ci'), { matrix, steps: { apply: { outcome: 'success' } } })),
      ),
    }));
  /** A step that runs `test` (a command line, not the summary's text about it). */
  const runsTest = (s: Step) => /^npx mlx-storage-pr test\b/m.test(s.run ?? '');
  const runsSuite = (s: Step) => runsTest(s) && !/--tests |--metal-only/.test(s.run ?? '');
  const buildsOnly = (s: Step) => /^cmake --build/m.test(s.run ?? '');

  it('#9 macOS: the whole suite runs once (the targets differ only in compile flags), every other cpu and jit leg builds only, each leg builds once', () => {
    const legs = macLegs();
    expect(legs.filter((l) => l.ran.some(runsSuite))).toHaveLength(1);
    for (const { matrix, ran } of legs) {
      const builds = ran.filter((s) => runsTest(s) || buildsOnly(s));
      expect(builds, JSON.stringify(matrix)).toHaveLength(1);
      if (matrix['toolkit'] === 'metal') expect(ran.some(buildsOnly), JSON.stringify(matrix)).toBe(false);
    }
    const targets = new Set(legs.map((l) => asString(l.matrix['target'] ?? null)));
    for (const target of targets)
      for (const toolkit of ['cpu', 'metal', 'jit'])
        expect(
          legs.filter((l) => l.matrix['target'] === target && l.matrix['toolkit'] === toolkit),
          `${target} ${toolkit}`,
        ).toHaveLength(1);
  });

  it("macOS: the Metal build runs the storage cases with DEVICE=cpu and the Metal environment of MLX's test-macos, and fails the job when it fails", () => {
    const metal = step('macos', (s) => s.id === 'metal');
    expect(metal.env).toEqual({ DEVICE: 'cpu', METAL_DEVICE_WRAPPER_TYPE: 1, METAL_DEBUG_ERROR_MODE: 0 });
    expect(metal.run).toContain('mlx-storage-pr test --debug --no-baseline --metal-only --json -- "${args[@]}"');
    const summary = step('macos', (s) => s.name === 'Job summary').run ?? '';
    expect(summary).toContain('metal::is_available()\\` stays true');
    expect(summary).toContain('no GPU kernel ran');
    expect(summary).toContain('The stub cases return early in a Metal build.');
  });

  it('macOS: the job summary reports the outcome of the build step its leg ran, not a skipped one', () => {
    const summary = step('macos', (s) => s.name === 'Job summary');
    for (const { matrix, ran } of macLegs()) {
      const build = ran.find((s) => runsTest(s) || buildsOnly(s));
      expect(build?.id, JSON.stringify(matrix)).toBeDefined();
      for (const outcome of ['success', 'failure']) {
        const outcomes = Object.fromEntries(
          job('macos')
            .steps.filter((s) => s.id)
            .map((s) => [s.id, { outcome: s === build ? outcome : ran.includes(s) ? 'success' : 'skipped' }]),
        );
        const env = stepEnv(
          wf,
          job('macos'),
          summary,
          context(SCENARIOS['a push to main']('ci'), { matrix, steps: outcomes }),
        );
        expect(env['BUILD'], JSON.stringify(matrix)).toBe(outcome);
      }
    }
  });

  it('macOS: check-metal runs after the build, also when the build failed, with the doctest headers from Homebrew', () => {
    const mac = job('macos');
    const check = step('macos', (s) => s.id === 'check-metal');
    const ctx = context(SCENARIOS['a push to main']('ci'), {
      matrix: { toolkit: 'metal' },
      steps: { apply: { outcome: 'success' } },
    });
    expect(runs(check.if, ctx, { failed: true })).toBe(true);
    expect(check.run).toBe('npx mlx-storage-pr check-metal --include "$(brew --prefix doctest)/include"');
    expect(mac.steps.indexOf(check)).toBeGreaterThan(mac.steps.indexOf(step('macos', (s) => s.id === 'metal')));
  });

  it('#7 metal-cpp comes from upstream.metalCpp: an unset sha256 warns with the hash, a wrong one fails, the right one passes; only a pinned hash is cached', async () => {
    const pin = step('mlx-linux', (s) => s.id === 'metal-cpp');
    const cache = step('mlx-linux', (s) => s.uses?.split('@')[0] === 'actions/cache');
    const fetch = step('mlx-linux', (s) => /sha256sum/.test(s.run ?? ''));
    const zip = storedZip({ 'metal-cpp/Metal/Metal.hpp': '#pragma once\n' });
    const sha256 = createHash('sha256').update(zip).digest('hex');
    const archive = path.join(tempDir('msp-metal-cpp-archive-'), 'metal-cpp_26.zip');
    writeFileSync(archive, zip);
    const at = async (pinned: string | undefined) => {
      const dir = tempDir('msp-metal-cpp-ci-');
      const metalCpp = { url: `file://${archive}`, ...(pinned === undefined ? {} : { sha256: pinned }) };
      writeFileSync(path.join(dir, 'mlx-storage-pr.config.json'), JSON.stringify({ upstream: { metalCpp } }));
      const outputs = (await runStep(pin.run as string, { cwd: dir })).outputs;
      const cached = runs(cache.if, { steps: { 'metal-cpp': { outputs } } });
      mkdirSync(path.join(dir, '.work', 'metal-cpp'), { recursive: true });
      const env = {
        URL: outputs['url'] ?? '',
        SHA256: outputs['sha256'] ?? '',
        METAL_CPP_DIR: path.join(dir, '.work', 'metal-cpp'),
      };
      return { dir, cached, result: await runStep(fetch.run as string, { cwd: dir, env }) };
    };

    const unset = await at(undefined);
    expect(unset.result.code, unset.result.stderr).toBe(0);
    expect(unset.result.stdout).toContain(`::warning::metal-cpp file://${archive} has sha256 ${sha256}`);
    expect(unset.result.stdout).toContain(`set upstream.metalCpp.sha256 to ${sha256}`);
    expect(unset.cached).toBe(false);

    const wrong = await at('0'.repeat(64));
    expect(wrong.result.code).toBe(1);
    expect(wrong.result.stdout).toContain(`::error::metal-cpp file://${archive} has sha256 ${sha256}`);
    expect(existsSync(path.join(wrong.dir, '.work', 'metal-cpp.zip'))).toBe(false);

    const right = await at(sha256);
    expect(right.result.code, right.result.stderr).toBe(0);
    expect(right.result.stdout).not.toContain('::warning::');
    expect(existsSync(path.join(right.dir, '.work', 'metal-cpp', 'metal-cpp', 'Metal', 'Metal.hpp'))).toBe(true);
    expect(right.cached).toBe(true);
    expect(interpolate(cache.with?.['key'], { steps: { 'metal-cpp': { outputs: { sha256 } } } })).toBe(
      `metal-cpp-${sha256}`,
    );
  });
});

describe('drift.yml', () => {
  const wf = load('drift.yml');
  const drift = wf.jobs['drift'] as Job;
  const refs = drift.steps.find((s) => s.id === 'refs') as Step;
  const check = drift.steps.find((s) => s.run?.includes('mlx-storage-pr.js check') === true) as Step;

  it('runs on a schedule and by hand, never on pushes or pull requests', () => {
    expect(Object.keys(wf.on).sort()).toEqual(['schedule', 'workflow_dispatch']);
    expect(wf.on['schedule']).toEqual([{ cron: expect.stringMatching(/^\S+ \S+ \S+ \S+ \S+$/) as unknown }]);
  });

  /** An upstream with the pin, tags around it, a commit after it and a side branch. */
  function upstreamWithReleases(extraTags: (dir: string, commits: Record<string, string>) => void) {
    const upstream = makeUpstream();
    const dir = upstream.dir;
    git(dir, 'branch', '-m', 'trunk');
    const commit = (name: string) => {
      writeFileSync(path.join(dir, name), `${name}\n`);
      git(dir, 'add', '-A');
      git(dir, 'commit', '--quiet', '-m', name);
      return git(dir, 'rev-parse', 'HEAD').trim();
    };
    const c1 = commit('c1');
    const pin = commit('pin');
    const after = commit('after');
    git(dir, 'checkout', '--quiet', '-b', 'side', c1);
    const side = commit('side');
    git(dir, 'checkout', '--quiet', 'trunk');
    extraTags(dir, { c1, pin, after, side });
    const project = tempDir('msp-drift-');
    writeFileSync(
      path.join(project, 'mlx-storage-pr.config.json'),
      JSON.stringify({ upstream: { url: `file://${dir}`, commit: pin, version: '1.0.0' } }),
    );
    return project;
  }

  it('#12 checks each release at or above the pinned version that is neither the pin nor before it (the latest tag can be older than the pin)', async () => {
    const project = upstreamWithReleases((dir, c) => {
      git(dir, 'tag', 'v0.9.0', c.c1 as string);
      git(dir, 'tag', 'v1.0.5', c.c1 as string); // a version above the pin's, but before it
      git(dir, 'tag', 'v1.0.0', c.pin as string);
      git(dir, 'tag', '-a', '-m', 'release', 'v1.1.0', c.after as string);
      git(dir, 'tag', 'v2.0.0', c.side as string);
      git(dir, 'tag', 'v2.0.0rc1', c.side as string);
      git(dir, 'tag', 'nightly', c.after as string);
    });
    const result = await runStep(refs.run as string, { cwd: project });
    expect(result.code, result.stderr).toBe(0);
    expect(result.outputs).toEqual({ branch: 'trunk', tags: 'v1.1.0 v2.0.0' });
  });

  it('#12 with no release after the pin, checks the default branch only and says "no release after the pin" (the lookup exited 1)', async () => {
    const project = upstreamWithReleases((dir, c) => {
      git(dir, 'tag', 'v0.9.0', c.c1 as string);
      git(dir, 'tag', 'v1.0.0', c.pin as string);
    });
    const result = await runStep(refs.run as string, { cwd: project });
    expect(result.code, result.stderr).toBe(0);
    expect(result.outputs).toEqual({ branch: 'trunk', tags: '' });
    expect(result.summary).toContain('no release after the pin');
    const argv = await runCheck(0, '', { BRANCH: 'trunk', TAGS: '' });
    expect(argv.calls).toEqual(['node bin/mlx-storage-pr.js check --against trunk --markdown']);
    const both = await runCheck(0, '', { BRANCH: 'trunk', TAGS: 'v1.1.0 v2.0.0' });
    expect(both.calls).toEqual(['node bin/mlx-storage-pr.js check --against trunk v1.1.0 v2.0.0 --markdown']);
  });

  const REPORT = [
    '## Drift check: the series against other MLX commits',
    '',
    '### `main` (`0123456789ab`): three-way',
    '',
    '### `v1.1.0` (`ba9876543210`): clean',
  ].join('\n');

  /** The check step with the tool standing in: it prints `report` and exits `code`. */
  async function runCheck(
    code: number,
    report: string,
    env: Record<string, string> = { BRANCH: 'main', TAGS: 'v1.1.0' },
  ) {
    const calls = path.join(tempDir('msp-calls-'), 'calls');
    writeFileSync(calls, '');
    const prelude = `node() { printf '%s\\n' "node $*" >> "$CALLS"; printf '%s\\n' "$REPORT"; return "$CODE"; }`;
    const result = await runStep(check.run as string, {
      prelude,
      cwd: tempDir('msp-drift-run-'),
      env: { ...env, CALLS: calls, REPORT: report, CODE: String(code) },
    });
    const verdict = drift.steps[drift.steps.indexOf(check) + 1] as Step;
    const ctx = context(SCENARIOS['a schedule'](wf.name), {
      steps: { [check.id as string]: { outputs: result.outputs } },
    });
    const fails =
      runs(verdict.if, ctx) &&
      (await runStep(verdict.run as string, { env: stepEnv(wf, drift, verdict, ctx) })).code !== 0;
    return { ...result, fails, calls: readFileSync(calls, 'utf8').trim().split('\n') };
  }

  it('#11 drift (exit 4): an ::error:: and the report in the summary and the log, and the run fails', async () => {
    const result = await runCheck(4, REPORT);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^::error[^\n]*::/m);
    expect(result.summary).toContain(REPORT);
    expect(result.stdout).toContain(REPORT);
    expect(result.outputs['drift']).toBe('true');
    expect(result.fails).toBe(true);
  });

  it('#11 any other failure: "could not run (exit N)" in the summary and a ::warning::, not an empty summary like drift; the run still fails', async () => {
    const result = await runCheck(2, 'fatal: could not read from remote');
    expect(result.summary).toContain('could not run (exit 2)');
    expect(result.stdout).toMatch(/^::warning[^\n]*::/m);
    expect(result.stdout).not.toMatch(/^::error/m);
    expect(result.outputs['drift']).not.toBe('true');
    expect(result.fails).toBe(true);
  });

  it('#11 a patch that needed a three-way merge: a ::warning:: naming the ref; the run passes', async () => {
    const result = await runCheck(0, REPORT);
    expect(result.stdout).toMatch(/^::warning[^\n]*::[^\n]*\bmain\b/m);
    expect(result.stdout).not.toMatch(/^::warning[^\n]*::[^\n]*v1\.1\.0/m);
    expect(result.summary).toContain(REPORT);
    expect(result.fails).toBe(false);
  });

  /** The open-prs step with the tool standing in: it prints `report` and exits `code`. */
  async function runOpenPrs(code: number, report: string) {
    const step = drift.steps.find((s) => s.id === 'open-prs') as Step;
    const calls = path.join(tempDir('msp-calls-'), 'calls');
    writeFileSync(calls, '');
    const prelude = `node() { printf '%s\\n' "node $*" >> "$CALLS"; printf '%s\\n' "$REPORT"; return "$CODE"; }`;
    const result = await runStep(step.run as string, {
      prelude,
      cwd: tempDir('msp-open-prs-run-'),
      env: { CALLS: calls, REPORT: report, CODE: String(code) },
    });
    return { ...result, step, calls: readFileSync(calls, 'utf8').trim().split('\n') };
  }

  const TABLE = '## Open pull requests upstream that change the files of the series\n\n| pull request | result |';

  it('check --open-prs runs after the verdict, also when the run failed, and its table goes to the summary; a conflict (4) or a pull request not checked (5) is a ::warning::, the step passes', async () => {
    const clean = await runOpenPrs(0, TABLE);
    expect(drift.steps.indexOf(clean.step)).toBe(drift.steps.indexOf(check) + 2);
    expect(clean.step.if).toBe('${{ !cancelled() }}');
    expect(clean.calls).toEqual(['node bin/mlx-storage-pr.js check --open-prs --limit 40 --budget 8 --markdown']);
    expect([clean.code, clean.summary.includes(TABLE)]).toEqual([0, true]);
    expect(clean.stdout).not.toMatch(/^::(warning|error)/m);
    for (const code of [4, 5]) {
      const found = await runOpenPrs(code, TABLE);
      expect(found.code).toBe(0);
      expect(found.stdout).toMatch(/^::warning title=Open pull requests::/m);
      expect(found.stdout).not.toMatch(/^::error/m);
      expect(found.summary).toContain(TABLE);
    }
    const broken = await runOpenPrs(2, 'usage');
    expect(broken.code).toBe(0);
    expect(broken.summary).toContain('could not run (exit 2)');
    expect(broken.stdout).toMatch(/^::warning title=Open pull requests check could not run::/m);
  });

  const issueJob = () => Object.entries(wf.jobs).find(([, j]) => j.permissions?.['issues'] === 'write');

  it('#13 on drift, a separate job opens or updates an issue (failure mail of a schedule goes only to whoever last edited the cron line); only that job may write issues', () => {
    const found = issueJob();
    expect(found).toBeDefined();
    const [id, job] = found as [string, Job];
    expect(Object.entries(wf.jobs).filter(([, j]) => j.permissions?.['issues'])).toHaveLength(1);
    expect(needsOf(job)).toEqual(['drift']);
    const at = (outputs: Record<string, string>, result: string, cancelled = false) => {
      const needs = { drift: { result, outputs } };
      return runs(job.if, context(SCENARIOS['a schedule'](wf.name), { needs }), jobStatus(needs, cancelled));
    };
    expect(at({ drift: 'true', report: REPORT }, 'failure'), `${id} on drift`).toBe(true);
    expect(at({}, 'success'), 'no drift').toBe(false);
    expect(at({}, 'failure'), 'could not run').toBe(false);
    expect(at({ drift: 'true' }, 'failure', true), 'cancelled').toBe(false);
  });

  it('#13 the issue job creates the drift issue once, then updates it (body and a comment) on later drift', async () => {
    const [, job] = issueJob() as [string, Job];
    const script = job.steps.map((s) => s.run ?? '').join('\n');
    const needs = { drift: { result: 'failure', outputs: { drift: 'true', report: REPORT } } };
    const ctx = context(SCENARIOS['a schedule'](wf.name), { needs });
    const env = Object.assign({}, ...job.steps.map((s) => stepEnv(wf, job, s, ctx))) as Record<string, string>;
    const gh = async (open: string) => {
      const calls = path.join(tempDir('msp-calls-'), 'calls');
      writeFileSync(calls, '');
      const prelude = `gh() { printf '%s\\n' "gh $*" >> "$CALLS"; if [ "$1 $2" = "issue list" ]; then printf '%s' "$OPEN"; fi; }`;
      const result = await runStep(script, { prelude, env: { ...env, CALLS: calls, OPEN: open } });
      expect(result.code, result.stderr).toBe(0);
      return readFileSync(calls, 'utf8').trim().split('\n');
    };
    const none = await gh('');
    expect(none.filter((c) => c.startsWith('gh issue create'))).toHaveLength(1);
    const again = await gh('7');
    expect(again.filter((c) => c.startsWith('gh issue create'))).toHaveLength(0);
    expect(again.some((c) => c.startsWith('gh issue edit 7'))).toBe(true);
    expect(again.some((c) => c.startsWith('gh issue comment 7'))).toBe(true);
  });

  it('#13 the header says who is really notified and that GitHub disables the schedule after 60 days without activity', () => {
    const header = read('drift.yml').split('\n\non:')[0] ?? '';
    expect(header).not.toContain('GitHub tells whoever watches');
    expect(header).toMatch(/60 days/);
    expect(header).toMatch(/last (changed|edited)[^.]*cron/);
  });
});

describe('refresh-pr.yml', () => {
  const wf = load('refresh-pr.yml');
  const refresh = wf.jobs['refresh'] as Job;
  const push = refresh.steps.find((s) => s.run?.includes('mlx-storage-pr.js "${args[@]}"')) as Step;
  const ciJob = Object.entries(wf.jobs).find(([, j]) => j.uses === './.github/workflows/ci.yml');
  const findJob = () => Object.entries(wf.jobs).find(([, j]) => j.permissions?.['actions'] === 'read');

  /** The push step's script, run by bash with `node` standing in to print the command it would run. */
  const IDENTITY = {
    GIT_AUTHOR_NAME: 'A',
    GIT_AUTHOR_EMAIL: 'a@b',
    GIT_COMMITTER_NAME: 'A',
    GIT_COMMITTER_EMAIL: 'a@b',
  };
  const argv = async (env: Record<string, string>) =>
    (
      await execa('bash', ['-euo', 'pipefail', '-c', `node() { printf '%s\\n' "$@"; }\n${push.run ?? ''}`], {
        extendEnv: false,
        env: { PATH: process.env['PATH'], ...IDENTITY, ...env },
      })
    ).stdout
      .trim()
      .split('\n');

  it('runs only when dispatched by hand, with a yes/no input "open" that is no unless ticked', () => {
    expect(Object.keys(wf.on)).toEqual(['workflow_dispatch']);
    expect(wf.on['workflow_dispatch']).toEqual({
      inputs: { open: { description: expect.any(String), type: 'boolean', default: false } },
    });
  });

  it('runs one at a time and never cancels a run under way', () => {
    const a = concurrency(wf, SCENARIOS['a dispatch from main'](wf.name));
    const b = concurrency(wf, SCENARIOS['a dispatch from another branch'](wf.name));
    expect(a.group).toBe(b.group);
    expect(a.cancel || b.cancel).toBe(false);
  });

  /** Which jobs run, given the result of finding CI's push run (`passed`) and of ci.yml when it runs. */
  function plan(scenario: Scenario, passed: string, ciResult: string, findResult = 'success') {
    const [findId, find] = findJob() as [string, Job];
    const [ciId, ci] = ciJob as [string, Job];
    const findNeeds = {};
    const findRuns = runs(
      find.if,
      context(scenario, { needs: findNeeds }),
      jobStatus(findNeeds, scenario.status?.cancelled),
    );
    const atFind = { [findId]: { result: findRuns ? findResult : 'skipped', outputs: { passed } } };
    const ciRuns = runs(ci.if, context(scenario, { needs: atFind }), jobStatus(atFind, scenario.status?.cancelled));
    const all = { ...atFind, [ciId]: { result: ciRuns ? ciResult : 'skipped', outputs: {} } };
    const needs = Object.fromEntries(needsOf(refresh).map((n) => [n, all[n] ?? { result: 'skipped' }]));
    const pushes = runs(refresh.if, context(scenario, { needs }), jobStatus(needs, scenario.status?.cancelled));
    return { find: findRuns, ci: ciRuns, pushes };
  }

  it('#1 the job that holds the token runs for main only (protection otherwise rests on UI settings, and a missing environment is created unprotected)', () => {
    expect(plan(SCENARIOS['a dispatch from main'](wf.name), 'false', 'success').pushes).toBe(true);
    expect(plan(SCENARIOS['a dispatch from main'](wf.name), 'true', 'success').pushes).toBe(true);
    for (const passed of ['true', 'false'])
      expect(plan(SCENARIOS['a dispatch from another branch'](wf.name), passed, 'success').pushes, passed).toBe(false);
    expect(plan({ github: github(wf.name, 'workflow_dispatch', 'refs/tags/v1.0.0') }, 'true', 'success').pushes).toBe(
      false,
    );
  });

  it('#4 reuses a successful push-triggered ci.yml run of the commit instead of re-running all of it (the macOS legs); runs ci.yml when there is none or it failed, and pushes only after a pass', () => {
    const main = SCENARIOS['a dispatch from main'](wf.name);
    expect(plan(main, 'true', 'success')).toEqual({ find: true, ci: false, pushes: true });
    expect(plan(main, 'false', 'success')).toEqual({ find: true, ci: true, pushes: true });
    expect(plan(main, 'false', 'failure')).toEqual({ find: true, ci: true, pushes: false });
    expect(plan(main, 'false', 'success', 'failure').pushes).toBe(false);
    expect(plan(SCENARIOS['a cancel'](wf.name), 'true', 'success').pushes).toBe(false);
    const [, find] = findJob() as [string, Job];
    expect(find.permissions).toEqual({ actions: 'read', contents: 'read' });
    expect(JSON.stringify(find)).not.toContain('secrets.');
  });

  it('#4 the lookup of the push run: a passed run is reused, a running one is waited for, a failed or missing one means run ci.yml', async () => {
    const [, find] = findJob() as [string, Job];
    const ctx = context(SCENARIOS['a dispatch from main'](wf.name));
    const look = find.steps.find((s) => s.id === 'push-run') as Step;
    // gh stands in: each call prints the next of the runs listed in $RUNS (one JSON array per line).
    const at = async (runsJson: string[], extra: Record<string, string> = {}) => {
      const state = path.join(tempDir('msp-gh-'), 'n');
      writeFileSync(state, '0');
      const bin = stubBin({
        gh: `n=$(cat "${state}"); echo $((n + 1)) > "${state}"; printf '%s\\n' "$RUNS" | sed -n "$((n + 1))p"`,
        sleep: 'exit 0',
      });
      const env = { ...stepEnv(wf, find, look, ctx), RUNS: runsJson.join('\n'), POLL_SECONDS: '0', ...extra };
      const result = await runStep(look.run as string, { env, path: bin });
      expect(result.code, result.stderr).toBe(0);
      return { passed: result.outputs['passed'], calls: Number(readFileSync(state, 'utf8')) };
    };
    const run = (status: string, conclusion: string) => JSON.stringify([{ status, conclusion, url: 'https://x/1' }]);
    expect((await at([run('completed', 'success')])).passed).toBe('true');
    expect((await at([run('completed', 'failure')])).passed).toBe('false');
    expect((await at(['[]'])).passed).toBe('false');
    const waited = await at([run('in_progress', ''), run('queued', ''), run('completed', 'success')]);
    expect(waited).toEqual({ passed: 'true', calls: 3 });
    expect((await at([run('in_progress', ''), run('in_progress', '')], { WAIT_MINUTES: '0' })).passed).toBe('false');
  });

  it('#2 the job with the token installs without lifecycle scripts, builds, and runs the tool from bin/ (npx would fetch a name nobody owns)', async () => {
    const calls = path.join(tempDir('msp-calls-'), 'calls');
    writeFileSync(calls, '');
    const ctx = context(SCENARIOS['a dispatch from main'](wf.name), {
      vars: { MLX_PR_FORK: 'https://github.com/alice/mlx.git', MLX_PR_AUTHOR_NAME: 'A', MLX_PR_AUTHOR_EMAIL: 'a@b' },
      inputs: { open: false },
    });
    for (const s of refresh.steps.filter((x) => x.run !== undefined)) {
      const result = await runStep(s.run as string, {
        prelude: recorders('npm', 'npx', 'node', 'git'),
        env: { ...stepEnv(wf, refresh, s, ctx), CALLS: calls },
      });
      expect(result.code, `${s.name ?? s.run}: ${result.stderr}`).toBe(0);
    }
    const lines = readFileSync(calls, 'utf8').trim().split('\n');
    expect(lines.filter((l) => l.startsWith('npx'))).toEqual([]);
    const installs = lines.filter((l) => /^npm (ci|install|i)\b/.test(l));
    expect(installs.length).toBeGreaterThan(0);
    for (const l of installs) expect(l).toContain('--ignore-scripts');
    const tool = lines.findIndex((l) => l.startsWith('node bin/mlx-storage-pr.js'));
    const build = lines.findIndex((l) => l.startsWith('npm run build'));
    expect(build).toBeGreaterThanOrEqual(0);
    expect(tool).toBeGreaterThan(build);
    expect(lines.filter((l) => l.startsWith('node')).every((l) => l.startsWith('node bin/mlx-storage-pr.js '))).toBe(
      true,
    );
  });

  it('#5 calls ci.yml naming itself as the caller, so the called run has its own concurrency group', () => {
    const [, ci] = ciJob as [string, Job];
    expect(calledFromRefresh().inputs?.['caller']).toBeTruthy();
    const inputs = ((load('ci.yml').on['workflow_call'] ?? {}) as { inputs?: Record<string, unknown> }).inputs ?? {};
    expect(Object.keys(ci.with ?? {}).every((k) => k in inputs)).toBe(true);
  });

  it('pushes from a protected environment, the only place the token is named, and hands it over as GH_TOKEN', () => {
    expect(refresh['environment']).toBe('pull-request');
    const text = read('refresh-pr.yml');
    expect(text.match(/secrets\./g)).toHaveLength(1);
    expect(push.env?.['GH_TOKEN']).toBe('${{ secrets.MLX_PR_TOKEN }}');
    expect(push.run).not.toContain('secrets.');
  });

  it('runs pr --push on the fork from the variables, with --open only when the input asks', async () => {
    expect(push.env).toMatchObject({
      FORK: '${{ vars.MLX_PR_FORK }}',
      BRANCH: '${{ vars.MLX_PR_BRANCH }}',
      OPEN: '${{ inputs.open }}',
      GIT_AUTHOR_NAME: '${{ vars.MLX_PR_AUTHOR_NAME }}',
      GIT_AUTHOR_EMAIL: '${{ vars.MLX_PR_AUTHOR_EMAIL }}',
      GIT_COMMITTER_NAME: '${{ vars.MLX_PR_AUTHOR_NAME }}',
      GIT_COMMITTER_EMAIL: '${{ vars.MLX_PR_AUTHOR_EMAIL }}',
    });
    const fork = 'https://github.com/alice/mlx.git';
    const base = ['bin/mlx-storage-pr.js', 'pr', '--push', '--fork', fork, '--skip'];
    expect((await argv({ FORK: fork, BRANCH: '', OPEN: 'false' })).slice(0, base.length)).toEqual(base);
    expect(await argv({ FORK: fork, BRANCH: '', OPEN: 'false' })).not.toContain('--open');
    expect((await argv({ FORK: fork, BRANCH: '', OPEN: 'true' })).at(-1)).toBe('--open');
    expect((await argv({ FORK: fork, BRANCH: 'metal-view', OPEN: 'false' })).slice(-2)).toEqual([
      '--branch',
      'metal-view',
    ]);
    await expect(argv({ FORK: '', BRANCH: '', OPEN: 'true' })).rejects.toThrow();
  });

  it('#3 stops before the push when an author or committer variable is empty (git would push `Ann Dev <>`), naming the variable', async () => {
    const fork = 'https://github.com/alice/mlx.git';
    const identity = {
      GIT_AUTHOR_NAME: 'A',
      GIT_AUTHOR_EMAIL: 'a@b',
      GIT_COMMITTER_NAME: 'A',
      GIT_COMMITTER_EMAIL: 'a@b',
    };
    const base = { FORK: fork, BRANCH: '', OPEN: 'false' };
    expect((await argv({ ...base, ...identity }))[0]).toBe('bin/mlx-storage-pr.js');
    for (const [variable, env] of [
      ['MLX_PR_AUTHOR_NAME', 'GIT_AUTHOR_NAME'],
      ['MLX_PR_AUTHOR_EMAIL', 'GIT_AUTHOR_EMAIL'],
    ]) {
      const result = await execa(
        'bash',
        ['-euo', 'pipefail', '-c', `node() { printf '%s\\n' "$@"; }\n${push.run ?? ''}`],
        {
          reject: false,
          stripFinalNewline: false,
          extendEnv: false,
          env: { PATH: process.env['PATH'], ...base, ...identity, [env as string]: '' },
        },
      );
      expect(result.exitCode, variable).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(`Set the variable ${variable}`);
    }
  });

  it('leaves out exactly the checks that CI ran on this commit, so the PR text is checked here', async () => {
    const out = await argv({ FORK: 'x', BRANCH: '', OPEN: 'false' });
    const skipped = out.slice(out.indexOf('--skip') + 1).filter((a) => !a.startsWith('--'));
    const ciVerify = load('ci.yml').jobs['mlx-linux']?.steps.find((s) => s.id === 'verify')?.run ?? '';
    expect(ciVerify).toMatch(/verify .*--skip pr-text /);
    expect(skipped.sort()).toEqual(
      Object.keys(VERIFY_GROUPS)
        .filter((g) => g !== 'pr-text')
        .sort(),
    );
  });
});

const mlx = mlxRepo();
const config = JSON.parse(readFileSync(path.join(REPO_ROOT, 'mlx-storage-pr.config.json'), 'utf8')) as {
  upstream: { commit: string };
};
const atPin = async (file: string) =>
  (
    await execa('git', ['-C', mlx.repo as string, 'show', `${config.upstream.commit}:${file}`], {
      stripFinalNewline: false,
    })
  ).stdout;

describe.skipIf(mlx.repo === null)(describeName("ci.yml against MLX's CI at the pinned commit"), () => {
  const upstreamWorkflow = async () =>
    parse(await atPin('.github/workflows/build_and_test.yml')) as {
      jobs: Record<string, { 'runs-on': string; strategy: { matrix: Record<string, unknown> } }>;
    };
  const macMatrix = () =>
    (load('ci.yml').jobs['macos']?.strategy?.matrix ?? {}) as {
      target?: string[];
      toolkit?: string[];
      include?: Array<{ toolkit: string; 'cmake-args': string }>;
    };
  const argsOf = (toolkit: string) =>
    (macMatrix().include?.find((i) => i.toolkit === toolkit)?.['cmake-args'] ?? '').split(/\s+/).filter(Boolean);
  const setup = () => atPin('.github/actions/setup/action.yml');

  it("#9 builds every deployment target of MLX's mac_build, with every toolkit", async () => {
    const upstream = (await upstreamWorkflow()).jobs['mac_build']?.strategy.matrix as Record<string, string[]>;
    expect([...(macMatrix().target ?? [])].sort()).toEqual([...(upstream['macos-target'] ?? [])].sort());
    expect([...(macMatrix().toolkit ?? [])].sort()).toEqual([...(upstream['toolkit'] ?? [])].sort());
  });

  it("#8 the Linux leg meant to match MLX's runs on the runner, the apt packages and the CMake of MLX's Linux cpu leg", async () => {
    const build = (await upstreamWorkflow()).jobs['build_and_test'] as { 'runs-on': string };
    const runner = evaluate(build['runs-on'], { matrix: { os: 'Linux', arch: 'x86_64', toolkit: 'cpu' } });
    const wf = load('ci.yml');
    const legs = Object.values(wf.jobs).filter(
      (j) => j['container'] === undefined && (j.steps ?? []).some((s) => /test --upstream-ci/.test(s.run ?? '')),
    );
    expect(legs).toHaveLength(1);
    const leg = legs[0] as Job;
    expect(leg['runs-on']).toBe(runner);
    const setupYaml = parse(await setup()) as { runs: { steps: Array<{ name?: string; run?: string }> } };
    const linux = setupYaml.runs.steps.find((s) => s.name === 'Install Linux dependencies')?.run ?? '';
    const packagesOf = (script: string) =>
      (/apt-get install((?:[^\n]*\\\n)*[^\n]*)/.exec(script)?.[1] ?? '')
        .split(/[\s\\]+/)
        .filter((w) => w !== '' && !w.startsWith('-'));
    const mlxPackages = packagesOf(linux);
    expect(mlxPackages.length).toBeGreaterThan(3);
    const ours = leg.steps.flatMap((s) => packagesOf(s.run ?? ''));
    for (const p of mlxPackages) expect(ours, p).toContain(p);
    expect(await setup()).toMatch(/pip install cmake/);
  });

  it("runs the C++ tests with the Metal environment of MLX's test-macos action", async () => {
    const upstream = (
      parse(await atPin('.github/actions/test-macos/action.yml')) as {
        runs: { steps: Array<{ name?: string; env?: Record<string, unknown> }> };
      }
    ).runs.steps.find((s) => s.name === 'Run tests')?.env;
    expect(upstream).toBeDefined();
    // MLX runs them in its cpu leg on hosted Macs and on its own Macs for Metal; here in both legs that run tests.
    for (const id of ['cpu', 'metal']) {
      const leg = load('ci.yml').jobs['macos']?.steps.find((s) => s.id === id);
      expect(leg?.env, id).toMatchObject(upstream as Record<string, unknown>);
    }
  });

  it('configures the JIT and Metal-off legs with the CMake arguments of MLX setup action', async () => {
    const text = await setup();
    const jit = /toolkit == 'jit' \}\} ; then\s+cmakeArgs\+=\(([^)]*)\)/.exec(text)?.[1];
    expect(jit).toBeDefined();
    const upstreamJit = [
      '-DMLX_BUILD_METAL=ON',
      ...[...(jit as string).matchAll(/"([^"]+)"/g)].map((m) => m[1] as string),
    ];
    expect(argsOf('jit').sort()).toEqual(upstreamJit.sort());
    expect(text).toContain('cmakeArgs+=("-DMLX_BUILD_METAL=OFF")');
    expect(argsOf('cpu')).toEqual(['-DMLX_BUILD_METAL=OFF']);
    expect(text).toContain('"-DCMAKE_COMPILE_WARNING_AS_ERROR=ON"');
  });
});

describe('dependabot.yml', () => {
  it('keeps the GitHub Actions up to date', () => {
    const config = parse(readFileSync(path.join(GITHUB, 'dependabot.yml'), 'utf8')) as {
      updates: Array<{ 'package-ecosystem': string; directory: string }>;
    };
    expect(config.updates).toContainEqual(
      expect.objectContaining({ 'package-ecosystem': 'github-actions', directory: '/' }),
    );
  });
});
