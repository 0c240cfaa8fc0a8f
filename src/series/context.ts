import { accessSync, constants, existsSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { Env } from '../adapters/env.js';
import { Git } from '../adapters/git.js';
import { createLogger, type Logger } from '../adapters/log.js';
import { findProject, loadConfig, loadPlanInputs, realPath } from './project-files.js';
import type { Config } from './config.js';
import { permissionDenied, UserError } from '../core/errors.js';
import { DEFAULT_WORKDIR, stateWorkdir, verifyWorkdir } from '../core/paths.js';
import { buildPlan, type ApplyPlan, type PlanInputs } from './plan.js';
import { chooseSource, readRecordedSource, type Source } from './source.js';
import { workdirLayout, type WorkdirLayout } from '../core/workdir.js';

/** What an operation needs to find the project, the workdir and MLX. The command layer fills it from process state. */
export interface ContextOptions {
  cwd: string;
  env: Env;
  /** The platform the tool runs on (process.platform, injected). */
  platform: NodeJS.Platform;
  project?: string | undefined;
  workdir?: string | undefined;
  mlxRepo?: string | undefined;
  verbose?: boolean | undefined;
  logger?: Logger | undefined;
}

/** templates/ and patches/ as read, and the series they render to. */
export interface Project {
  inputs: PlanInputs;
  plan: ApplyPlan;
}

export interface Context {
  projectRoot: string;
  config: Config;
  workdir: string;
  /** Every path this tool uses in the workdir. */
  layout: WorkdirLayout;
  source: Source;
  log: Logger;
  /** The command's environment: every child process runs with exactly this. */
  env: Env;
  /** The folder relative paths in options are resolved against. */
  cwd: string;
  platform: NodeJS.Platform;
  /** Shared cache outside the workdir (stand-in dependency folders). */
  cacheRoot: string;
  /** The project's inputs and rendered series, read and rendered once per context. */
  project(): Promise<Project>;
  /** Reads the config, templates/ and patches/ again, after they were rewritten. */
  reloadProject(): Promise<Project>;
  /** The checkout in the workdir, or null when there is none; opened once it exists. */
  checkout(): Promise<Git | null>;
}

export async function loadContext(options: ContextOptions): Promise<Context> {
  const found = options.project
    ? { root: path.resolve(options.cwd, options.project), found: true }
    : findProject(options.cwd);
  const projectRoot = found.root;
  const config = loadConfig(projectRoot);
  const log = options.logger ?? createLogger({ verbose: options.verbose ?? false });
  // The installed package is no place for a checkout: an upgrade or a cleared npm cache deletes it.
  const defaultWorkdir = found.found
    ? path.join(projectRoot, DEFAULT_WORKDIR)
    : stateWorkdir(options.env, options.platform, options.env['HOME'] || os.homedir());
  const workdir = chooseWorkdir(options, projectRoot, defaultWorkdir);
  if (!found.found && workdir === defaultWorkdir) offerMove(path.join(projectRoot, DEFAULT_WORKDIR), workdir, log);
  const layout = workdirLayout(workdir);
  const envSource = options.env['MLX_REPO'];
  // Without --mlx-repo and MLX_REPO, the source the last apply in this workdir used.
  const recorded =
    options.mlxRepo === undefined && (envSource === undefined || envSource === '')
      ? await readRecordedSource(layout)
      : null;
  const source = chooseSource(options.mlxRepo, envSource, config.upstream.url, options.cwd, recorded);
  let sourceTold = false;
  let project: Promise<Project> | undefined;
  let checkout: Git | undefined;
  const ctx: Context = {
    projectRoot,
    config,
    workdir,
    layout,
    // A remembered source is named once, where a command first uses it.
    get source() {
      if (source.origin === 'apply' && !sourceTold) {
        sourceTold = true;
        log.info(`MLX source: ${source.display}, remembered from apply`);
      }
      return source;
    },
    log,
    env: options.env,
    cwd: options.cwd,
    platform: options.platform,
    cacheRoot: cacheRoot(options.env),
    project() {
      if (project === undefined) {
        const loading = Promise.resolve().then(() => {
          const inputs = loadPlanInputs(projectRoot, ctx.config);
          const plan = buildPlan(inputs);
          for (const warning of plan.warnings) log.warn(warning);
          return { inputs, plan };
        });
        // A failed read is not kept: the next call reports it again.
        loading.catch(() => {
          if (project === loading) project = undefined;
        });
        project = loading;
      }
      return project;
    },
    async reloadProject() {
      // `bump` moves the pin: everything after it sees the new commit.
      ctx.config = loadConfig(projectRoot);
      project = undefined;
      return ctx.project();
    },
    checkout() {
      checkout ??= openCheckout(ctx.layout, log, ctx.env) ?? undefined;
      return Promise.resolve(checkout ?? null);
    },
  };
  return ctx;
}

/** --workdir, else MLX_STORAGE_PR_WORKDIR, else <project>/.work; empty values and folders inside the project are refused. */
/** A workdir an older version left inside the installed package: say where it is and how to move it. */
function offerMove(old: string, workdir: string, log: Logger): void {
  if (!existsSync(old) || existsSync(workdir)) return;
  log.warn(
    `a workdir from an older version is inside the installed package, at ${old}: reinstalling or upgrading the package deletes it, with any edits in its checkout. ` +
      `Move it to the workdir now in use: mv ${quotePath(old)} ${quotePath(workdir)} (or keep using it with --workdir ${quotePath(old)}).`,
  );
}

const quotePath = (p: string) => (/^[\w@%+=:,./-]+$/.test(p) ? p : `'${p.replace(/'/g, "'\\''")}'`);

function chooseWorkdir(options: ContextOptions, projectRoot: string, defaultWorkdir: string): string {
  const flag = options.workdir;
  const env = options.env['MLX_STORAGE_PR_WORKDIR'];
  if (flag !== undefined && flag.trim() === '') {
    throw new UserError('WORKDIR_INVALID', '--workdir is empty.', {
      hint: `Name a folder outside the project (--workdir ~/mlx-work), or leave the option out to use ${defaultWorkdir}.`,
    });
  }
  if (flag === undefined && env !== undefined && env.trim() === '') {
    throw new UserError('WORKDIR_INVALID', 'MLX_STORAGE_PR_WORKDIR is set but empty.', {
      hint: `Run \`unset MLX_STORAGE_PR_WORKDIR\` to use ${defaultWorkdir}, or set it to a folder outside the project.`,
    });
  }
  const origin = flag !== undefined ? '--workdir' : env !== undefined ? 'MLX_STORAGE_PR_WORKDIR' : null;
  const workdir = path.resolve(options.cwd, flag ?? env ?? defaultWorkdir);
  if (origin !== null) verifyWorkdir(realPath(workdir), realPath(projectRoot), origin);
  verifyWorkdirFolder(workdir, origin ?? 'the workdir');
  return workdir;
}

/**
 * The workdir is a folder, or can become one: not a file, not below a file,
 * and below a folder this user can write when it does not exist yet.
 */
function verifyWorkdirFolder(workdir: string, origin: string): void {
  let existing = workdir;
  while (!existsSync(existing) && path.dirname(existing) !== existing) existing = path.dirname(existing);
  if (!statSync(existing).isDirectory()) {
    const what = existing === workdir ? `${workdir} is a file` : `${workdir} is below ${existing}, which is a file`;
    throw new UserError('WORKDIR_INVALID', `${origin}: ${what}, not a folder.`, {
      hint: 'Name a folder (it is made when missing), e.g. --workdir ~/mlx-work.',
      details: { workdir, file: existing },
    });
  }
  if (existing !== workdir) {
    try {
      accessSync(existing, constants.W_OK | constants.X_OK);
    } catch {
      throw permissionDenied(existing, `cannot make ${workdir} there`);
    }
  }
}

/** Opens the checkout in the workdir if one exists, without fetching anything. */
function openCheckout(layout: WorkdirLayout, log: Logger, env: Env): Git | null {
  const dir = layout.checkout;
  if (!existsSync(dir)) return null;
  if (!existsSync(path.join(dir, '.git'))) {
    throw new UserError('CHECKOUT_INVALID', `${dir} exists but is not a git checkout.`, {
      hint: `Move it away, or choose another folder with --workdir.`,
    });
  }
  return new Git(dir, log, env);
}

/** Shared cache folder (stand-in dependency folders); outside the workdir so build paths stay comparable. */
export function cacheRoot(env: Readonly<Record<string, string | undefined>>): string {
  return (
    env['MLX_STORAGE_PR_CACHE'] ??
    path.join(env['XDG_CACHE_HOME'] ?? path.join(env['HOME'] ?? os.homedir(), '.cache'), 'mlx-storage-pr')
  );
}
