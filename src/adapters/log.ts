import { paint, useColour } from '../core/colour.js';
import { redactUrls } from '../core/redact.js';

/**
 * Human output. Everything goes to stderr so stdout stays free for `--json`
 * and for a command's final summary.
 */
export interface Logger {
  /** Where the text goes; progress bars draw on it too. */
  readonly stream: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  info(message: string): void;
  warn(message: string): void;
  /** Echo of a subprocess about to run. */
  command(command: string, cwd: string): void;
  debug(message: string): void;
}

/** `env` decides, with the stream being a terminal, whether `warning:` is coloured (none without it). */
export function createLogger(
  options: {
    verbose?: boolean;
    stream?: NodeJS.WritableStream & { isTTY?: boolean };
    env?: Readonly<Record<string, string | undefined>>;
  } = {},
): Logger {
  const stream = options.stream ?? process.stderr;
  const colour = options.env !== undefined && useColour(options.env, stream.isTTY);
  // A URL's user part (a token in --mlx-repo) is never printed, in a message or an echoed command.
  const write = (line: string) => stream.write(`${redactUrls(line)}\n`);
  return {
    stream,
    info: write,
    warn: (message) => stream.write(`${paint(`warning: ${redactUrls(message)}`, colour)}\n`),
    command: (command, cwd) => write(`Running \`${command}\` in ${cwd}`),
    debug: (message) => {
      if (options.verbose) write(message);
    },
  };
}
