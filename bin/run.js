import { main } from '../dist/cli.js';

// Ctrl-C: the first one lets the command stop its processes, clean up and report;
// a second one stops at once. A SIGINT within 0.3 s of the first is the
// same Ctrl-C arriving twice: a wrapper such as npx forwards the terminal's SIGINT
// to the tool, which the terminal also sends it directly.
const SAME_CTRL_C_MS = 300;

/**
 * Runs the tool in this process as a command line does: Ctrl-C, a closed or
 * failing stdout, and the exit code. bin/mlx-storage-pr.js calls it with
 * nothing; the tool's own tests pass `seams` (see `main`) and argv.
 */
export async function run({ argv = process.argv.slice(2), seams } = {}) {
  const interrupt = new AbortController();
  let firstInterrupt = 0;
  process.on('SIGINT', () => {
    if (interrupt.signal.aborted) {
      if (Date.now() - firstInterrupt < SAME_CTRL_C_MS) return;
      process.stderr.write(
        'Quit at once, without cleaning up: the next run takes over the lock and removes an unfinished fetch.\n',
      );
      process.exit(130);
    }
    firstInterrupt = Date.now();
    process.stderr.write('\nStopping (Ctrl-C again to quit at once)...\n');
    interrupt.abort();
  });

  // stdout closed by its reader (EPIPE, `| head -1`): stop writing there and finish the command.
  // Any other write error (ENOSPC, EBADF, ...): one line on stderr, and exit 1 at the end.
  let stdoutError = null;
  process.stdout.on('error', (error) => {
    if (stdoutError !== null) return;
    stdoutError = error;
    if (error.code === 'EPIPE') return;
    process.stderr.write(`mlx-storage-pr: cannot write to stdout: ${error.code ?? error.message}\n`);
    process.exitCode = 1;
  });
  // stderr closed by its reader (`2>&1 | head -2`) or failing otherwise: its messages have nowhere
  // to go, so the command finishes as it would, with its own exit code.
  process.stderr.on('error', () => {});

  const code = await main({
    argv,
    cwd: process.cwd(),
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    signal: interrupt.signal,
    ...(seams === undefined ? {} : { seams }),
  });
  // A copy of that Ctrl-C still on its way must find the handler above, not a process
  // that is exiting (which it would kill, turning the exit code into "killed by SIGINT").
  const untilCopiesPass = firstInterrupt + SAME_CTRL_C_MS - Date.now();
  if (interrupt.signal.aborted && untilCopiesPass > 0)
    await new Promise((resolve) => setTimeout(resolve, untilCopiesPass));
  process.exitCode = stdoutError !== null && stdoutError.code !== 'EPIPE' ? 1 : code;
}
