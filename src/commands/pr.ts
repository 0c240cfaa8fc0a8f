import type { Argv } from '../core/command-line.js';

import { UserError } from '../core/errors.js';
import { verifyBranchOption, verifyNotOption } from '../core/git-values.js';
import { withUpstreamCi } from '../suite/upstream-ci.js';
import { SKIP_NAMES } from '../readiness/skip.js';
import { refreshPullRequest, type PrData, type PrOptions } from '../pull-request/push-branch.js';
import { readCiStatus, type CiData } from '../pull-request/ci-status.js';
import { loadContext } from '../series/context.js';
import { verifyDepsDir } from '../suite/offline-deps.js';
import { ciExitCode, forkReasonText, pullRequestReasonText, summaryText } from '../pull-request/ci-report.js';
import { buildOptions, metalOptions, upstreamCiOption } from './options.js';
import { afterDashes, type CommandResult, defineCommand, type GlobalOptions, parseJobs } from './spec.js';

interface PrCommandOptions extends GlobalOptions, Omit<PrOptions, 'fork'> {
  push: boolean;
  fork?: string | undefined;
  ci?: boolean | undefined;
  /** `--wait [minutes]` as given ('' for the bare flag). */
  wait?: string | undefined;
}

/** Minutes `--wait` polls when given no number. */
const DEFAULT_WAIT_MINUTES = 60;
/** Between two polls of `--wait`. */
const POLL_MS = 30_000;

/** The options of the GitHub side: the pull request (--open) and the CI of the pushed commit (--ci). */
function gitHubOptions<T>(y: Argv<T>) {
  return y
    .option('open', {
      type: 'boolean',
      default: false,
      describe: 'Also create or update the pull request through the GitHub API (needs --push and a token)',
    })
    .option('draft', {
      type: 'boolean',
      default: true,
      describe: 'Create the pull request as a draft (the default; --no-draft: ready for review)',
    })
    .option('fork-owner', {
      type: 'string',
      describe:
        "The fork owner's GitHub login, when the fork's URL does not say it (the PR's head is <owner>:<branch>)",
    })
    .option('api-url', {
      type: 'string',
      describe: 'GitHub API base URL (env GITHUB_API_URL; default https://api.github.com)',
    })
    .option('token-env', {
      type: 'string',
      describe:
        'The environment variable that holds the GitHub token (default: GH_TOKEN, then GITHUB_TOKEN, then `gh auth token`)',
    })
    .option('allow-second-pr', {
      type: 'boolean',
      default: false,
      describe:
        'With --open: open the pull request even when you have another open one upstream (MLX closes the second of an outside contributor)',
    })
    .option('ci', {
      type: 'boolean',
      default: false,
      describe:
        'Show the check runs and statuses of the commit pushed last, on the pull request and on the fork (pushes nothing; exit 0 passed, 8 failed, 11 running)',
    })
    .option('wait', {
      type: 'string',
      describe: `With --ci: poll every 30 s while jobs are queued or running, for at most this many minutes (default ${DEFAULT_WAIT_MINUTES})`,
    });
}

export const prCommand = defineCommand({
  name: 'pr',
  describe:
    "Push the PR's commit (your message and identity on the applied series) to your fork, after verify's checks; --open creates or updates the pull request",
  builder: (y) =>
    metalOptions(
      upstreamCiOption(
        buildOptions(
          gitHubOptions(
            y
              .option('push', {
                type: 'boolean',
                default: false,
                describe: 'Push the branch to your fork (nothing is pushed without it)',
              })
              .option('fork', {
                type: 'string',
                describe: 'Your fork: a URL, a local path or a remote of the checkout (never the upstream repository)',
              })
              .option('branch', { type: 'string', describe: 'Branch on the fork (default: "branch" in the config)' })
              .option('dry-run', {
                type: 'boolean',
                default: false,
                describe: 'Run the checks and compare with the fork; push and send nothing',
              })
              .option('force', {
                type: 'boolean',
                default: false,
                describe:
                  'Replace a branch that holds commits the tool did not push; its tip is first kept under a backup ref on the fork',
              })
              .option('skip-checks', {
                type: 'boolean',
                default: false,
                describe: "Push without running verify's checks (a warning says so)",
              })
              .option('skip', {
                type: 'string',
                array: true,
                choices: SKIP_NAMES,
                describe: "Leave out some of verify's checks, as verify --skip",
              })
              .option('recheck', {
                type: 'boolean',
                default: false,
                describe:
                  "Run verify's checks even when a passing run of them with the same inputs is saved (by verify or an earlier pr)",
              }),
          ),
        ),
      ),
    )
      .example(
        '$0 pr --push --fork fork --dry-run',
        'with a remote "fork" in the checkout: check and compare, push nothing',
      )
      .example('$0 pr --push --fork fork --offline', 'refresh the branch; build checks without network')
      .example('$0 pr --push --fork fork --open', 'and create or update the draft pull request (token in GH_TOKEN)')
      .example('$0 pr --ci --fork fork --wait', "wait for the CI of the pushed commit (the PR's and the fork's)")
      .epilog(
        'The commit: the applied tree on the pinned commit, message pr/commit-message.txt verbatim, author and committer from ' +
          'GIT_AUTHOR_*/GIT_COMMITTER_* or git config. The fork keeps the id pushed last in refs/mlx-storage-pr/pushed/<branch>; a branch ' +
          'that holds anything else is refused (commits named) unless --force. The token comes from --token-env, GH_TOKEN or GITHUB_TOKEN ' +
          '(--open and --ci: then `gh auth token`) and reaches ' +
          "git through the environment only. By default verify's checks must pass first: a passing run of verify (or pr) with exactly " +
          'the same inputs (series, applied commit, pr/, config, mutants, options, tools) stands in for them, and says so (--recheck runs ' +
          'them again); otherwise the build checks use the saved results of `test` and verify for this series when there are any.',
      ),
  run: (o) =>
    pr({
      ...o,
      skip: o.skip,
      jobs: parseJobs(o.jobs),
      sanitize: o.sanitize,
      cxx: o.cxx,
      upstreamCi: o.upstreamCi,
      ...withUpstreamCi({ debug: o.debug, cmakeArgs: afterDashes(o) }, o.upstreamCi),
    }),
});

async function pr(options: PrCommandOptions): Promise<CommandResult<PrData | CiData>> {
  // Before any work: both become git arguments (the fork a URL or remote, the branch a ref on the fork).
  if (options.fork !== undefined) verifyNotOption('--fork', options.fork);
  if (options.branch !== undefined) verifyBranchOption('--branch', options.branch);
  if (options.ci) return prCi(options);
  if (options.wait !== undefined)
    throw new UserError('USAGE', '--wait needs --ci: it waits for the CI of the pushed commit.', {
      hint: 'Push first (`pr --push --fork <fork>`), then `pr --ci --fork <fork> --wait`.',
    });
  // Every push is the user's explicit act: the flag, and the fork named.
  if (!options.push)
    throw new UserError('USAGE', 'pr pushes only when asked: add --push (and --fork <url|remote>).', {
      hint: 'For example `mlx-storage-pr pr --push --fork https://github.com/<you>/mlx.git --dry-run` shows what it would do.',
    });
  if (options.fork === undefined)
    throw new UserError(
      'USAGE',
      '--push needs --fork: the URL of your fork, a local path or a remote of the checkout.',
      {
        hint: 'For example --fork https://github.com/<you>/mlx.git. The upstream repository is never a target.',
      },
    );
  if (options.recheck && options.skipChecks)
    throw new UserError(
      'USAGE',
      "--recheck runs verify's checks again and --skip-checks runs none: give one of them.",
      {
        hint: 'Leave out --skip-checks to check the commit before it is pushed (--recheck: even when a passing run with the same inputs is saved).',
      },
    );
  verifyDepsDir(options.cwd, options.depsDir);
  const ctx = await loadContext(options);
  const data = await refreshPullRequest(ctx, { ...options, fork: options.fork });
  return { data, lines: prLines(data) };
}

/** `--wait` in minutes: the bare flag is the default; anything but a number above 0 is a usage error. */
function parseWait(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === '') return DEFAULT_WAIT_MINUTES;
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || Number(value) <= 0)
    throw new UserError('USAGE', `--wait must be a number of minutes above 0 (got "${value}").`, {
      hint: `For example --wait 30, or --wait alone for ${DEFAULT_WAIT_MINUTES} minutes.`,
    });
  return Number(value);
}

/** `pr --ci`: a report of the pushed commit's CI; it pushes and sends nothing. */
async function prCi(options: PrCommandOptions): Promise<CommandResult<CiData>> {
  if (options.push || options.open)
    throw new UserError(
      'USAGE',
      `--ci reads the CI of the commit pushed last and pushes nothing; it does not go with --${options.push ? 'push' : 'open'}.`,
      {
        hint: 'Run them one after the other: `mlx-storage-pr pr --push --fork <fork>`, then `mlx-storage-pr pr --ci --fork <fork> --wait`.',
      },
    );
  if (options.fork === undefined)
    throw new UserError(
      'USAGE',
      '--ci needs --fork: the fork the branch was pushed to (a URL, a local path or a remote of the checkout).',
      {
        hint: 'For example --fork https://github.com/<you>/mlx.git, as given to `pr --push`.',
      },
    );
  const wait = parseWait(options.wait);
  const pollMs = options.seams?.ciPollMs ?? POLL_MS;
  const ctx = await loadContext(options);
  const data = await readCiStatus(ctx, {
    fork: options.fork,
    branch: options.branch,
    forkOwner: options.forkOwner,
    apiUrl: options.apiUrl,
    tokenEnv: options.tokenEnv,
    wait,
    pollMs,
  });
  return { data, lines: ciLines(data), exitCode: ciExitCode(data.result) };
}

function ciLines(data: CiData): string[] {
  const names = {
    head: `${data.forkRepository.split('/')[0] ?? ''}:${data.branch}`,
    upstream: data.upstream,
    forkRepository: data.forkRepository,
    branch: data.branch,
    fork: data.fork,
  };
  const lines = [
    `checks of ${short(data.commit)}, the commit mlx-storage-pr pushed last to ${data.branch} on ${data.fork}`,
  ];
  if (data.branchMoved)
    lines.push(
      `the branch ${data.branch} holds ${short(data.branchTip)}, not ${short(data.commit)}, the commit mlx-storage-pr pushed last: these are the checks of ${short(data.commit)} (push again to check the branch as it is)`,
    );
  lines.push(
    data.pullRequest === null
      ? `pull request: ${data.reasons.pullRequest === null ? 'none' : pullRequestReasonText(data.reasons.pullRequest, names).text}`
      : `pull request #${data.pullRequest.number}: ${data.pullRequest.url}`,
  );
  const label = (where: string) => (where === 'fork' ? 'fork' : 'pull request');
  const width = Math.max(...data.jobs.map((j) => j.name.length));
  for (const job of data.jobs)
    lines.push(
      `  ${label(job.where).padEnd(12)}  ${job.name.padEnd(width)}  ${(job.conclusion ?? job.status).padEnd(11)}  ${job.url ?? ''}`.trimEnd(),
    );
  if (data.reasons.pullRequest !== null && data.pullRequest !== null)
    lines.push(`pull request: ${pullRequestReasonText(data.reasons.pullRequest, names).text}`);
  if (data.reasons.fork !== null) {
    const why = forkReasonText(data.reasons.fork, names);
    lines.push(`fork: ${why.text}`, `  ${why.fix}`);
  }
  lines.push(
    `${summaryText(data.summary)}${data.waited?.timedOut ? ` (stopped waiting after ${data.waited.minutes} min)` : ''}`,
  );
  return lines;
}

const short = (commit: string | null) => (commit === null ? 'none' : commit.slice(0, 12));

function prLines(data: PrData): string[] {
  const where = `${data.branch} on ${data.remote}`;
  const head = {
    created: `created: ${where} at ${short(data.commit)}`,
    updated: `updated: ${where}, ${short(data.previous)} -> ${short(data.commit)}`,
    unchanged: `unchanged: ${where} is at ${short(data.commit)}, with the same tree, parent and message; nothing pushed`,
    'would-create': `[dry run] would create ${where} at a new commit`,
    'would-update': `[dry run] would update ${where} from ${short(data.previous)}`,
  }[data.status];
  const lines = [head, `  ${data.subject}`, `  author ${data.author}, committer ${data.committer}`];
  if (data.checks === null) lines.push("  verify's checks: not run (--skip-checks)");
  else {
    const reused = data.checksReused;
    const from =
      reused === null
        ? ''
        : ` (the result of ${reused.command} at ${reused.at} for the same inputs, ${reused.inputs}; --recheck runs them again)`;
    lines.push(
      `  verify's checks: ${data.checks.filter((c) => c.status === 'pass').length} passed${from}${data.skipped.length ? `, left out (--skip): ${data.skipped.join(', ')}` : ''}`,
    );
  }
  if (data.backup) {
    lines.push(
      `${data.status.startsWith('would') ? 'would keep' : 'kept'} the previous tip ${short(data.backup.commit)} on the fork as ${data.backup.ref}; get it back with:`,
      ...data.backup.restore.map((c) => `  ${c}`),
    );
  }
  const pull = data.pullRequest;
  if (pull) {
    const where = pull.url ?? `${pull.repository} from ${pull.head}`;
    const what = {
      created: `pull request created${pull.draft ? ' as a draft' : ''}: ${where}`,
      updated: `pull request updated (${pull.changed.join(', ')}): ${where}`,
      unchanged: `pull request unchanged: ${where}`,
      'would-create': `[dry run] would create a ${pull.draft ? 'draft ' : ''}pull request into ${pull.repository}:${pull.base} from ${pull.head}`,
      'would-update': `[dry run] would update the pull request (${pull.changed.join(', ')}): ${where}`,
    }[pull.status];
    lines.push(what);
  } else if (data.compareUrl !== null && !data.status.startsWith('would')) {
    lines.push(`open the pull request on GitHub (no token needed): ${data.compareUrl}`);
  }
  return lines;
}
