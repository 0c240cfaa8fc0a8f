import type { Logger } from './log.js';
import { orFailure, ProcessError } from './process-error.js';
import { run } from './process.js';

/** A cmake-format of the wanted version, and how to call it. */
export interface CMakeFormat {
  version: string;
  command: string[];
}

export type CMakeFormatLookup = { tool: CMakeFormat; reason: null } | { tool: null; reason: string };

async function versionOf(command: string[], env: Readonly<Record<string, string | undefined>>): Promise<string | null> {
  const [file, ...args] = command as [string, ...string[]];
  // Any failure means "not this candidate"; uvx prints its own lines on stderr, so only stdout is read.
  const result = await orFailure(run(file, [...args, '--version'], { env, timeoutMs: 120_000 }));
  if (result instanceof ProcessError) return null;
  return result.stdout.trim().split('\n').pop()?.trim() ?? null;
}

/**
 * Finds cmake-format `version`: on PATH, else through `uvx` or `pipx run`
 * (both fetch the pinned cmakelang release into their own cache).
 */
export async function findCMakeFormat(
  version: string,
  env: Readonly<Record<string, string | undefined>>,
  log: Logger,
): Promise<CMakeFormatLookup> {
  const candidates = [
    ['cmake-format'],
    ['uvx', '--from', `cmakelang==${version}`, 'cmake-format'],
    ['pipx', 'run', '--spec', `cmakelang==${version}`, 'cmake-format'],
  ];
  const seen: string[] = [];
  for (const command of candidates) {
    log.debug(`Looking for cmake-format: ${command.join(' ')} --version`);
    const found = await versionOf(command, env);
    if (found === version) return { tool: { version, command }, reason: null };
    if (found !== null) seen.push(`${command[0]} gives ${found}`);
  }
  const other = seen.length ? ` (${seen.join('; ')})` : '';
  return { tool: null, reason: `cmake-format ${version} not found${other} (pip install cmakelang==${version})` };
}

/** Formats CMake text read from stdin; `cwd` is where cmake-format looks for its config file. */
export async function runCMakeFormat(
  tool: CMakeFormat,
  text: string,
  options: {
    cwd: string;
    configFile?: string | undefined;
    env: Readonly<Record<string, string | undefined>>;
    log: Logger;
  },
): Promise<string> {
  const [file, ...args] = tool.command as [string, ...string[]];
  const all = [...args, ...(options.configFile ? ['--config-files', options.configFile] : []), '-'];
  options.log.command([file, ...all].join(' '), options.cwd);
  const result = await run(file, all, {
    cwd: options.cwd,
    input: text,
    keepFinalNewline: true,
    env: options.env,
    timeoutMs: 120_000,
  });
  return result.stdout;
}
