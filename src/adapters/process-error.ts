/** The error every adapter throws for a program that failed (kept free of heavy imports: the CLI's error report uses it). */

/**
 * A program that failed: it exited non-zero, was stopped by a signal, or could
 * not start. The one error the adapters throw for a failed process. Callers
 * that know what the failure means turn it into a UserError with a hint;
 * one that reaches the user unconverted is reported as PROCESS_FAILED.
 */
export class ProcessError extends Error {
  /** The program and its arguments, as run. */
  readonly command: readonly string[];
  /** Exit code, or null when the program was stopped by a signal or did not start. */
  readonly exitCode: number | null;
  readonly signal: string | null;
  /** What the program said on stderr (git: also stdout when stderr is empty); the last lines for long-running programs. */
  readonly stderr: string;
  /** What it printed in all (stdout and stderr interleaved; git: stdout), for callers that read a failed run's output. */
  readonly output: string;
  /** True when the program could not start at all (`cause` says why, e.g. ENOENT: no such program). */
  readonly notStarted: boolean;

  constructor(
    command: readonly string[],
    result: { exitCode: number | null; signal?: string | null; stderr: string; output?: string },
    options: { cause?: unknown } = {},
  ) {
    const how =
      result.exitCode !== null
        ? `exit code ${result.exitCode}`
        : result.signal
          ? `stopped by ${result.signal}`
          : 'did not start';
    const said = lastLines(result.stderr, 8);
    super(
      `${command.map(quote).join(' ')} failed (${how})${said ? `: ${said}` : ''}`,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'ProcessError';
    this.command = command;
    this.exitCode = result.exitCode;
    this.signal = result.signal ?? null;
    this.stderr = result.stderr;
    this.output = result.output ?? '';
    this.notStarted = result.exitCode === null && !result.signal;
  }

  /** The errno code of a program that did not start (`ENOENT`: there is no such program), else null. */
  get startError(): string | null {
    return this.notStarted ? ((this.cause as NodeJS.ErrnoException | undefined)?.code ?? null) : null;
  }
}

/** The last `count` lines of `text`, trimmed. */
export function lastLines(text: string, count: number): string {
  return text.trim().split('\n').slice(-count).join('\n');
}

/** Quotes an argument for display as a shell command. */
export function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

/**
 * The result of `running`, or its ProcessError: for callers to whom a failed
 * program is an answer (a test binary with failing cases, a compiler error).
 * Any other error is thrown.
 */
export async function orFailure<T>(running: Promise<T>): Promise<T | ProcessError> {
  try {
    return await running;
  } catch (error) {
    if (error instanceof ProcessError) return error;
    throw error;
  }
}
