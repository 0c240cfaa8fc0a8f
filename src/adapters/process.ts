import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';

import { definedEnv, type Env, withoutRepositoryVariables } from './env.js';
import { childControl, childStoppedBy, InterruptedError, stopIfInterrupted, track } from './interrupt.js';
import type { Logger } from './log.js';
import { ProcessError, quote } from './process-error.js';

export { quote };

/** execa, loaded on first use: commands that run only git (apply, status) never load it. */
const loadExeca = () => import('execa');

/** What a program that succeeded printed (`runLogged`). */
export interface RunResult {
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
 * Every child process of the tool starts in this file, in one of four forms,
 * with one failure contract: a program that exits non-zero, is stopped by a
 * signal or does not start is a ProcessError (the command, exit code or
 * signal, and the last of what it said). Only `probe` answers "absent" (null),
 * for callers that ask whether a program is there. A Ctrl-C stops every child
 * (see interrupt.ts), and the interrupt report lists the ones running.
 *
 * - `run`: a short program, its output collected (stdin: closed or `input`).
 * - `runLogged`: a long program (CMake, a test binary), its combined output
 *   streamed to a log file and `onLine`; the error keeps the output's tail.
 * - `runDirect`: git, with stdout and stderr apart (see there).
 * - `runPipe`: `first | second`.
 *
 * Callers to whom a failure is an answer use `orFailure` (process-error.ts).
 * No program gets the variables that point git at a repository (a git
 * hook's GIT_DIR, ...): a git started by CMake or by the tool acts on the
 * folder it runs in. `runDirect`'s caller, the git adapter, removes them
 * itself, as it sets its own (a temporary index).
 */

/**
 * Runs a long program, echoing the command to stderr. A failure is a
 * ProcessError whose `stderr` and `output` are the last 40 lines of combined
 * output (the whole output with `keepOutput`).
 */
export async function runLogged(
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
  const { execa } = await loadExeca();
  const child = execa(command, args, {
    cwd: options.cwd,
    env: definedEnv(withoutRepositoryVariables(options.env)),
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
  await childStoppedBy(result.signal);
  if (result.failed && result.exitCode === undefined && result.signal === undefined) {
    // The program could not start at all (e.g. not installed).
    throw new ProcessError(
      [command, ...args],
      { exitCode: null, signal: null, stderr: result.message ?? `${command} could not start` },
      { cause: result.cause },
    );
  }
  const ended: RunResult = { tail: tail.join('\n'), output: kept.join('\n') };
  if (result.exitCode !== 0)
    throw new ProcessError([command, ...args], {
      exitCode: result.exitCode ?? null,
      signal: result.signal ?? null,
      stderr: ended.tail,
      output: options.keepOutput ? ended.output : ended.tail,
    });
  return ended;
}

export interface CaptureOptions {
  /** The whole environment of the program; nothing is inherited from process.env. */
  env: Env;
  cwd?: string | undefined;
  /** Text for the program's stdin (none: stdin is closed). */
  input?: string | undefined;
  /** Stop the program after this many milliseconds. */
  timeoutMs?: number | undefined;
  /** Keep a trailing newline of stdout (a formatter's output). */
  keepFinalNewline?: boolean | undefined;
}

export interface Captured {
  /** Exit code; null when the program was stopped by a signal or did not start. */
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr, interleaved. */
  all: string;
  /** Why the program did not start (`code` ENOENT: there is no such program), or null. */
  notStarted: NodeJS.ErrnoException | null;
}

/** Runs a short program to its end and collects what it printed, whether it failed or not (`run`, `probe`). */
async function capture(command: string, args: readonly string[], options: CaptureOptions): Promise<Captured> {
  stopIfInterrupted();
  const control = childControl();
  const forget = track([command, ...args].map(quote).join(' '));
  const { execa } = await loadExeca();
  const result = await execa(command, args, {
    reject: false,
    all: true,
    env: definedEnv(withoutRepositoryVariables(options.env)),
    extendEnv: false,
    detached: control.detached,
    ...(options.input === undefined ? { stdin: 'ignore' as const } : { input: options.input }),
    ...(options.cwd ? { cwd: options.cwd } : {}),
    ...(options.timeoutMs ? { timeout: options.timeoutMs } : {}),
    ...(options.keepFinalNewline ? { stripFinalNewline: false } : {}),
    ...(control.signal ? { cancelSignal: control.signal, killSignal: 'SIGINT' as const } : {}),
  });
  forget(result.signal ?? null);
  await childStoppedBy(result.signal);
  const notStarted =
    result.exitCode === undefined && result.signal === undefined
      ? ((result.cause as NodeJS.ErrnoException | undefined) ?? new Error(result.message))
      : null;
  return {
    exitCode: result.exitCode ?? null,
    signal: result.signal ?? null,
    stdout: String(result.stdout ?? ''),
    stderr: String(result.stderr ?? (notStarted ? result.message : '')),
    all: String(result.all ?? ''),
    notStarted,
  };
}

/** Runs a short program and collects what it printed; a failure is a ProcessError with `stderr` and `output` (all). */
export async function run(command: string, args: readonly string[], options: CaptureOptions): Promise<Captured> {
  const result = await capture(command, args, options);
  if (result.exitCode !== 0)
    throw new ProcessError(
      [command, ...args],
      { exitCode: result.exitCode, signal: result.signal, stderr: result.stderr, output: result.all },
      { cause: result.notStarted ?? undefined },
    );
  return result;
}

/** `first | second`, both started here (see `capture`); a ProcessError when either fails. */
export async function runPipe(
  first: readonly [string, readonly string[]],
  second: readonly [string, readonly string[]],
  options: { env: Env; cwd: string },
): Promise<void> {
  stopIfInterrupted();
  const control = childControl();
  const shown = `${[first[0], ...first[1]].map(quote).join(' ')} | ${[second[0], ...second[1]].map(quote).join(' ')}`;
  const forget = track(shown);
  const common = {
    env: definedEnv(withoutRepositoryVariables(options.env)),
    extendEnv: false,
    detached: control.detached,
    ...(control.signal ? { cancelSignal: control.signal, killSignal: 'SIGINT' as const } : {}),
  };
  try {
    const { execa } = await loadExeca();
    await execa(first[0], first[1], { ...common, cwd: options.cwd }).pipe(second[0], second[1], common);
    forget();
  } catch (error) {
    const failed = error as { exitCode?: number; signal?: string; stderr?: string; command?: string };
    forget(failed.signal ?? null);
    await childStoppedBy(failed.signal);
    throw new ProcessError(
      [first[0], ...first[1], '|', second[0], ...second[1]],
      { exitCode: failed.exitCode ?? null, signal: failed.signal ?? null, stderr: failed.stderr ?? '' },
      { cause: error },
    );
  }
}

/** Runs a short command with exactly `env` and returns its trimmed output, or null when it cannot run or fails. */
export async function probe(command: string, args: readonly string[], env: Env, cwd?: string): Promise<string | null> {
  const result = await capture(command, args, { env, cwd });
  if (result.exitCode !== 0) return null;
  return `${result.stdout}\n${result.stderr}`.trim();
}

/**
 * Runs a program (git) with its stdout and stderr collected apart, started
 * directly on Node's spawn rather than execa: after Ctrl-C it rejects with
 * InterruptedError as soon as the program itself exits, even when a helper it
 * started (git-remote-http) keeps the pipes open. Resolves with stdout; a
 * failure is a ProcessError whose `output` is stdout (git prints some reasons
 * there, e.g. `git stash push` on an unmerged index).
 */
export async function runDirect(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Readonly<Record<string, string | undefined>> },
): Promise<string> {
  const result = await spawnCollected(command, args, { cwd: options.cwd, env: definedEnv(options.env) });
  if (result.exitCode === 0) return result.stdout;
  throw new ProcessError(
    [command, ...args],
    { exitCode: result.exitCode, signal: result.signal, stderr: result.stderr, output: result.stdout },
    { cause: result.notStarted ?? undefined },
  );
}

function spawnCollected(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  notStarted: NodeJS.ErrnoException | null;
}> {
  stopIfInterrupted();
  return new Promise((resolve, reject) => {
    const control = childControl();
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: control.detached,
      ...(control.signal ? { signal: control.signal, killSignal: 'SIGINT' as const } : {}),
    });
    const forget = track(`${command} ${args.join(' ')}`);
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (error) => {
      if (error.name === 'AbortError') return reject(new InterruptedError());
      resolve({ exitCode: null, signal: null, stdout: '', stderr: error.message, notStarted: error });
    });
    child.on('exit', () => {
      if (control.signal?.aborted) {
        forget();
        child.stdout.destroy();
        child.stderr.destroy();
        reject(new InterruptedError());
      }
    });
    child.on('close', (code, signal) => {
      forget(signal);
      childStoppedBy(signal).then(
        () =>
          resolve({
            exitCode: code,
            signal,
            stdout: Buffer.concat(out).toString('utf8'),
            stderr: Buffer.concat(err).toString('utf8'),
            notStarted: null,
          }),
        reject,
      );
    });
  });
}
