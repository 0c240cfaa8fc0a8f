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

export function createLogger(options: { verbose?: boolean; stream?: NodeJS.WritableStream } = {}): Logger {
  const stream = options.stream ?? process.stderr;
  // A URL's user part (a token in --mlx-repo) is never printed, in a message or an echoed command.
  const write = (line: string) => stream.write(`${redactUrls(line)}\n`);
  return {
    stream,
    info: write,
    warn: (message) => write(`warning: ${message}`),
    command: (command, cwd) => write(`Running \`${command}\` in ${cwd}`),
    debug: (message) => {
      if (options.verbose) write(message);
    },
  };
}
