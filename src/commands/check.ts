import { checkExitCode, checkLines, checkMarkdown, type CheckData } from '../upkeep/drift-report.js';
import { UserError } from '../core/errors.js';
import { verifyRevisionOption } from '../core/git-values.js';
import type { Sanitizer } from '../suite/sanitize.js';
import { loadContext } from '../series/context.js';
import { verifyDepsDir } from '../suite/offline-deps.js';
import { checkAgainst } from '../upkeep/drift.js';
import { canConnect } from '../adapters/network.js';
import { githubRepoOf, parseRepoLocation } from '../pull-request/fork-refs.js';
import { apiClient, apiUrlOf, verifyApiUrl } from '../pull-request/open.js';
import { findToken, ghHostOf } from '../pull-request/token.js';
import type { Context } from '../series/context.js';
import { checkOpenPullRequests, type GitHubAccess } from '../upkeep/open-prs.js';
import { openPrsExitCode, openPrsLines, openPrsMarkdown, type OpenPrsData } from '../upkeep/open-prs-report.js';
import { buildOptions, jobsOption } from './options.js';
import { afterDashes, type CommandResult, defineCommand, type GlobalOptions, parseJobs } from './spec.js';

export const checkCommand = defineCommand({
  name: 'check',
  describe:
    'Drift check: apply the series to other MLX commits (branches, tags, commit ids) and report each template and patch; --build also tests them',
  builder: (y) =>
    jobsOption(
      buildOptions(
        y
          .option('against', {
            type: 'string',
            array: true,
            describe:
              'MLX branches, tags or commit ids to apply the series to (fetched from the MLX source when missing)',
          })
          .option('open-prs', {
            type: 'boolean',
            default: false,
            describe:
              "Instead of --against: the open upstream pull requests that change a file of the series, each checked merged (GitHub's API when it answers, else the source's refs/pull/*/merge)",
          })
          .option('open-prs-from', {
            type: 'string',
            choices: ['auto', 'github', 'source'] as const,
            default: 'auto',
            describe:
              "With --open-prs: where the pull requests come from: github (the API, else fail), source (the MLX source's refs/pull/*/merge; open state unknown) or auto (github when it answers, else source)",
          })
          .option('limit', {
            type: 'string',
            placeholder: 'n',
            describe: 'With --open-prs: look at the <n> most recent pull requests (highest numbers; default 30)',
          })
          .option('budget', {
            type: 'string',
            placeholder: 'minutes',
            describe:
              'With --open-prs: check no further pull request after this many minutes (default 15; 0: list them only); those left are "could not check"',
          })
          .option('api-url', {
            type: 'string',
            describe: 'With --open-prs: GitHub API base URL (env GITHUB_API_URL; default https://api.github.com)',
          })
          .option('token-env', {
            type: 'string',
            describe:
              'With --open-prs: the environment variable that holds the GitHub token (default: GH_TOKEN, then GITHUB_TOKEN, then `gh auth token`; none: read unauthenticated)',
          })
          .option('build', {
            type: 'boolean',
            default: false,
            describe:
              'On each commit the series applies to, build and run the suite as `test` does, against that commit (the build options need it)',
          })
          .option('tests', { type: 'string', describe: 'With --build: doctest filter, as for `test`' }),
      ).option('metal-twin', {
        type: 'boolean',
        default: false,
        describe: 'With --build: also run the Metal-only cases on the host twin, as `test --metal-twin`',
      }),
      'Commits to check at once (default: the number of CPUs)',
    )
      .check((argv) => {
        if (argv.tests !== undefined && argv.tests.trim() === '')
          throw new Error('--tests needs a doctest filter, e.g. --tests "test my op*".');
        return true;
      })
      .option('markdown', {
        type: 'boolean',
        default: false,
        describe: 'Print the report as Markdown (for a CI job summary) instead of plain lines',
      })
      .example('$0 check --against main v0.32.0', "upstream's default branch and a release")
      .example('$0 check --against main --markdown >> "$GITHUB_STEP_SUMMARY"', 'the report in a GitHub job summary')
      .example('$0 check --against main --build --offline', 'also build and run the suite on it')
      .example('$0 check --open-prs --limit 50', 'the series on each open upstream pull request that shares a file')
      .epilog(
        'Each template and patch is clean, three-way (applies only with a three-way merge), already-upstream or conflict; ' +
          'each reason names the file and hunk, and says upstream_changed (upstream changed the file: it differs from the pinned commit) or ' +
          'patch_changed (the file is as at the pinned commit: the patch itself does not apply). The checkout in the workdir is never ' +
          'touched: the commits are fetched (depth 1) into <workdir>/check/. Exit 4 when a patch does not apply to some commit, even ' +
          'with a three-way merge; with --build, 8 when tests fail; 0 otherwise. --open-prs: 4 when the series conflicts with a pull request ' +
          'merged, else 5 when one could not be checked, else 0.',
      ),
  run: (o) =>
    check({
      ...o,
      against: (o.against ?? []).map(String),
      openPrsFrom: o.openPrsFrom,
      cmakeArgs: afterDashes(o),
      jobs: parseJobs(o.jobs),
    }),
});

interface CheckCommandOptions extends GlobalOptions {
  against: string[];
  build: boolean;
  tests?: string | undefined;
  debug: boolean;
  offline: boolean;
  metalTwin: boolean;
  depsDir?: string | undefined;
  sanitize?: Sanitizer | undefined;
  cxx?: string | undefined;
  cmakeArgs: string[];
  jobs?: number | undefined;
  markdown: boolean;
  openPrs: boolean;
  openPrsFrom: 'auto' | 'github' | 'source';
  limit?: string | undefined;
  budget?: string | undefined;
  apiUrl?: string | undefined;
  tokenEnv?: string | undefined;
}

async function check(options: CheckCommandOptions): Promise<CommandResult<CheckData | OpenPrsData>> {
  const openPrsOnly = [
    options.openPrsFrom !== 'auto' && '--open-prs-from',
    options.limit !== undefined && '--limit',
    options.budget !== undefined && '--budget',
    options.apiUrl !== undefined && '--api-url',
    options.tokenEnv !== undefined && '--token-env',
  ].filter((o): o is string => typeof o === 'string');
  if (options.openPrs) return checkOpenPrs(options);
  if (openPrsOnly.length > 0)
    throw new UserError('USAGE', `${openPrsOnly.join(', ')}: only with --open-prs.`, {
      hint: 'Add --open-prs to check the open upstream pull requests, or leave them out.',
    });
  if (options.against.length === 0)
    throw new UserError('USAGE', 'check needs --against <refs> or --open-prs.', {
      hint: 'For example: check --against main v0.31.0, or check --open-prs.',
    });
  for (const ref of options.against) verifyRevisionOption('--against', ref.trim());
  const buildOnly = [
    options.tests !== undefined && '--tests',
    options.debug && '--debug',
    options.offline && '--offline',
    options.metalTwin && '--metal-twin',
    options.depsDir !== undefined && '--deps-dir',
    options.sanitize !== undefined && '--sanitize',
    options.cxx !== undefined && '--cxx',
    options.cmakeArgs.length > 0 && 'CMake arguments after --',
  ].filter((o): o is string => typeof o === 'string');
  if (!options.build && buildOnly.length > 0) {
    throw new UserError('USAGE', `${buildOnly.join(', ')}: only with --build.`, {
      hint: 'Add --build to build and test each commit, or leave them out.',
    });
  }
  if (options.build) verifyDepsDir(options.cwd, options.depsDir);
  const ctx = await loadContext(options);
  const data = await checkAgainst(ctx, {
    against: options.against,
    jobs: options.jobs,
    build: options.build
      ? {
          tests: options.tests,
          debug: options.debug,
          offline: options.offline,
          metalTwin: options.metalTwin,
          depsDir: options.depsDir,
          sanitize: options.sanitize,
          cxx: options.cxx,
          cmakeArgs: options.cmakeArgs,
        }
      : undefined,
  });
  return {
    data,
    lines: options.markdown ? checkMarkdown(data) : checkLines(data),
    exitCode: checkExitCode(data.refs),
  };
}

/** A whole number of at least `min`, or a usage error naming the option. */
function wholeNumber(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value.trim()) || Number(value) < min)
    throw new UserError('USAGE', `${name} must be a whole number of at least ${min} (got "${value}").`, {
      hint: `For example ${name} ${fallback}.`,
    });
  return Number(value);
}

async function checkOpenPrs(options: CheckCommandOptions): Promise<CommandResult<OpenPrsData>> {
  const clash = [options.against.length > 0 && '--against', options.build && '--build (and its options)'].filter(
    (o): o is string => typeof o === 'string',
  );
  if (clash.length > 0)
    throw new UserError('USAGE', `--open-prs does not go with ${clash.join(', ')}.`, {
      hint: 'Run check --open-prs and check --against <refs> one after the other.',
    });
  const limit = wholeNumber('--limit', options.limit, 30, 1);
  const budget = wholeNumber('--budget', options.budget, 15, 0);
  const ctx = await loadContext(options);
  const github =
    options.openPrsFrom === 'source'
      ? { unavailable: 'asked for (--open-prs-from source)' }
      : await gitHubAccess(ctx, options);
  const data = await checkOpenPullRequests(ctx, {
    limit,
    budgetMs: budget * 60_000,
    jobs: options.jobs,
    github,
  });
  const prs = data.openPrs.pullRequests;
  return {
    data,
    lines: options.markdown ? openPrsMarkdown(data) : openPrsLines(data),
    exitCode: openPrsExitCode(prs),
  };
}

/**
 * GitHub's API for --open-prs, with the token rules of `pr --open`: the API
 * URL is https (or http on this machine), the token comes from --token-env,
 * GH_TOKEN, GITHUB_TOKEN or `gh auth token` and is sent when there is one.
 * With `auto`, an API that cannot be reached is the reason to use the
 * source's refs instead.
 */
async function gitHubAccess(ctx: Context, options: CheckCommandOptions): Promise<GitHubAccess> {
  const required = options.openPrsFrom === 'github';
  const apiUrl = apiUrlOf(ctx, options.apiUrl);
  verifyApiUrl(apiUrl, ctx.cwd);
  const upstream = githubRepoOf(parseRepoLocation(ctx.config.upstream.url, ctx.cwd));
  const refuse = (why: string): GitHubAccess => {
    if (required)
      throw new UserError('GITHUB_API_FAILED', `--open-prs-from github: ${why}.`, {
        hint: 'Check the network and --api-url (or GITHUB_API_URL), or use --open-prs-from source with a mirror that holds refs/pull/*.',
      });
    ctx.log.warn(`${why}: listing the source's refs/pull/*/merge instead`);
    return { unavailable: why };
  };
  if (upstream === null) return refuse(`upstream.url (${ctx.config.upstream.url}) is not a GitHub repository`);
  const url = new URL(apiUrl);
  const port = url.port ? Number(url.port) : url.protocol === 'http:' ? 80 : 443;
  const reach = await canConnect(url.hostname, port, 10_000);
  if (!reach.ok) return refuse(`GitHub's API ${apiUrl} cannot be reached (${reach.reason})`);
  const token = await findToken(ctx.env, ctx.log, { tokenEnv: options.tokenEnv, host: ghHostOf(apiUrl) });
  if (token === null) ctx.log.info('No GitHub token: reading the API unauthenticated (60 requests an hour)');
  return {
    client: apiClient(apiUrl, token?.value ?? null, ctx.log),
    repo: { owner: upstream.owner, repo: upstream.repo },
    apiUrl,
    required,
  };
}
