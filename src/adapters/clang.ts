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

/** `<clang> --version`, or why it did not run: `missing` when there is no such program. */
export async function clangVersionText(command: string, env: Env): Promise<{ text: string } | { text: null; missing: boolean; error: string }> {
  const result = await execa(command, ['--version'], { reject: false, env: { ...env }, extendEnv: false, timeout: 30_000 });
  if (result.exitCode === 0) return { text: String(result.stdout) };
  const code = (result.cause as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ENOENT') return { text: null, missing: true, error: 'not found' };
  const said = String(result.stderr ?? '').trim().split('\n')[0] ?? '';
  const how = result.exitCode !== undefined ? `exit ${result.exitCode}` : (code ?? result.signal ?? 'did not start');
  return { text: null, missing: false, error: said ? `${how}: ${said}` : how };
}

/** `_LIBCPP_VERSION` as `<clang> -stdlib=libc++` sees it, or the compiler's complaint. */
export async function libcxxVersionText(command: string, env: Env): Promise<{ value: string | null; error: string | null }> {
  const result = await execa(command, ['-stdlib=libc++', '-x', 'c++', '-E', '-P', '-'], {
    input: '#include <version>\n_LIBCPP_VERSION\n',
    reject: false,
    env: { ...env },
    extendEnv: false,
    timeout: 60_000,
  });
  if (result.exitCode !== 0) return { value: null, error: String(result.stderr).trim().split('\n').slice(0, 2).join(' ') };
  const last = String(result.stdout).trim().split('\n').pop() ?? '';
  return { value: last.trim(), error: null };
}

/** Runs one compile; never throws for a compiler error, only for a compiler that cannot start. */
export async function compile(command: string, args: readonly string[], options: { cwd: string; env: Env; log: Logger }): Promise<CompileResult> {
  options.log.debug(`Running \`${command} ${args.join(' ')}\` in ${options.cwd}`);
  const start = performance.now();
  const result = await execa(command, [...args], { cwd: options.cwd, reject: false, all: true, env: { ...options.env }, extendEnv: false });
  const seconds = (performance.now() - start) / 1000;
  if (result.exitCode === undefined) throw new ProcessError([command, ...args], { exitCode: null, signal: result.signal ?? null, stderr: result.message ?? '' });
  return { exitCode: result.exitCode, output: String(result.all ?? ''), seconds };
}
