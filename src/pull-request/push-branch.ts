import type { Git } from '../adapters/git.js';
import { isInterrupted } from '../adapters/interrupt.js';
import { withLock } from '../adapters/lock.js';
import { formatItems, type ReportItem } from '../core/report-items.js';
import { UserError } from '../core/errors.js';
import { githubRepoOf, leaseRef, parseRepoLocation } from './fork-refs.js';
import { inspectCheckout, requireAppliedCheckout, type AppliedCheckout } from '../series/checkout.js';
import type { Context } from '../series/context.js';
import { verifySeriesNotEmpty } from '../series/plan.js';
import { refreshFork, resolveFork, type ForkTarget, type RefreshOptions, type RefreshOutcome } from './fork.js';
import { findToken, ghHostOf, tokenInEnv, withoutSecret } from './token.js';
import { makeUserCommit, prepareUserCommit, type CommitInputs, type UserCommit } from './commit.js';
import { apiUrlOf, openPullRequest, prepareOpen, type PullRequestOutcome } from './open.js';
import { readinessItems, type ReadinessItemsOptions, type ReusedChecks } from '../readiness/readiness-report.js';

export interface PrOptions extends ReadinessItemsOptions {
  /** `--fork`: a URL, a path or a remote of the checkout. */
  fork: string;
  /** `--branch`; default: the config's `branch`. */
  branch?: string | undefined;
  dryRun?: boolean | undefined;
  /** Replace a branch that holds work the tool did not push (its tip is kept under a backup ref first). */
  force?: boolean | undefined;
  /** Push without running verify's checks. */
  skipChecks?: boolean | undefined;
  /** Run verify's checks even when a passing run saved for exactly the same inputs could stand in for them. */
  recheck?: boolean | undefined;
  /** Create or update the pull request through the GitHub API. */
  open?: boolean | undefined;
  draft?: boolean | undefined;
  forkOwner?: string | undefined;
  apiUrl?: string | undefined;
  /** `--token-env`: the variable that holds the token. */
  tokenEnv?: string | undefined;
  /** `--allow-second-pr`: open a pull request even when the user has another open upstream. */
  allowSecondPr?: boolean | undefined;
}

export interface PrData {
  command: 'pr';
  status: RefreshOutcome['status'];
  branch: string;
  /** `--fork` as given (a remote's name, a URL or a path). */
  remote: string;
  /** The URL pushed to. */
  url: string;
  /** The commit the branch holds (unchanged: the fork's own, equal in content; dry run: the one it would get). */
  commit: string;
  /** The branch tip before the refresh, or null when there was no branch. */
  previous: string | null;
  subject: string;
  author: string;
  committer: string;
  /** The ref on the fork that keeps the id pushed last. */
  leaseRef: string;
  backup: RefreshOutcome['backup'];
  /** verify's checks as they ran, or as the reused run reported them; null with --skip-checks. */
  checks: ReportItem[] | null;
  /**
   * The saved passing run of verify's checks that stood in for them, because
   * everything they read is the same (`inputs`: the short name of those
   * inputs); null when the checks ran (or with --skip-checks).
   */
  checksReused: ReusedChecks | null;
  /** Check ids left out with --skip. */
  skipped: string[];
  pullRequest: PullRequestOutcome | null;
  /**
   * The page that opens the pull request on GitHub, no token needed
   * (`https://<host>/<upstream>/compare/<owner>:<branch>?expand=1`); null when
   * the upstream or the fork owner is not known as a GitHub repository.
   */
  compareUrl: string | null;
}

/** Refuses a checkout with edits of its own: the pushed commit holds only templates/ and patches/. */
async function verifyNoLocalEdits(git: Git): Promise<void> {
  const dirty = await git.status();
  if (dirty.length === 0) return;
  throw new UserError(
    'DIRTY_CHECKOUT',
    `The checkout has edits that are not in templates/ or patches/, so the pushed commit would not hold them:\n  ${dirty.map((e) => `${e.code} ${e.path}`).join('\n  ')}`,
    {
      hint: 'Move them into templates/ or patches/ and run `mlx-storage-pr apply`; or drop them with `mlx-storage-pr reset` (which saves them first) and `mlx-storage-pr apply`. Nothing was pushed.',
      details: { dirty: dirty.map((e) => e.path) },
    },
  );
}

/**
 * Refreshes the pull request's branch on the user's fork and, when asked,
 * the pull request itself. In order: the checkout holds the current series
 * and nothing else; the commit message, the identity, the fork and the
 * branch are usable (and, for --open, the description and the token); verify's
 * checks pass (a passing run saved for the same inputs stands in for them;
 * build checks use the saved results of this series when there are any); then, under the workdir lock, the commit is made and the
 * branch refreshed in one atomic push; then the pull request.
 */
export async function refreshPullRequest(ctx: Context, options: PrOptions): Promise<PrData> {
  // `gh auth token` only for --open: a push over https uses git's own credentials (`gh auth setup-git`) without one.
  const token = options.open
    ? await findToken(ctx.env, ctx.log, { tokenEnv: options.tokenEnv, host: ghHostOf(apiUrlOf(ctx, options.apiUrl)) })
    : tokenInEnv(ctx.env, options.tokenEnv);
  try {
    return await run(ctx, options, token?.value ?? null);
  } catch (error) {
    throw token === null ? error : withoutSecret(error, token.value);
  }
}

/** The GitHub page that opens a pull request from `<owner>:<branch>` into the upstream default branch. */
function compareUrlOf(ctx: Context, fork: ForkTarget, branch: string, forkOwner: string | undefined): string | null {
  const upstream = githubRepoOf(parseRepoLocation(ctx.config.upstream.url, ctx.cwd));
  const owner = forkOwner ?? githubRepoOf(fork.location)?.owner;
  if (upstream === null || owner === undefined || owner === '') return null;
  return `https://${upstream.host}/${upstream.owner}/${upstream.repo}/compare/${owner}:${branch}?expand=1`;
}

/** The work of `refreshPullRequest`, with the token found (null: none). */
async function run(ctx: Context, options: PrOptions, token: string | null): Promise<PrData> {
  const need = { hint: ', so the pushed commit is what templates/ and patches/ say.' };
  verifySeriesNotEmpty((await ctx.project()).plan, 'pr');
  const applied = await requireAppliedCheckout(ctx, need);
  const git = applied.git;
  await verifyNoLocalEdits(git);

  const inputs = await prepareUserCommit(ctx, git);
  const fork = await resolveFork(ctx, git, options.fork);
  const branch = options.branch ?? ctx.config.branch;
  if (!(await git.isValidBranchName(branch)))
    throw new UserError('USAGE', `--branch ${branch} is not a valid branch name.`, {
      hint: 'For example --branch my-change (letters, digits, ".", "_", "-" and "/").',
    });
  const open = options.open
    ? await prepareOpen(ctx, {
        fork,
        branch,
        forkOwner: options.forkOwner,
        apiUrl: options.apiUrl,
        token,
        allowSecond: options.allowSecondPr,
      })
    : null;

  const { checks, skipped, reused } = await requireChecksPass(ctx, options);
  const refreshed = await withLock(ctx.workdir, 'pr', () =>
    commitAndPush(ctx, applied, inputs, {
      fork,
      branch,
      force: options.force === true,
      dryRun: options.dryRun === true,
      token,
    }),
  );

  // Ctrl-C after the push: the push stands, the pull request is left for the next run.
  if (open && isInterrupted())
    ctx.log.warn(
      'Ctrl-C came before the pull request was created or updated, so it was not: run the same command again (the branch will be unchanged).',
    );
  const pullRequest =
    open && !isInterrupted()
      ? await openPullRequest(open, {
          title: refreshed.commit.subject,
          draft: options.draft !== false,
          dryRun: options.dryRun === true,
          log: ctx.log,
        })
      : null;

  return {
    command: 'pr',
    status: refreshed.outcome.status,
    branch,
    remote: fork.given,
    url: fork.url,
    commit: refreshed.outcome.commit,
    previous: refreshed.outcome.previous,
    subject: refreshed.commit.subject,
    author: refreshed.commit.author,
    committer: refreshed.commit.committer,
    leaseRef: leaseRef(branch),
    backup: refreshed.outcome.backup,
    checks,
    checksReused: reused,
    skipped,
    pullRequest,
    compareUrl: compareUrlOf(ctx, fork, branch, options.forkOwner),
  };
}

/**
 * Runs verify's checks (unless --skip-checks) and logs them; a required check
 * that does not pass stops the push. A passing run saved for exactly the same
 * inputs (by verify or an earlier pr) stands in for them unless --recheck.
 * Returns the checks (null when skipped), the ids left out with --skip and
 * the run reused (null when they ran).
 */
async function requireChecksPass(
  ctx: Context,
  options: PrOptions,
): Promise<{ checks: ReportItem[] | null; skipped: string[]; reused: ReusedChecks | null }> {
  if (options.skipChecks) {
    ctx.log.warn("--skip-checks: verify's checks did not run; the pushed commit is not checked.");
    return { checks: null, skipped: [], reused: null };
  }
  const { checks, skipped, ready, reused } = await readinessItems(ctx, options, {
    command: 'pr',
    reuse: options.recheck !== true,
  });
  if (!ready) {
    const failing = checks.filter((c) => c.required && c.status !== 'pass');
    throw new UserError(
      'CHECK_FAILED',
      `${failing.length} required check(s) of verify did not pass, so nothing was pushed:\n${formatItems(failing).join('\n')}`,
      {
        hint: 'Fix each (the fix is under it; `mlx-storage-pr verify` reports them all), or leave checks out with --skip <name> or --skip-checks.',
        details: { checks },
      },
    );
  }
  for (const line of formatItems(checks)) ctx.log.info(line);
  return { checks, skipped, reused };
}

/**
 * Under the workdir lock: checks that the checkout still holds what the checks
 * checked, makes the pull request's commit and refreshes the branch on the fork.
 */
async function commitAndPush(
  ctx: Context,
  applied: AppliedCheckout,
  inputs: CommitInputs,
  o: Pick<RefreshOptions, 'fork' | 'branch' | 'force' | 'dryRun' | 'token'>,
): Promise<{ commit: UserCommit; outcome: RefreshOutcome }> {
  const git = applied.git;
  // The checks ran without the lock: the checkout must still hold what they checked.
  const now = await inspectCheckout(ctx);
  if (now.current?.head.commit !== applied.head.commit)
    throw new UserError('NOT_APPLIED', 'The checkout changed while the checks ran.', {
      hint: 'Run `mlx-storage-pr pr` again. Nothing was pushed.',
    });
  await verifyNoLocalEdits(git);
  const commit = await makeUserCommit(git, inputs, applied.head.tree, ctx.config.upstream.commit);
  const outcome = await refreshFork(ctx, git, { ...o, commit, now: new Date() });
  return { commit, outcome };
}
