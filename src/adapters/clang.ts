import type { Logger } from './log.js';
import { orFailure, ProcessError } from './process-error.js';
import { run } from './process.js';

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
  const result = await orFailure(run(command, args, { env, timeoutMs: 30_000 }));
  if (!(result instanceof ProcessError)) return result.stdout;
  // No such program is an answer ("absent"), not a failure: the caller tries the next candidate.
  if (result.startError === 'ENOENT') return null;
  throw result;
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
  const result = await run(command, args, { env, input: '#include <version>\n_LIBCPP_VERSION\n', timeoutMs: 60_000 });
  const last = result.stdout.trim().split('\n').pop() ?? '';
  return last.trim();
}

/** Runs one compile; a compiler error is a result (its exit code and output), a compiler that cannot start or is stopped a ProcessError. */
export async function compile(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Env; log: Logger },
): Promise<CompileResult> {
  options.log.debug(`Running \`${command} ${args.join(' ')}\` in ${options.cwd}`);
  const start = performance.now();
  const result = await orFailure(run(command, args, { cwd: options.cwd, env: options.env }));
  const seconds = (performance.now() - start) / 1000;
  if (!(result instanceof ProcessError)) return { exitCode: 0, output: result.all, seconds };
  if (result.exitCode === null) throw result;
  return { exitCode: result.exitCode, output: result.output, seconds };
}
