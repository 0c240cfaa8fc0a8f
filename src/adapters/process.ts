import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';

import { execa } from 'execa';

import { definedEnv, type Env } from './env.js';
import { childControl, stopIfInterrupted, track } from './interrupt.js';
import type { Logger } from './log.js';
import { quote } from './process-error.js';

export { quote };

export interface RunResult {
  exitCode: number | null;
  signal: string | null;
  /** Last lines of combined output, for error messages. */
  tail: string;
  output: string;
}

export interface RunOptions {
  cwd: string;
  /** The whole environment of the program; nothing is inherited from process.env. */
  env: Env;
  /** Combined stdout and stderr are appended here. */
  logFile?: string;
  /** Called for each output line, e.g. to drive a progress bar. */
  onLine?: (line: string) => void;
  /** Keep the whole output in memory (small commands only). */
  keepOutput?: boolean;
  /** Stop the program (SIGKILL) after this many milliseconds; the result then has its signal. */
  timeoutMs?: number;
}

/**
 * Runs a program, echoing the command to stderr. Never throws for a non-zero
 * exit: callers decide what a failure means and name the fix.
 */
export async function runProcess(
  log: Logger,
  command: string,
  args: readonly string[],
  options: RunOptions,
): Promise<RunResult> {
  stopIfInterrupted();
  log.command([command, ...args].map(quote).join(' '), options.cwd);
  let stream: NodeJS.WritableStream | undefined;
  if (options.logFile) {
    await mkdir(path.dirname(options.logFile), { recursive: true });
    stream = createWriteStream(options.logFile, { flags: 'a' });
    stream.write(`$ ${[command, ...args].map(quote).join(' ')}\n`);
  }
  const tail: string[] = [];
  const kept: string[] = [];
  const control = childControl();
  const child = execa(command, args, {
    cwd: options.cwd,
    env: definedEnv(options.env),
    extendEnv: false,
    all: true,
    reject: false,
    stdin: 'ignore',
    buffer: false,
    detached: control.detached,
    ...(options.timeoutMs ? { timeout: options.timeoutMs, killSignal: 'SIGKILL' as const } : {}),
    ...(control.signal ? { cancelSignal: control.signal, killSignal: 'SIGINT' as const } : {}),
  });
  const forget = track([command, ...args].map(quote).join(' '));
  let pending = '';
  const onData = (chunk: Buffer | string) => {
    const text = chunk.toString();
    stream?.write(text);
    pending += text;
    const lines = pending.split(/\r?\n|\r/);
    pending = lines.pop() ?? '';
    for (const line of lines) handle(line);
  };
  const handle = (line: string) => {
    tail.push(line);
    if (tail.length > 40) tail.shift();
    if (options.keepOutput) kept.push(line);
    options.onLine?.(line);
  };
  child.all?.on('data', onData);
  const result = await child;
  forget(result.signal ?? null);
  if (pending) handle(pending);
  if (stream) await new Promise<void>((resolve) => stream.end(resolve));
  if (result.failed && result.exitCode === undefined && result.signal === undefined) {
    // The program could not start at all (e.g. not installed).
    return { exitCode: null, signal: null, tail: result.message ?? `${command} could not start`, output: '' };
  }
  return {
    exitCode: result.exitCode ?? null,
    signal: result.signal ?? null,
    tail: tail.join('\n'),
    output: kept.join('\n'),
  };
}

/** Runs a short command with exactly `env` and returns its trimmed output, or null when it cannot run or fails. */
export async function probe(command: string, args: readonly string[], env: Env, cwd?: string): Promise<string | null> {
  stopIfInterrupted();
  const control = childControl();
  const result = await execa(command, args, {
    reject: false,
    stdin: 'ignore',
    env: definedEnv(env),
    extendEnv: false,
    ...(cwd ? { cwd } : {}),
    ...(control.signal ? { cancelSignal: control.signal } : {}),
  });
  if (result.failed) return null;
  return `${result.stdout}\n${result.stderr}`.trim();
}
