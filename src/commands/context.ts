import type { Logger } from '../adapters/log.js';
import { loadContext as loadOpsContext, type Context } from '../ops/context.js';

export type { Context } from '../ops/context.js';

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

/** The operations' context for a command: the CLI's options plus the platform the tool runs on. */
export function loadContext(options: GlobalOptions): Promise<Context> {
  return loadOpsContext({ ...options, platform: process.platform });
}

/** What a command hands back to the entry point: data for --json and lines for people. */
export interface CommandResult<T extends object = object> {
  data: T;
  lines: string[];
  exitCode?: number;
}
