import type { Argv } from 'yargs';

import type { CommandResult, GlobalOptions } from '../commands/context.js';

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
