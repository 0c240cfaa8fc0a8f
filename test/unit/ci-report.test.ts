import { describe, expect, it } from 'vitest';

import {
  branchTriggersForkCi,
  checkRunOutcome,
  ciExitCode,
  ciResult,
  forkReason,
  isSettled,
  pullRequestReason,
  statusOutcome,
  summarize,
  summaryText,
  type CiJob,
  type JobOutcome,
} from '../../src/pull-request/ci-report.js';

const job = (outcome: JobOutcome): CiJob => ({
  where: 'fork',
  repository: 'alice/mlx',
  kind: 'check-run',
  name: 'x',
  status: 'completed',
  conclusion: null,
  outcome,
  url: null,
});

describe('pr --ci: outcomes, summary and exit code', () => {
  it('maps every check-run conclusion GitHub documents; a run not completed, or waiting for approval, still runs', () => {
    const table: Array<[string, string | null, JobOutcome]> = [
      ['queued', null, 'running'],
      ['in_progress', null, 'running'],
      ['waiting', null, 'running'],
      ['requested', null, 'running'],
      ['pending', null, 'running'],
      ['completed', 'action_required', 'running'],
      ['completed', 'success', 'passed'],
      ['completed', 'neutral', 'passed'],
      ['completed', 'skipped', 'skipped'],
      ['completed', 'failure', 'failed'],
      ['completed', 'timed_out', 'failed'],
      ['completed', 'cancelled', 'failed'],
      ['completed', 'stale', 'failed'],
    ];
    for (const [status, conclusion, outcome] of table)
      expect(checkRunOutcome(status, conclusion), `${status}/${conclusion}`).toBe(outcome);
  });

  it('maps commit status states: pending runs, error and failure failed', () => {
    expect(['pending', 'success', 'failure', 'error'].map(statusOutcome)).toEqual([
      'running',
      'passed',
      'failed',
      'failed',
    ]);
  });

  it('a failure decides the result while other jobs still run (8); running without failure is 11; passed and skipped are 0', () => {
    const of = (...outcomes: JobOutcome[]) => ciExitCode(ciResult(summarize(outcomes.map(job))));
    expect(of('passed', 'failed', 'running')).toBe(8);
    expect(of('passed', 'running')).toBe(11);
    expect(of('passed', 'skipped')).toBe(0);
  });

  it('the summary names only the counts that are not zero', () => {
    expect(summaryText(summarize([job('passed'), job('passed'), job('running')]))).toBe(
      '3 jobs: 2 passed, 1 queued or running',
    );
    expect(summaryText(summarize([job('skipped')]))).toBe('1 job: 1 skipped');
  });
});

describe('pr --ci: why a place shows no run', () => {
  it("MLX's CI starts on a fork for main and test/<name> only", () => {
    for (const yes of ['main', 'test/metal-view', 'test/a/b']) expect(branchTriggersForkCi(yes), yes).toBe(true);
    for (const no of ['mlx-storage-pr', 'tests/x', 'test', 'main2', 'feature/test/x'])
      expect(branchTriggersForkCi(no), no).toBe(false);
  });

  it('the pull request: none open, then runs waiting for approval (status waiting or conclusion action_required), then none yet', () => {
    expect(pullRequestReason({ open: false, jobs: 0, runs: [] })).toBe('no-pull-request');
    expect(pullRequestReason({ open: true, jobs: 0, runs: [{ status: 'waiting', conclusion: null }] })).toBe(
      'awaiting-approval',
    );
    expect(
      pullRequestReason({ open: true, jobs: 0, runs: [{ status: 'completed', conclusion: 'action_required' }] }),
    ).toBe('awaiting-approval');
    expect(pullRequestReason({ open: true, jobs: 0, runs: [{ status: 'completed', conclusion: 'success' }] })).toBe(
      'none-yet',
    );
    expect(pullRequestReason({ open: true, jobs: 2, runs: [] })).toBeNull();
  });

  it('the fork: Actions disabled comes first; unknown Actions (no admin rights) falls back to the branch', () => {
    expect(forkReason({ jobs: 0, actionsEnabled: false, branch: 'test/x' })).toBe('actions-disabled');
    expect(forkReason({ jobs: 0, actionsEnabled: null, branch: 'mlx-storage-pr' })).toBe('branch-not-triggered');
    expect(forkReason({ jobs: 0, actionsEnabled: true, branch: 'test/x' })).toBe('none-yet');
    expect(forkReason({ jobs: 1, actionsEnabled: false, branch: 'x' })).toBeNull();
  });

  it('--wait keeps polling while a job runs or a place may still get runs; a reason that stays is settled', () => {
    const idle = summarize([job('passed')]);
    expect(isSettled(idle, { pullRequest: 'no-pull-request', fork: 'branch-not-triggered' })).toBe(true);
    expect(isSettled(idle, { pullRequest: 'awaiting-approval', fork: null })).toBe(false);
    expect(isSettled(idle, { pullRequest: null, fork: 'none-yet' })).toBe(false);
    expect(isSettled(summarize([job('running')]), { pullRequest: null, fork: null })).toBe(false);
  });
});
