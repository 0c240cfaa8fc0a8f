import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { exportGitTree } from '../adapters/archive.js';
import { compile } from '../adapters/clang.js';
import { makeMarkedFolder } from '../adapters/files.js';
import { withLock } from '../adapters/lock.js';
import type { Logger } from '../adapters/log.js';
import { quote } from '../adapters/process.js';
import { PACKAGE_ROOT } from '../series/project-files.js';
import { UserError } from '../core/errors.js';
import {
  judge,
  laneFlags,
  missingHeaderHint,
  selfTestJobs,
  summariseLane,
  type LaneSummary,
  type TypeCheckJob,
  type TypeCheckOutcome,
} from './metal-flags.js';
import { ensureCheckout, requireAppliedCheckout } from '../series/checkout.js';
import type { Context } from '../series/context.js';
import { NO_METAL_ROLE, seriesRoles } from '../series/config.js';
import { notCheckedItem, type ReportItem } from '../core/report-items.js';
import { buildsOffline } from '../core/readiness-inputs.js';
import { requireMetalToolchain, resolveMetalCpp, type ClangToolchain } from './metal-toolchain.js';

type Env = Readonly<Record<string, string | undefined>>;

export const SHIMS_DIR = path.join(PACKAGE_ROOT, 'shims', 'include');
export const SHIMS_SELFTEST_DIR = path.join(PACKAGE_ROOT, 'shims', 'selftest');

export interface LaneOptions {
  /** `--metal-cpp`: a metal-cpp folder or zip. */
  metalCpp?: string | undefined;
  /** How many compilers run at once. */
  jobs?: number | undefined;
  /** Extra `-isystem` folders. */
  includes?: readonly string[] | undefined;
  /** Offline: metal-cpp must be given or cached, it is never downloaded. */
  offline?: boolean | undefined;
}

export interface LaneResult {
  mode: 'pr' | 'self-test';
  clang: ClangToolchain;
  metalCpp: string;
  /** The compile command, with `<file.cpp>` for the TU. */
  compileCommand: string;
  outcomes: Array<Omit<TypeCheckOutcome, 'output'>>;
  summary: LaneSummary;
  hint: string | null;
  logDir: string;
}

/** Runs the jobs, at most `concurrency` at a time; outcomes come back in job order and are logged to `logDir`. */
export async function runLane(
  jobs: readonly TypeCheckJob[],
  o: {
    clang: string;
    flags: readonly string[];
    concurrency: number;
    cwd: string;
    logDir: string;
    env: Env;
    log: Logger;
  },
): Promise<{ outcomes: TypeCheckOutcome[]; wallSeconds: number }> {
  await rm(o.logDir, { recursive: true, force: true });
  await mkdir(o.logDir, { recursive: true });
  const outcomes = new Array<TypeCheckOutcome>(jobs.length);
  const start = performance.now();
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < jobs.length; i = next++) {
      const job = jobs[i] as TypeCheckJob;
      const result = await compile(o.clang, [...o.flags, ...job.flags, job.file], {
        cwd: o.cwd,
        env: o.env,
        log: o.log,
      });
      const outcome = judge(job, result.exitCode, result.output, result.seconds);
      outcomes[i] = outcome;
      o.log.debug(`${outcome.good ? 'ok  ' : 'FAIL'} ${job.label} ${result.seconds.toFixed(1)}s`);
      await writeFile(path.join(o.logDir, `${job.label.replace(/[^A-Za-z0-9._=-]/g, '_')}.log`), result.output);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency, jobs.length)) }, worker));
  return { outcomes, wallSeconds: (performance.now() - start) / 1000 };
}

async function lane(
  mode: LaneResult['mode'],
  ctx: Context,
  options: LaneOptions,
  setup: {
    clang: ClangToolchain;
    mlxRoot: string;
    cmakeText: string | null;
    jobs: (shims: string | null) => TypeCheckJob[];
  },
): Promise<LaneResult> {
  const platform = ctx.platform;
  const metalCpp = await resolveMetalCpp(options.metalCpp, {
    cwd: ctx.cwd,
    cacheDir: ctx.layout.metalCpp,
    cmakeText: setup.cmakeText,
    pin: ctx.config.upstream.metalCpp,
    env: ctx.env,
    log: ctx.log,
    offline: options.offline === true,
  });
  // On macOS the SDK's own headers are the real thing; the shims only stand in for them elsewhere.
  const shims = platform === 'darwin' ? null : SHIMS_DIR;
  const flags = laneFlags({
    mlxRoot: setup.mlxRoot,
    metalCpp,
    shims,
    includes: (options.includes ?? []).map((d) => path.resolve(ctx.cwd, d)),
  });
  const jobs = setup.jobs(shims);
  const concurrency = options.jobs ?? os.availableParallelism();
  const command = [setup.clang.command, ...flags].map(quote).join(' ');
  ctx.log.command(`${command} <file.cpp>`, setup.mlxRoot);
  ctx.log.info(`Type-checking ${jobs.length} TU(s) with ${concurrency} job(s)`);
  const logDir = mode === 'pr' ? ctx.layout.checkMetal.logs : ctx.layout.checkMetal.selfTestLogs;
  await makeMarkedFolder(ctx.layout.checkMetal.root);
  const { outcomes, wallSeconds } = await runLane(jobs, {
    clang: setup.clang.command,
    flags,
    concurrency,
    cwd: setup.mlxRoot,
    logDir,
    env: ctx.env,
    log: ctx.log,
  });
  const summary = summariseLane(outcomes, { selfTest: mode === 'self-test', jobs: concurrency, wallSeconds });
  return {
    mode,
    clang: setup.clang,
    metalCpp,
    compileCommand: `${command} <file.cpp>`,
    outcomes: outcomes.map(({ output: _output, ...rest }) => rest),
    summary,
    hint: missingHeaderHint(outcomes.filter((o) => !o.good && o.expect === 'pass')),
    logDir,
  };
}

/** The series' Metal-only TUs (its Metal role: sources and tests) in the applied, current checkout. */
export async function typeCheckPr(ctx: Context, options: LaneOptions): Promise<LaneResult> {
  const clang = await requireMetalToolchain(ctx.env, ctx.log, ctx.platform);
  const pinned = ctx.config.upstream.commit;
  const { git } = await requireAppliedCheckout(ctx, { hint: '; check-metal type-checks the applied checkout.' });
  const metal = seriesRoles(ctx.config).metal;
  if (metal === null) throw new Error('typeCheckPr needs a series with a Metal role');
  const tus = [...metal.sources, ...metal.tests];
  for (const tu of tus) {
    if (!existsSync(path.join(git.dir, tu))) {
      throw new UserError('NOT_APPLIED', `${tu} is not in the checkout ${git.dir}.`, {
        hint: 'Run `mlx-storage-pr apply`, or fix roles.metal in mlx-storage-pr.config.json.',
      });
    }
  }
  return lane('pr', ctx, options, {
    clang,
    mlxRoot: git.dir,
    cmakeText: await git.fileAt(pinned, 'CMakeLists.txt'),
    jobs: () => tus.map((tu) => ({ label: tu, file: path.join(git.dir, tu), expect: 'pass' as const, flags: [] })),
  });
}

/**
 * Proves the lane: all of MLX's own Metal TUs at the pinned commit must
 * type-check and the deliberately broken TU must not. MLX's files come from
 * the pinned commit itself (via `git archive`), not from the working tree, so
 * an applied series or local edits do not change the result.
 */
export async function typeCheckSelfTest(ctx: Context, options: LaneOptions): Promise<LaneResult> {
  const clang = await requireMetalToolchain(ctx.env, ctx.log, ctx.platform);
  const pinned = ctx.config.upstream.commit;
  const { git } = await withLock(ctx.workdir, 'check-metal', () => ensureCheckout(ctx));
  const tus = (await git.raw(['ls-tree', '--name-only', pinned, 'mlx/backend/metal/']))
    .split('\n')
    .filter((f) => /^mlx\/backend\/metal\/[^/]+\.cpp$/.test(f))
    .sort();
  if (tus.length === 0)
    throw new UserError('CHECKOUT_INVALID', `The pinned commit ${pinned} has no mlx/backend/metal/*.cpp.`, {
      hint: 'Check upstream.commit in mlx-storage-pr.config.json.',
    });

  const root = ctx.layout.checkMetal.pinnedTree(pinned);
  if (!existsSync(path.join(root, '.complete'))) {
    await makeMarkedFolder(ctx.layout.checkMetal.root);
    const partial = `${root}.partial-${process.pid}`;
    await rm(partial, { recursive: true, force: true });
    await exportGitTree(git.dir, pinned, ['mlx'], partial, { env: ctx.env, log: ctx.log });
    await writeFile(path.join(partial, '.complete'), `${pinned}\n`);
    await rm(root, { recursive: true, force: true });
    await rename(partial, root);
  }
  return lane('self-test', ctx, options, {
    clang,
    mlxRoot: root,
    cmakeText: await git.fileAt(pinned, 'CMakeLists.txt'),
    jobs: () => selfTestJobs(root, tus, SHIMS_SELFTEST_DIR),
  });
}

/**
 * verify's Metal type-check. It is required once it runs, or when the user
 * asks for it (--metal-cpp or --require-metal). When its tools are missing and
 * nobody asked, it is reported as not checked without failing verify: the lane
 * needs clang 19 and metal-cpp, which a Linux-only contributor may not have.
 */
export async function metalTypeCheckItem(
  ctx: Context,
  options: {
    metalCpp?: string | undefined;
    jobs?: number | undefined;
    include?: string[] | undefined;
    requireMetal?: boolean | undefined;
    offline?: boolean | undefined;
    /** A folder of local dependencies implies offline. */
    depsDir?: string | undefined;
  },
  base: Pick<ReportItem, 'id' | 'title' | 'required'>,
): Promise<ReportItem> {
  const { id, title } = base;
  const asked = options.metalCpp !== undefined || options.requireMetal === true;
  if (seriesRoles(ctx.config).metal === null)
    return { id, title, status: 'not-checked', required: false, detail: NO_METAL_ROLE };
  try {
    const lane = await typeCheckPr(ctx, {
      metalCpp: options.metalCpp,
      jobs: options.jobs,
      includes: options.include ?? [],
      offline: buildsOffline(options),
    });
    const summary = lane.summary.lines[lane.summary.lines.length - 1] ?? '';
    if (lane.summary.ok)
      return {
        id,
        title,
        status: 'pass',
        detail: `${lane.outcomes.map((o) => o.label).join(', ')} type-check (${lane.clang.command} ${lane.clang.version}, libc++ ${lane.clang.libcxx})`,
        required: base.required,
      };
    const failed = lane.outcomes
      .filter((o) => !o.good)
      .map((o) => `${o.label}: ${o.errors[0] ?? `exit ${o.exitCode}`}`);
    return {
      id,
      title,
      status: 'fail',
      detail: `${failed.join('; ')} (${summary})`,
      fix: 'mlx-storage-pr check-metal  (full errors; logs in the workdir)',
      required: base.required,
    };
  } catch (error) {
    return notCheckedItem({ id, title, required: asked }, error);
  }
}
