import { ExitCode } from '../core/errors.js';

/**
 * What `pr --ci` makes of the check runs and commit statuses GitHub lists
 * for the pushed commit: each job's outcome, the summary, the exit code,
 * why a place shows no run, and whether `--wait` should keep polling. Pure:
 * ci-status.ts asks GitHub.
 */

/** Where a job ran: the upstream pull request, or the user's fork. */
export type CiPlace = 'pull-request' | 'fork';

export type JobOutcome = 'passed' | 'skipped' | 'failed' | 'running';

export interface CiJob {
  where: CiPlace;
  /** `owner/repo` the job belongs to. */
  repository: string;
  kind: 'check-run' | 'status';
  name: string;
  /** A check run's status; a commit status is `pending` or `completed`. */
  status: string;
  /** Null while it runs; a commit status that ended: `success`, `failure` or `error`. */
  conclusion: string | null;
  outcome: JobOutcome;
  url: string | null;
}

export interface CiSummary {
  total: number;
  passed: number;
  skipped: number;
  failed: number;
  running: number;
}

export type CiResult = 'passed' | 'failed' | 'running';

/** Why the upstream pull request shows no run for the commit. */
export type PullRequestReason = 'no-pull-request' | 'awaiting-approval' | 'none-yet';
/** Why the fork shows no run for the commit. */
export type ForkReason = 'actions-disabled' | 'branch-not-triggered' | 'none-yet';

export interface CiReasons {
  pullRequest: PullRequestReason | null;
  fork: ForkReason | null;
}

/**
 * MLX's `build_and_test.yml` (at the pinned commit): the pushes that start
 * it, and which of its jobs run on a fork (no repository guard) or not.
 */
export const MLX_FORK_CI = {
  branches: ['main', 'test/*'],
  unguarded: ['check_lint', 'linux_sanitizer_build_and_test', 'linux_fedora_build_cpp'],
  guarded: ['build_and_test', 'mac_build', 'the self-hosted macOS tests'],
} as const;

/** A check run's outcome. A run that needs approval (`action_required`) has not run yet. */
export function checkRunOutcome(status: string, conclusion: string | null): JobOutcome {
  if (status !== 'completed' || conclusion === null || conclusion === 'action_required') return 'running';
  if (conclusion === 'success' || conclusion === 'neutral') return 'passed';
  if (conclusion === 'skipped') return 'skipped';
  return 'failed';
}

/** A commit status's outcome (`pending`, `success`, `failure`, `error`). */
export function statusOutcome(state: string): JobOutcome {
  if (state === 'success') return 'passed';
  if (state === 'pending') return 'running';
  return 'failed';
}

export function summarize(jobs: readonly CiJob[]): CiSummary {
  const count = (outcome: JobOutcome) => jobs.filter((j) => j.outcome === outcome).length;
  return {
    total: jobs.length,
    passed: count('passed'),
    skipped: count('skipped'),
    failed: count('failed'),
    running: count('running'),
  };
}

/** A failure decides the result even while other jobs still run. */
export function ciResult(summary: CiSummary): CiResult {
  if (summary.failed > 0) return 'failed';
  if (summary.running > 0) return 'running';
  return 'passed';
}

export function ciExitCode(result: CiResult): number {
  return { passed: ExitCode.ok, failed: ExitCode.testsFailed, running: ExitCode.ciRunning }[result];
}

/** `5 passed, 1 skipped, 2 queued or running`: the counts that are not zero. */
export function summaryText(summary: CiSummary): string {
  const parts = [
    [summary.passed, 'passed'],
    [summary.skipped, 'skipped'],
    [summary.failed, 'failed'],
    [summary.running, 'queued or running'],
  ].filter(([n]) => n !== 0);
  const jobs = `${summary.total} job${summary.total === 1 ? '' : 's'}`;
  return parts.length === 0 ? `${jobs}` : `${jobs}: ${parts.map(([n, what]) => `${n} ${what}`).join(', ')}`;
}

/** Whether a push to `branch` starts MLX's CI on a fork. */
export function branchTriggersForkCi(branch: string): boolean {
  return branch === 'main' || branch.startsWith('test/');
}

/** A workflow run that waits for a maintainer's approval (a first-time contributor's pull request). */
export function awaitsApproval(run: { status: string; conclusion: string | null }): boolean {
  return run.status === 'waiting' || run.status === 'action_required' || run.conclusion === 'action_required';
}

export function pullRequestReason(o: {
  open: boolean;
  jobs: number;
  runs: ReadonlyArray<{ status: string; conclusion: string | null }>;
}): PullRequestReason | null {
  if (!o.open) return 'no-pull-request';
  if (o.jobs > 0) return null;
  return o.runs.some(awaitsApproval) ? 'awaiting-approval' : 'none-yet';
}

/** `actionsEnabled` null: GitHub did not say (reading the setting needs admin rights). */
export function forkReason(o: { jobs: number; actionsEnabled: boolean | null; branch: string }): ForkReason | null {
  if (o.jobs > 0) return null;
  if (o.actionsEnabled === false) return 'actions-disabled';
  return branchTriggersForkCi(o.branch) ? 'none-yet' : 'branch-not-triggered';
}

/**
 * Whether `--wait` can stop: nothing queued or running, and no place where
 * runs may still appear (none yet, or waiting for approval).
 */
export function isSettled(summary: CiSummary, reasons: CiReasons): boolean {
  const pending = (reason: string | null) => reason === 'none-yet' || reason === 'awaiting-approval';
  return summary.running === 0 && !pending(reasons.pullRequest) && !pending(reasons.fork);
}

/** The names the texts below need. */
export interface CiNames {
  /** `owner:branch`, the pull request's head. */
  head: string;
  upstream: string;
  forkRepository: string;
  branch: string;
  /** What to pass as --fork again. */
  fork: string;
}

/** Why a place shows no run, and what to do, in words. */
export interface ReasonText {
  text: string;
  fix: string;
}

const RUNS_APPEAR = 'Runs appear a minute or so after a push: run again, or add --wait.';

export function pullRequestReasonText(reason: PullRequestReason, n: CiNames): ReasonText {
  const texts: Record<PullRequestReason, ReasonText> = {
    'no-pull-request': {
      text: `no pull request is open from ${n.head} in ${n.upstream}`,
      fix: `Open it with \`mlx-storage-pr pr --push --fork ${n.fork} --open\` (or once by hand on GitHub from ${n.head}).`,
    },
    'awaiting-approval': {
      text: `the pull request's workflow runs in ${n.upstream} wait for a maintainer's approval (as a first-time contributor's do)`,
      fix: `A maintainer of ${n.upstream} approves them on the pull request's page; \`pr --ci --wait\` follows them once they start.`,
    },
    'none-yet': { text: `GitHub lists no run of this commit in ${n.upstream} yet`, fix: RUNS_APPEAR },
  };
  return texts[reason];
}

export function forkReasonText(reason: ForkReason, n: CiNames): ReasonText {
  const where = `${MLX_FORK_CI.unguarded.join(', ')} run there; ${MLX_FORK_CI.guarded.join(', ')} are guarded to ${n.upstream} and skipped`;
  const texts: Record<ForkReason, ReasonText> = {
    'actions-disabled': {
      text: `the fork ${n.forkRepository} has Actions disabled`,
      fix: `Enable them on the fork: Settings -> Actions -> General -> "Allow all actions and reusable workflows" (on a new fork, the Actions tab's "I understand my workflows, go ahead and enable them"), then push again (${where}).`,
    },
    'branch-not-triggered': {
      text: `the branch ${n.branch} does not trigger MLX's CI on the fork (build_and_test.yml runs on pushes to ${MLX_FORK_CI.branches.join(' and ')})`,
      fix: `To run MLX's unguarded jobs on your fork, push the commit as a test/<name> branch too: \`mlx-storage-pr pr --push --fork ${n.fork} --branch test/${n.branch}\`, then \`pr --ci --branch test/${n.branch}\` (${where}).`,
    },
    'none-yet': { text: `GitHub lists no run of this commit on the fork ${n.forkRepository} yet`, fix: RUNS_APPEAR },
  };
  return texts[reason];
}
