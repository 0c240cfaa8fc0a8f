import path from 'node:path';

import type { Env } from '../adapters/env.js';
import { createLogger, type Logger } from '../adapters/log.js';
import { findProjectRoot, loadConfig, realPath } from '../adapters/project.js';
import type { Config } from '../core/config.js';
import { UserError } from '../core/errors.js';
import { DEFAULT_WORKDIR, verifyWorkdir } from '../core/paths.js';
import { chooseSource, type Source } from '../core/source.js';

/** Options every command accepts. Nothing below the command layer reads process state. */
export interface GlobalOptions {
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  project?: string | undefined;
  workdir?: string | undefined;
  mlxRepo?: string | undefined;
  json?: boolean | undefined;
  verbose?: boolean | undefined;
  logger?: Logger | undefined;
}

export interface Context {
  projectRoot: string;
  config: Config;
  workdir: string;
  source: Source;
  log: Logger;
  /** The command's environment: every child process runs with exactly this. */
  env: Env;
}

export async function loadContext(options: GlobalOptions): Promise<Context> {
  const projectRoot = options.project ? path.resolve(options.cwd, options.project) : findProjectRoot(options.cwd);
  const config = await loadConfig(projectRoot);
  const workdir = chooseWorkdir(options, projectRoot);
  const source = chooseSource(options.mlxRepo, options.env['MLX_REPO'], config.upstream.url, options.cwd);
  const log = options.logger ?? createLogger({ verbose: options.verbose ?? false });
  return { projectRoot, config, workdir, source, log, env: options.env };
}

/** --workdir, else MLX_STORAGE_PR_WORKDIR, else <project>/.work; empty values and folders inside the project are refused. */
function chooseWorkdir(options: GlobalOptions, projectRoot: string): string {
  const flag = options.workdir;
  const env = options.env['MLX_STORAGE_PR_WORKDIR'];
  if (flag !== undefined && flag.trim() === '') {
    throw new UserError('WORKDIR_INVALID', '--workdir is empty.', {
      hint: `Name a folder outside the project (--workdir ~/mlx-work), or leave the option out to use ${path.join(projectRoot, DEFAULT_WORKDIR)}.`,
    });
  }
  if (flag === undefined && env !== undefined && env.trim() === '') {
    throw new UserError('WORKDIR_INVALID', 'MLX_STORAGE_PR_WORKDIR is set but empty.', {
      hint: `Run \`unset MLX_STORAGE_PR_WORKDIR\` to use ${path.join(projectRoot, DEFAULT_WORKDIR)}, or set it to a folder outside the project.`,
    });
  }
  const origin = flag !== undefined ? '--workdir' : env !== undefined ? 'MLX_STORAGE_PR_WORKDIR' : null;
  const workdir = path.resolve(options.cwd, flag ?? env ?? path.join(projectRoot, DEFAULT_WORKDIR));
  if (origin !== null) verifyWorkdir(realPath(workdir), realPath(projectRoot), origin);
  return workdir;
}

/** What a command hands back to the entry point: data for --json and lines for people. */
export interface CommandResult<T extends object = object> {
  data: T;
  lines: string[];
  exitCode?: number;
}
