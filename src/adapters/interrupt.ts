/**
 * Ctrl-C for the processes this tool starts. bin/ turns SIGINT into an abort
 * of the run's signal; the adapters that start processes read it here, so an
 * interrupted run starts nothing new and stops what runs, except inside a
 * short step that must not stop half-way (the final checkout swap).
 */

import { setMaxListeners } from 'node:events';

/** Thrown by an adapter asked to start a process after the run was interrupted. */
export class InterruptedError extends Error {
  /** True when the command's work was done and only its report was cut off. */
  readonly finished: boolean;

  constructor(options: { finished?: boolean } = {}) {
    super('interrupted');
    this.name = 'InterruptedError';
    this.finished = options.finished ?? false;
  }
}

let signal: AbortSignal | undefined;
let shielded = 0;
const running = new Map<number, string>();
let nextId = 0;
let atInterrupt: string[] = [];
let stoppedBySigint: string[] = [];
let completed: string | null = null;
let inFlight: InFlight | null = null;
let pause: { step: PausePoint; stream: NodeJS.WritableStream } | null = null;

/**
 * Connects a run's signal; called once per command by the entry point. `pauseAt`
 * is for the tool's own tests only (see `pausePoint`); a run never sets it.
 */
export function watchInterrupts(
  runSignal: AbortSignal | undefined,
  pauseAt?: { step: PausePoint; stream: NodeJS.WritableStream },
): void {
  signal = runSignal;
  // Every running child listens to this one signal (doctor probes a dozen tools at once): that is
  // no leak, so Node's warning after 10 listeners does not apply.
  if (runSignal !== undefined) setMaxListeners(0, runSignal);
  shielded = 0;
  running.clear();
  atInterrupt = [];
  stoppedBySigint = [];
  completed = null;
  inFlight = null;
  pause = pauseAt ?? null;
  runSignal?.addEventListener('abort', () => (atInterrupt = [...running.values()]), { once: true });
}

/** Points where a test can make the run wait for its Ctrl-C (`pausePoint`). */
export type PausePoint = 'lock-taken' | 'fetch-started' | 'push-done' | 'bump-saved';

/**
 * Test-only: when the tool's tests asked to pause at `step` (they pass it to
 * `main(io)`, which hands it to `watchInterrupts`), says so on
 * stderr and waits there until Ctrl-C (or 60 s), so that a test can send the
 * interrupt at exactly this point. With `alongside` (a process just started)
 * it also waits for that and hands back its outcome. Otherwise a no-op.
 */
export async function pausePoint<T>(step: PausePoint, alongside?: Promise<T>): Promise<T | undefined> {
  if (pause?.step !== step) return alongside === undefined ? undefined : await alongside;
  const runSignal = signal;
  pause.stream.write(`[test pause] at ${step}, pid ${process.pid}\n`);
  const waiting = new Promise<void>((resolve) => {
    if (runSignal?.aborted) return resolve();
    const timer = setTimeout(resolve, 60_000);
    runSignal?.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
  const [result] = await Promise.all([alongside, waiting]);
  return result;
}

/**
 * Records that the command's effect outside this machine is done (`the push`):
 * an interrupt after it does not turn the command into a failure, the result is
 * reported with a line saying the interrupt came after `what` completed.
 */
export function markCompleted(what: string): void {
  completed = what;
  inFlight = null;
}

/** An effect outside this machine under way (a push): Ctrl-C cannot tell whether it took effect. */
export interface InFlight {
  /** What may or may not have happened, e.g. `the push to <fork>`. */
  what: string;
  /** How to find out (a command), and what is safe to run next. */
  check: string;
}

/**
 * Records that `step` has started and may take effect outside this machine
 * before an interrupt can stop it: the interrupt report then says it may or
 * may not have happened and how to tell. `markCompleted` ends it.
 */
export function markInFlight(step: InFlight | null): void {
  inFlight = step;
}

/** What `markInFlight` recorded and nothing completed since, or null. */
export function inFlightStep(): InFlight | null {
  return inFlight;
}

/** What `markCompleted` recorded in this run, or null. */
export function completedStep(): string | null {
  return completed;
}

export function isInterrupted(): boolean {
  return signal?.aborted === true;
}

/**
 * The commands that were running when the interrupt came. A terminal sends
 * SIGINT to the children too, and one may end before this process hears of
 * it: commands stopped by SIGINT count as running then.
 */
export function runningAtInterrupt(): string[] {
  return atInterrupt.length > 0 ? atInterrupt : stoppedBySigint;
}

/** Throws InterruptedError once the run was interrupted, except inside `uninterruptible`. */
export function stopIfInterrupted(): void {
  if (shielded === 0 && isInterrupted()) throw new InterruptedError();
}

/**
 * How to start a child: the signal that stops it (none inside an
 * uninterruptible step) and whether it needs its own process group, so that
 * the SIGINT a terminal sends to the whole group does not reach it.
 */
export function childControl(): { signal: AbortSignal | undefined; detached: boolean } {
  return shielded > 0 ? { signal: undefined, detached: true } : { signal, detached: false };
}

/** How long a child stopped by SIGINT waits for this process's own SIGINT (see `childStoppedBy`). */
const SAME_CTRL_C_MS = 1000;

/**
 * Called when a child ended. A child that SIGINT stopped while this run was
 * not (yet) interrupted was most likely hit by the Ctrl-C a terminal sends to
 * the whole process group, and this process's SIGINT is on its way: wait for
 * it (at most a second) and throw InterruptedError when it came, instead of
 * treating the stopped child as a failure and going on (to a fallback, say).
 * Outside that case, or inside an uninterruptible step (whose children run
 * in their own process group), it returns at once.
 */
export async function childStoppedBy(childSignal: string | null | undefined): Promise<void> {
  const runSignal = signal;
  if (childSignal !== 'SIGINT' || shielded > 0 || runSignal === undefined) return;
  if (!runSignal.aborted)
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, SAME_CTRL_C_MS);
      runSignal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
    });
  if (runSignal.aborted) throw new InterruptedError();
}

/** Records a started child for the interrupt report; returns the function to call when it ends. */
export function track(command: string): (signal?: string | null) => void {
  const id = nextId++;
  running.set(id, command);
  return (signal) => {
    if (signal === 'SIGINT' && running.has(id)) stoppedBySigint.push(command);
    running.delete(id);
  };
}

/**
 * Runs a short step that must finish once started: Ctrl-C during it waits for
 * it to end. An interrupt that came before it stops it from starting.
 */
export async function uninterruptible<T>(fn: () => Promise<T>): Promise<T> {
  stopIfInterrupted();
  shielded++;
  try {
    return await fn();
  } finally {
    shielded--;
  }
}
