import { execa } from 'execa';

import type { Logger } from './log.js';
import { ProcessError } from './process-error.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface CompileResult {
  exitCode: number;
  /** stdout and stderr, interleaved. */
  output: string;
  seconds: number;
}

/** `<clang> --version`, or null when there is no such program; any other failure is a ProcessError. */
export async function clangVersionText(command: string, env: Env): Promise<string | null> {
  const args = ['--version'];
  const result = await execa(command, args, { reject: false, env: { ...env }, extendEnv: false, timeout: 30_000 });
  if (result.exitCode === 0) return String(result.stdout);
  const code = (result.cause as NodeJS.ErrnoException | undefined)?.code;
  // No such program is an answer ("absent"), not a failure: the caller tries the next candidate.
  if (code === 'ENOENT') return null;
  throw new ProcessError(
    [command, ...args],
    { exitCode: result.exitCode ?? null, signal: result.signal ?? null, stderr: String(result.stderr ?? '') },
    { cause: result.cause },
  );
}

/** What `exit 1: <first line>` a failed `clangVersionText` said, for a check's detail. */
export function clangFailure(error: ProcessError): string {
  const said = error.stderr.trim().split('\n')[0] ?? '';
  const code = (error.cause as NodeJS.ErrnoException | undefined)?.code;
  const how = error.exitCode !== null ? `exit ${error.exitCode}` : (code ?? error.signal ?? 'did not start');
  return said ? `${how}: ${said}` : how;
}

/** `_LIBCPP_VERSION` as `<clang> -stdlib=libc++` sees it; a ProcessError (the compiler's complaint in `stderr`) when it fails. */
export async function libcxxVersionText(command: string, env: Env): Promise<string> {
  const args = ['-stdlib=libc++', '-x', 'c++', '-E', '-P', '-'];
  const result = await execa(command, args, {
    input: '#include <version>\n_LIBCPP_VERSION\n',
    reject: false,
    env: { ...env },
    extendEnv: false,
    timeout: 60_000,
  });
  if (result.exitCode !== 0)
    throw new ProcessError([command, ...args], {
      exitCode: result.exitCode ?? null,
      signal: result.signal ?? null,
      stderr: String(result.stderr ?? ''),
    });
  const last = String(result.stdout).trim().split('\n').pop() ?? '';
  return last.trim();
}

/** Runs one compile; never throws for a compiler error, only for a compiler that cannot start. */
export async function compile(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Env; log: Logger },
): Promise<CompileResult> {
  options.log.debug(`Running \`${command} ${args.join(' ')}\` in ${options.cwd}`);
  const start = performance.now();
  const result = await execa(command, [...args], {
    cwd: options.cwd,
    reject: false,
    all: true,
    env: { ...options.env },
    extendEnv: false,
  });
  const seconds = (performance.now() - start) / 1000;
  if (result.exitCode === undefined)
    throw new ProcessError([command, ...args], {
      exitCode: null,
      signal: result.signal ?? null,
      stderr: result.message ?? '',
    });
  return { exitCode: result.exitCode, output: String(result.all ?? ''), seconds };
}
