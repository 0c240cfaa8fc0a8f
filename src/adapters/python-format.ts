import type { Logger } from './log.js';
import { orFailure, ProcessError } from './process-error.js';
import { run } from './process.js';

type Env = Readonly<Record<string, string | undefined>>;

/** black or isort on PATH, and the version it reports. */
export interface PythonFormatter {
  name: 'black' | 'isort';
  version: string;
}

/** The version `black --version` (`black, 26.1.0 (compiled: yes)`) or `isort --version-number` prints, or null. */
export async function pythonFormatterVersion(name: 'black' | 'isort', env: Env, log: Logger): Promise<string | null> {
  const args = name === 'black' ? ['--version'] : ['--version-number'];
  log.debug(`Looking for ${name}: ${name} ${args.join(' ')}`);
  const result = await orFailure(run(name, args, { env, timeoutMs: 60_000 }));
  if (result instanceof ProcessError) return null;
  return /(\d+\.\d+(?:\.\d+)?)/.exec(result.stdout)?.[1] ?? null;
}

/**
 * Formats Python text read from stdin as the pre-commit hook would format
 * the file `file` (isort: with the hook's `args`), and returns the result.
 */
export async function runPythonFormatter(
  tool: PythonFormatter,
  text: string,
  options: { file: string; args: readonly string[]; cwd: string; env: Env; log: Logger },
): Promise<string> {
  const all =
    tool.name === 'black'
      ? ['--quiet', ...options.args, '--stdin-filename', options.file, '-']
      : [...options.args, '--filename', options.file, '-'];
  options.log.command([tool.name, ...all].join(' '), options.cwd);
  const result = await run(tool.name, all, {
    cwd: options.cwd,
    input: text,
    keepFinalNewline: true,
    env: options.env,
    timeoutMs: 120_000,
  });
  return result.stdout;
}
