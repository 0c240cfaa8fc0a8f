import type { Argv } from '../core/command-line.js';

import type { PausePoint } from '../adapters/interrupt.js';
import type { Logger } from '../adapters/log.js';
import { UserError } from '../core/errors.js';

/**
 * What the tool's own tests inject through `main(io)`, as gh's factory
 * does: no code of the tool reads a test setting from the environment. A run
 * from bin/ has none.
 */
export interface Seams {
  /** The step where the run waits for the test's Ctrl-C (see `pausePoint`). */
  pauseAt?: PausePoint;
  /** Milliseconds between two polls of `pr --ci --wait` (otherwise 30 s), so that a test need not sleep. */
  ciPollMs?: number;
}

/**
 * Options every command gets from the entry point, process state included
 * (cwd, env, platform): nothing below the commands reads process state.
 */
export interface GlobalOptions {
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  platform: NodeJS.Platform;
  project?: string | undefined;
  workdir?: string | undefined;
  mlxRepo?: string | undefined;
  json?: boolean | undefined;
  verbose?: boolean | undefined;
  logger?: Logger | undefined;
  seams?: Seams | undefined;
}

/** What a command hands back to the entry point: data for --json and lines for people. */
export interface CommandResult<T extends object = object> {
  data: T;
  lines: string[];
  exitCode?: number;
}

export type Handler = (options: GlobalOptions & Record<string, unknown>) => Promise<CommandResult>;

/** What a command's handler receives: the global options and the ones its builder declares (kebab-case and camel-cased names). */
export type ParsedOptions<O> = GlobalOptions & O & { '--': string[] };

/** One command as the command line sees it: its name, options and the work it runs. */
export interface CommandSpec {
  name: string;
  describe: string;
  builder: (y: Argv) => Argv;
  run: Handler;
}

/** A command whose handler is type-checked against the options its builder declares. */
export interface TypedCommandSpec<O> {
  name: string;
  describe: string;
  builder: (y: Argv) => Argv<O>;
  run: (options: ParsedOptions<O>) => Promise<CommandResult>;
}

/**
 * Declares a command. The handler's options are inferred from the builder;
 * the parser reads exactly what the builder declares, so erasing the option type
 * for the list of commands (one cast, here) loses nothing the handler relies on.
 */
export function defineCommand<O>(spec: TypedCommandSpec<O>): CommandSpec {
  return spec as unknown as CommandSpec;
}

/** The arguments after `--`, as text. */
export function afterDashes(options: { readonly '--'?: readonly string[] }): string[] {
  return [...(options['--'] ?? [])];
}

/** A whole number of at least 1; anything else is a usage error that quotes what was given. */
export function parseJobs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  // A repeated --jobs never gets here: main() refuses an option given twice.
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) {
    throw new UserError('USAGE', `--jobs must be a whole number of at least 1 (got "${value}").`, {
      hint: 'For example --jobs 2.',
    });
  }
  return Number(value);
}
