import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

import { VERIFY_GROUPS } from '../../src/readiness/skip.js';
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
  strategy?: { matrix: Record<string, unknown> };
  env?: Record<string, unknown>;
} & Record<string, unknown>;
type Workflow = { on: Record<string, unknown>; jobs: Record<string, Job> } & Record<string, unknown>;

const GITHUB = path.join(REPO_ROOT, '.github');
const files = readdirSync(path.join(GITHUB, 'workflows')).filter((f) => /\.ya?ml$/.test(f));
const read = (file: string) => readFileSync(path.join(GITHUB, 'workflows', file), 'utf8');
const load = (file: string) => parse(read(file)) as Workflow;
const steps = (wf: Workflow) => Object.values(wf.jobs).flatMap((job) => job.steps ?? []);
const uses = (wf: Workflow, action: string) => steps(wf).filter((s) => s.uses?.split('@')[0] === action);
/** The commit each action is pinned to in ci.yml. */
const ciPins = new Map(
  steps(load('ci.yml'))
    .map((s) => s.uses?.split('@') ?? [])
    .filter((parts): parts is [string, string] => parts.length === 2),
);

/**
 * Evaluates a `${{ }}` expression made of context paths (`steps.cpu.outcome`, `steps[matrix.toolkit].outcome`)
 * joined by `||`, as GitHub does: a missing property is null, and `||` gives the first truthy operand (any
 * non-empty string is truthy) or else the last. Any other syntax throws, so no assertion passes on an expression
 * this did not evaluate.
 */
function evaluate(expression: string, context: Record<string, unknown>): unknown {
  const inner = /^\$\{\{(.*)\}\}$/s.exec(expression.trim())?.[1];
  if (inner === undefined) throw new Error(`not an expression: ${expression}`);
  let value: unknown = null;
  for (const operand of inner.split('||')) {
    value = lookup(operand.trim(), context);
    if (value !== null && value !== undefined && value !== '' && value !== false && value !== 0) return value;
  }
  return value;
}

function lookup(text: string, context: Record<string, unknown>): unknown {
  const head = /^[A-Za-z_][\w-]*/.exec(text)?.[0];
  if (head === undefined) throw new Error(`cannot evaluate: ${text}`);
  let value: unknown = context[head];
  let rest = text.slice(head.length);
  while (rest !== '') {
    let key: string;
    const dot = /^\.([A-Za-z_][\w-]*)/.exec(rest);
    if (dot) {
      key = dot[1] as string;
      rest = rest.slice(dot[0].length);
    } else if (rest.startsWith('[')) {
      const close = rest.indexOf(']');
      if (close < 0) throw new Error(`cannot evaluate: ${text}`);
      key = String(lookup(rest.slice(1, close).trim(), context));
      rest = rest.slice(close + 1);
    } else throw new Error(`cannot evaluate: ${text}`);
    value = value !== null && typeof value === 'object' ? ((value as Record<string, unknown>)[key] ?? null) : null;
  }
  return value ?? null;
}

describe.each(files)('workflow %s', (file) => {
  const wf = load(file);

  it('grants the token only contents: read, and no job widens it', () => {
    expect(wf['permissions']).toEqual({ contents: 'read' });
    for (const job of Object.values(wf.jobs)) expect(job['permissions']).toBeUndefined();
  });

  const oneAtATime = file === 'refresh-pr.yml';
  it.skipIf(oneAtATime)(
    oneAtATime
      ? 'cancels superseded runs outside main (skipped: refresh-pr.yml runs one at a time and never cancels, as its own block tests)'
      : 'cancels superseded runs outside main',
    () => {
      expect(wf['concurrency']).toEqual({
        group: '${{ github.workflow }}-${{ github.ref }}',
        'cancel-in-progress': "${{ github.ref != 'refs/heads/main' }}",
      });
    },
  );

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

  it('caches npm in setup-node', () => {
    for (const step of uses(wf, 'actions/setup-node')) expect(step.with?.['cache']).toBe('npm');
  });

  it('keys ccache by the pinned commit and the series, and saves it only outside pull requests', () => {
    for (const step of uses(wf, 'hendrikmuhs/ccache-action')) {
      expect(step.with?.['key']).toContain('${{ steps.pin.outputs.commit }}');
      expect(step.with?.['key']).toContain("hashFiles('templates/**', 'patches/**', 'mlx-storage-pr.config.json')");
      expect(step.with?.['save']).toContain("github.event_name != 'pull_request'");
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

  // Superseded runs are cancelled outside main: the test of every workflow above checks that.
  it('runs on pushes to main, on pull requests, by hand and when another workflow calls it (refresh-pr.yml), and on nothing else', () => {
    expect(wf.on['push']).toEqual({ branches: ['main'] });
    expect(Object.keys(wf.on).sort()).toEqual(['pull_request', 'push', 'workflow_call', 'workflow_dispatch']);
  });
  const step = (jobId: string, test: (s: Step) => boolean) => {
    const found = job(jobId).steps.find(test);
    expect(found, `${jobId}: step not found`).toBeDefined();
    return found as Step;
  };

  it('restores ccache in every job that builds MLX, before the build', () => {
    for (const id of ['mlx-linux', 'mlx-linux-shared', 'macos']) {
      const ccache = job(id).steps.findIndex((s) => s.uses?.startsWith('hendrikmuhs/ccache-action@') === true);
      const build = job(id).steps.findIndex((s) =>
        /mlx-storage-pr (test|verify)|vitest run test\/e2e/.test(s.run ?? ''),
      );
      expect(ccache, id).toBeGreaterThanOrEqual(0);
      expect(build, id).toBeGreaterThan(ccache);
    }
  });

  it('runs .ci/run (tests and workflow lint) on Node 20, 22 and 24', () => {
    expect(job('tool-tests').strategy?.matrix['node']).toEqual([20, 22, 24]);
    expect(step('tool-tests', (s) => s.uses?.startsWith('actions/setup-node') === true).with?.['node-version']).toBe(
      '${{ matrix.node }}',
    );
    expect(step('tool-tests', (s) => s.run !== undefined && s.run.includes('.ci/run')).run).toBe('bash .ci/run');
    const ciRun = readFileSync(path.join(REPO_ROOT, '.ci', 'run'), 'utf8');
    expect(ciRun).toMatch(/^npm run lint:workflows -- --require-shellcheck$/m);
    expect(ciRun).toMatch(/apt-get install[^\n]*(\\\n[^\n]*)*\bshellcheck\b/);
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
      'libc++-19-dev',
      'cmake-format',
    ])
      expect(text).toContain(pkg);
    expect(text).toMatch(/fetch --depth 1 https:\/\/github\.com\/ml-explore\/mlx\.git "\$PIN:refs\/heads\/pinned"/);
    expect(text).toMatch(/echo "MLX_REPO=/);
    expect(text).toMatch(/echo "METAL_CPP_DIR=/);
    expect(text).toContain('METAL_CPP_URL');
    const e2e = step('mlx-linux', (s) => s.id === 'e2e');
    expect(e2e.run).toMatch(/^npx vitest run test\/e2e test\/unit\/workflows\.test\.ts --no-file-parallelism /);
    const verify = step('mlx-linux', (s) => s.id === 'verify');
    expect(verify.run).toContain('npx mlx-storage-pr verify --offline --skip pr-text --metal-cpp "$METAL_CPP_DIR"');
    expect(linux.steps.indexOf(verify)).toBeGreaterThan(linux.steps.indexOf(e2e));
    expect(step('mlx-linux', (s) => s.name === 'Job summary').run).toContain('cat "$LOG_DIR/verify.txt"');
    const upload = step('mlx-linux', (s) => s.uses?.startsWith('actions/upload-artifact') === true);
    expect(upload.if).toBe('failure()');
  });

  it('builds the Linux shared-library leg as MLX does: Debug, BUILD_SHARED_LIBS, warnings as errors', () => {
    expect(step('mlx-linux-shared', (s) => s.id === 'build').run).toContain('test --upstream-ci --json');
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

  it("macOS: the Metal build runs the storage cases with DEVICE=cpu and the Metal environment of MLX's test-macos, and fails the job when it fails", () => {
    const metal = step('macos', (s) => s.id === 'metal');
    expect(metal.env).toEqual({ DEVICE: 'cpu', METAL_DEVICE_WRAPPER_TYPE: 1, METAL_DEBUG_ERROR_MODE: 0 });
    expect(metal.run).toContain(
      'npx mlx-storage-pr test --debug --no-baseline --tests "*storage*" --json -- "${args[@]}"',
    );
    const summary = step('macos', (s) => s.name === 'Job summary').run ?? '';
    expect(summary).toContain('metal::is_available()\\` stays true');
    expect(summary).toContain('no GPU kernel ran');
    expect(summary).toContain('The stub cases return early in a Metal build.');
  });

  it('macOS: the job summary reports the outcome of the build step its leg ran, not a skipped one', () => {
    const toolkits = job('macos').strategy?.matrix['toolkit'] as string[];
    const build = step('macos', (s) => s.name === 'Job summary').env?.['BUILD'];
    for (const toolkit of toolkits) {
      // Each leg runs the one build step whose id is its toolkit; the other two are skipped.
      expect(step('macos', (s) => s.id === toolkit).if).toBe(`matrix.toolkit == '${toolkit}'`);
      for (const outcome of ['success', 'failure']) {
        const ran = Object.fromEntries(toolkits.map((t) => [t, { outcome: t === toolkit ? outcome : 'skipped' }]));
        expect(evaluate(String(build), { matrix: { toolkit }, steps: ran }), `${toolkit} leg`).toBe(outcome);
      }
    }
  });

  it('macOS: check-metal runs after the build, also when the build failed, with the doctest headers from Homebrew', () => {
    const mac = job('macos');
    const check = step('macos', (s) => s.id === 'check-metal');
    expect(check.if).toMatch(/^always\(\) && /);
    expect(check.run).toBe('npx mlx-storage-pr check-metal --include "$(brew --prefix doctest)/include"');
    expect(mac.steps.indexOf(check)).toBeGreaterThan(mac.steps.indexOf(step('macos', (s) => s.id === 'metal')));
  });
});

describe('drift.yml', () => {
  const wf = load('drift.yml');
  const drift = wf.jobs['drift'] as Job;
  const refs = drift.steps.find((s) => s.id === 'refs') as Step;
  const check = drift.steps.find((s) => s.run?.includes('mlx-storage-pr check') === true) as Step;

  it('runs on a schedule and by hand, never on pushes or pull requests', () => {
    expect(Object.keys(wf.on).sort()).toEqual(['schedule', 'workflow_dispatch']);
    expect(wf.on['schedule']).toEqual([{ cron: expect.stringMatching(/^\S+ \S+ \S+ \S+ \S+$/) as unknown }]);
  });

  it("checks upstream's default branch and latest release, looked up when the job runs, and writes the Markdown report to the job summary", () => {
    expect(check.env).toEqual({
      BRANCH: '${{ steps.refs.outputs.branch }}',
      TAG: '${{ steps.refs.outputs.tag }}',
    });
    // Not `|| true`, not `continue-on-error`: check's exit code (4 when a patch no longer applies) fails the run.
    expect(check.run).toBe('npx mlx-storage-pr check --against "$BRANCH" "$TAG" --markdown >> "$GITHUB_STEP_SUMMARY"');
    expect(drift.steps.indexOf(check)).toBeGreaterThan(drift.steps.indexOf(refs));
  });

  it("the lookup finds the default branch and the highest vX.Y.Z tag of the config's upstream", () => {
    const upstream = makeUpstream();
    git(upstream.dir, 'checkout', '--quiet', '-b', 'trunk');
    for (const tag of ['v1.2.0', 'v1.10.0', 'v1.9.3', 'v2.0.0rc1', 'nightly']) git(upstream.dir, 'tag', tag);
    const dir = tempDir('msp-drift-');
    writeFileSync(
      path.join(dir, 'mlx-storage-pr.config.json'),
      JSON.stringify({ upstream: { url: `file://${upstream.dir}` } }),
    );
    const output = path.join(dir, 'output');
    writeFileSync(output, '');
    execFileSync('bash', ['-eo', 'pipefail', '-c', refs.run as string], {
      cwd: dir,
      env: { ...process.env, GITHUB_OUTPUT: output },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    expect(readFileSync(output, 'utf8')).toBe('branch=trunk\ntag=v1.10.0\n');
  });
});

describe('refresh-pr.yml', () => {
  const wf = load('refresh-pr.yml');
  const refresh = wf.jobs['refresh'] as Job;
  const push = refresh.steps.find((s) => s.run?.includes('mlx-storage-pr "${args[@]}"')) as Step;

  /** The push step's script, run by bash with `npx` standing in to print the command it would run. */
  const argv = (env: Record<string, string>) =>
    execFileSync('bash', ['-euo', 'pipefail', '-c', `npx() { printf '%s\\n' "$@"; }\n${push.run ?? ''}`], {
      encoding: 'utf8',
      env: { PATH: process.env['PATH'], ...env },
    })
      .trim()
      .split('\n');

  it('runs only when dispatched by hand, with a yes/no input "open" that is no unless ticked', () => {
    expect(Object.keys(wf.on)).toEqual(['workflow_dispatch']);
    expect(wf.on['workflow_dispatch']).toEqual({
      inputs: { open: { description: expect.any(String), type: 'boolean', default: false } },
    });
  });

  it('runs one at a time and never cancels a run under way', () => {
    expect(wf['concurrency']).toEqual({ group: 'refresh-pr', 'cancel-in-progress': false });
  });

  it("runs CI's own jobs first, and pushes only after they pass", () => {
    expect(wf.jobs['ci']).toMatchObject({ uses: './.github/workflows/ci.yml' });
    expect(Object.keys(wf.jobs)).toEqual(['ci', 'refresh']);
    expect(refresh['needs']).toBe('ci');
    expect(refresh).not.toHaveProperty('if');
  });

  it('pushes from a protected environment, the only place the token is named, and hands it over as GH_TOKEN', () => {
    expect(refresh['environment']).toBe('pull-request');
    const text = read('refresh-pr.yml');
    expect(text.match(/secrets\./g)).toHaveLength(1);
    expect(push.env?.['GH_TOKEN']).toBe('${{ secrets.MLX_PR_TOKEN }}');
    expect(push.run).not.toContain('secrets.');
  });

  it('runs pr --push on the fork from the variables, with --open only when the input asks', () => {
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
    const base = ['mlx-storage-pr', 'pr', '--push', '--fork', fork, '--skip'];
    expect(argv({ FORK: fork, BRANCH: '', OPEN: 'false' }).slice(0, base.length)).toEqual(base);
    expect(argv({ FORK: fork, BRANCH: '', OPEN: 'false' })).not.toContain('--open');
    expect(argv({ FORK: fork, BRANCH: '', OPEN: 'true' }).at(-1)).toBe('--open');
    expect(argv({ FORK: fork, BRANCH: 'metal-view', OPEN: 'false' }).slice(-2)).toEqual(['--branch', 'metal-view']);
    expect(() => argv({ FORK: '', BRANCH: '', OPEN: 'true' })).toThrow();
  });

  it('leaves out exactly the checks that CI ran on this commit, so the PR text is checked here', () => {
    const out = argv({ FORK: 'x', BRANCH: '', OPEN: 'false' });
    const skipped = out.slice(out.indexOf('--skip') + 1).filter((a) => !a.startsWith('--'));
    const ciVerify = load('ci.yml').jobs['mlx-linux']?.steps.find((s) => s.id === 'verify')?.run ?? '';
    expect(ciVerify).toMatch(/verify .*--skip pr-text /);
    expect(skipped.sort()).toEqual(
      Object.keys(VERIFY_GROUPS)
        .filter((g) => g !== 'pr-text')
        .sort(),
    );
  });

  it('checks out, installs and applies before it pushes', () => {
    const runs = refresh.steps.map((s) => s.run ?? s.uses?.split('@')[0]);
    expect(runs).toEqual(['actions/checkout', 'actions/setup-node', 'npm ci', 'npx mlx-storage-pr apply', push.run]);
  });
});

const mlx = mlxRepo();
const config = JSON.parse(readFileSync(path.join(REPO_ROOT, 'mlx-storage-pr.config.json'), 'utf8')) as {
  upstream: { commit: string };
};
const atPin = (file: string) =>
  execFileSync('git', ['-C', mlx.repo as string, 'show', `${config.upstream.commit}:${file}`], { encoding: 'utf8' });

describe.skipIf(mlx.repo === null)(describeName("ci.yml's macOS matrix against MLX's CI at the pinned commit"), () => {
  const macMatrix = () =>
    (load('ci.yml').jobs['macos']?.strategy?.matrix ?? {}) as {
      target?: string[];
      toolkit?: string[];
      include?: Array<{ toolkit: string; 'cmake-args': string }>;
    };
  const argsOf = (toolkit: string) =>
    (macMatrix().include?.find((i) => i.toolkit === toolkit)?.['cmake-args'] ?? '').split(/\s+/).filter(Boolean);
  const setup = () => atPin('.github/actions/setup/action.yml');

  it('builds for the oldest and newest deployment target of MLX mac_build', () => {
    const upstream = (
      parse(atPin('.github/workflows/build_and_test.yml')) as {
        jobs: { mac_build: { strategy: { matrix: { 'macos-target': string[] } } } };
      }
    ).jobs.mac_build.strategy.matrix['macos-target'];
    const sorted = [...upstream].sort((a, b) => Number(a) - Number(b));
    expect(macMatrix().target).toEqual([sorted[0], sorted[sorted.length - 1]]);
    expect(macMatrix().toolkit).toEqual(['cpu', 'metal', 'jit']);
  });

  it("runs the C++ tests with the Metal environment of MLX's test-macos action", () => {
    const upstream = (
      parse(atPin('.github/actions/test-macos/action.yml')) as {
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

  it('configures the JIT and Metal-off legs with the CMake arguments of MLX setup action', () => {
    const text = setup();
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
