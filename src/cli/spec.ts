import type { Argv, Options } from 'yargs';

import type { CommandResult, GlobalOptions } from '../commands/context.js';
import { UserError } from '../core/errors.js';

export type Handler = (options: GlobalOptions & Record<string, unknown>) => Promise<CommandResult>;

/**
 * One command as yargs sees it. `load` imports the implementation only when
 * the command runs, so `--help` and cheap commands start fast.
 */
export interface CommandSpec {
  name: string;
  describe: string;
  builder: (y: Argv) => Argv;
  load: () => Promise<Handler>;
}

/** `--jobs`, read as text so that a bad value can be quoted back; `parseJobs` checks it. */
export function jobsOption(describe: string, fallback: number): Options {
  return { alias: 'j', type: 'string', default: String(fallback), defaultDescription: 'the number of CPUs', describe };
}

/** A whole number of at least 1; anything else is a usage error that quotes what was given. */
export function parseJobs(value: unknown): number | undefined {
  if (value === undefined) return undefined;
  const text = String(Array.isArray(value) ? value.at(-1) : value);
  if (!/^\d+$/.test(text.trim()) || Number(text) < 1) {
    throw new UserError('USAGE', `--jobs must be a whole number of at least 1 (got "${text}").`, { hint: 'For example --jobs 2.' });
  }
  return Number(text);
}
