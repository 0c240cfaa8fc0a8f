/**
 * Ctrl-C for the processes this tool starts. bin/ turns SIGINT into an abort
 * of the run's signal; the adapters that start processes read it here, so an
 * interrupted run starts nothing new and stops what runs, except inside a
 * short step that must not stop half-way (the final checkout swap).
 */

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

/** Connects a run's signal; called once per command by the entry point. */
export function watchInterrupts(runSignal: AbortSignal | undefined): void {
  signal = runSignal;
  shielded = 0;
  running.clear();
  atInterrupt = [];
  stoppedBySigint = [];
  runSignal?.addEventListener('abort', () => (atInterrupt = [...running.values()]), { once: true });
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
