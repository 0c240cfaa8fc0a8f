import path from 'node:path';

import type { Env } from '../adapters/env.js';
import { createLogger, type Logger } from '../adapters/log.js';
import { findProjectRoot, loadConfig } from '../adapters/project.js';
import type { Config } from '../core/config.js';
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
  const workdir = path.resolve(options.cwd, options.workdir ?? options.env['MLX_STORAGE_PR_WORKDIR'] ?? path.join(projectRoot, '.work'));
  const source = chooseSource(options.mlxRepo, options.env['MLX_REPO'], config.upstream.url, options.cwd);
  const log = options.logger ?? createLogger({ verbose: options.verbose ?? false });
  return { projectRoot, config, workdir, source, log, env: options.env };
}

/** What a command hands back to the entry point: data for --json and lines for people. */
export interface CommandResult<T extends object = object> {
  data: T;
  lines: string[];
  exitCode?: number;
}
