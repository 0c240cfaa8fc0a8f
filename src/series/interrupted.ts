import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';

import { ifAbsent } from '../adapters/files.js';
import { completedStep, inFlightStep, runningAtInterrupt, watchInterrupts } from '../adapters/interrupt.js';
import { lockOwner } from '../adapters/lock.js';
import { quote } from '../adapters/process-error.js';
import { UserError } from '../core/errors.js';
import { DEFAULT_WORKDIR } from '../core/paths.js';
import type { WorkdirLayout } from '../core/workdir.js';
import { readBumpState } from './bump-state.js';
import { classifyHead, headCheckoutState, type CheckoutState } from './head-state.js';
import { loadContext, type ContextOptions } from './context.js';

export interface InterruptDetails {
  command: string;
  /** The command's work got done; Ctrl-C came during its last, uninterruptible step. */
  finished: boolean;
  /** Commands that were running when Ctrl-C came. */
  running: string[];
  /** What this report removed because the run left it behind. */
  removed: string[];
  /** An effect outside this machine that was under way and may or may not have taken effect (a push). */
  inFlight?: string;
  /** A bump in progress in the workdir after the interrupt: `bump --continue` or `--abort` is next, not a new bump. */
  bumpInProgress?: boolean;
  checkout: { path: string | null; state: CheckoutState; head: string | null; uncommitted: string[] };
}

const stateText: Record<CheckoutState, string> = {
  'no-checkout': 'does not exist',
  'no-files': 'has the pinned commit fetched but no files checked out yet',
  'not-applied': 'is the clean pinned commit (the series is not applied)',
  applied: 'holds the applied series (current)',
  outdated: 'holds an applied series that is not current (templates/ or patches/ changed since)',
  'foreign-head': 'has a HEAD that is neither the pinned commit nor an applied series',
  'missing-pinned-commit': 'does not hold the pinned commit',
  unmerged: 'has files with unresolved merge conflicts',
  unknown: 'could not be read',
};

/**
 * After Ctrl-C: removes what the run left that no other run can own (its
 * own side folder and lock), then says what stopped and what state the
 * checkout is in. The run's commands already undid what they could.
 */
export async function interruptedError(
  command: string,
  options: ContextOptions & Readonly<Record<string, unknown>>,
  run: { finished: boolean },
): Promise<UserError> {
  const running = runningAtInterrupt();
  const completed = completedStep();
  const inFlight = inFlightStep();
  // The report itself runs git; a second Ctrl-C still stops the process at once (bin/).
  watchInterrupts(undefined);
  const details: InterruptDetails = {
    command,
    finished: run.finished,
    running,
    removed: [],
    checkout: { path: null, state: 'unknown', head: null, uncommitted: [] },
  };
  // init has no checkout; it writes its folder in one rename at the end and removes its temporary folders itself.
  if (command === 'init')
    return new UserError(
      'INTERRUPTED',
      run.finished
        ? 'Interrupted: Ctrl-C came as `mlx-storage-pr init` was finishing; the new project folder is complete.'
        : `Interrupted: \`mlx-storage-pr init\` did not finish${running.length ? `; it stopped while running \`${running.join('`, `')}\`` : ''}. It wrote nothing.`,
      { hint: 'Run the same `mlx-storage-pr init` again.', details },
    );
  if (inFlight !== null) details.inFlight = inFlight.what;
  let flags = '';
  try {
    const ctx = await loadContext(options);
    details.removed = await removeLeftovers(ctx.layout);
    details.checkout.path = ctx.layout.checkout;
    flags = ctx.workdir === path.join(ctx.projectRoot, DEFAULT_WORKDIR) ? '' : ` --workdir ${ctx.workdir}`;
    if (command === 'bump') details.bumpInProgress = (await readBumpState(ctx).catch(() => null)) !== null;
    const git = await ctx.checkout();
    if (git === null) details.checkout.state = 'no-checkout';
    else {
      const head = await classifyHead(git, ctx.config.upstream.commit);
      details.checkout.head = head.kind === 'empty' ? null : head.commit;
      details.checkout.uncommitted = (await git.status()).map((e) => e.path);
      const { plan } = await ctx.project();
      details.checkout.state = headCheckoutState(head, () => plan.inputHash);
    }
  } catch {
    // The state stays "unknown"; the report must not fail on top of the interrupt.
  }

  const lines = [
    run.finished
      ? `Interrupted: Ctrl-C came as \`mlx-storage-pr ${command}\` was finishing; its last step was not cut off, so its work is done (see the state below).`
      : `Interrupted: \`mlx-storage-pr ${command}\` did not finish${running.length ? `; it stopped while running \`${running.join('`, `')}\`` : ''}.`,
  ];
  if (completed !== null) lines.push(`Ctrl-C came after ${completed} completed; that stands.`);
  if (inFlight !== null)
    lines.push(`${inFlight.what} may or may not have landed: git may have sent it before Ctrl-C stopped it.`);
  if (details.bumpInProgress) lines.push(`The bump had saved its state: it is in progress (\`status\` shows it).`);
  const where = details.checkout.path ?? 'the checkout';
  if (details.checkout.state === 'no-checkout')
    lines.push(`No MLX checkout in ${where}; nothing was kept from an unfinished fetch.`);
  else lines.push(`The checkout ${where} ${stateText[details.checkout.state]}.`);
  if (details.checkout.uncommitted.length)
    lines.push(
      `It has ${details.checkout.uncommitted.length} uncommitted change(s): ${details.checkout.uncommitted.slice(0, 10).join(', ')}${details.checkout.uncommitted.length > 10 ? ', ...' : ''}`,
    );
  if (details.removed.length) lines.push(`Removed what the run left behind: ${details.removed.join(', ')}`);
  const next = details.bumpInProgress
    ? `Resolve the conflicts it names (\`mlx-storage-pr status${flags}\`), \`mlx-storage-pr export${flags}\`, then \`mlx-storage-pr bump --continue${flags}\`; or give it up with \`mlx-storage-pr bump --abort${flags}\`. A new \`bump --to\` refuses while it is in progress.`
    : inFlight !== null
      ? `${inFlight.check[0]?.toUpperCase() ?? ''}${inFlight.check.slice(1)}.`
      : `Run \`mlx-storage-pr ${command}${typedAgain(options)}${flags}\` again to finish; \`mlx-storage-pr status${flags}\` shows the checkout.`;
  return new UserError('INTERRUPTED', lines.join('\n'), { hint: next, details });
}

/**
 * The options the user typed that decide what a run again does: the source, the project and
 * how the build is made (offline, its dependencies, the build type). `--workdir` comes from the context.
 */
function typedAgain(options: Readonly<Record<string, unknown>>): string {
  const words: string[] = [];
  for (const name of ['mlx-repo', 'project', 'deps-dir', 'sanitize', 'cxx'])
    if (typeof options[name] === 'string') words.push(`--${name}`, quote(options[name]));
  for (const name of ['offline', 'debug', 'upstream-ci']) if (options[name] === true) words.push(`--${name}`);
  return words.map((w) => ` ${w}`).join('');
}

/** This process's own lock and fetch side folder, if still there. */
async function removeLeftovers(layout: WorkdirLayout): Promise<string[]> {
  const removed: string[] = [];
  const lock = layout.lock;
  const owner = (await lockOwner(lock)).pid;
  if (owner === process.pid) {
    await rm(lock, { force: true });
    removed.push(lock);
  }
  const partial = layout.partialCheckout(process.pid);
  if ((await ifAbsent(readdir(layout.root), [] as string[])).includes(path.basename(partial))) {
    await rm(partial, { recursive: true, force: true });
    removed.push(partial);
  }
  return removed;
}
