import os from 'node:os';

import { withUpstreamCi } from '../core/upstream-ci.js';
import { SKIP_NAMES } from '../core/verify-skip.js';
import { afterDashes, defineCommand, jobsOption, parseJobs, type CommandSpec } from './spec.js';

export const prSpec: CommandSpec = defineCommand({
  name: 'pr',
  describe:
    "Push the PR's commit (your message and identity on the applied series) to your fork, after verify's checks; --open creates or updates the pull request",
  builder: (y) =>
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
      .option('offline', { type: 'boolean', default: false, describe: 'Build without network, as `test --offline`' })
      .option('deps-dir', { type: 'string', describe: 'Folder with local copies of dependencies, as for `test`' })
      .option('debug', { type: 'boolean', default: false, describe: 'Debug build instead of Release, as for `test`' })
      .option('upstream-ci', {
        type: 'boolean',
        default: false,
        describe: "Build as MLX's Linux CI does, as `test --upstream-ci`",
      })
      .option('metal-cpp', { type: 'string', describe: "Apple's metal-cpp 26 for the Metal type-check, as for verify" })
      .option('require-metal', {
        type: 'boolean',
        default: false,
        describe: 'Fail when the Metal type-check cannot run, as for verify',
      })
      .option('jobs', jobsOption('Compilers to run at once for the Metal type-check', os.availableParallelism()))
      .option('include', { type: 'string', array: true, describe: 'Extra -isystem folder for the Metal type-check' })
      .example(
        '$0 pr --push --fork fork --dry-run',
        'with a remote "fork" in the checkout: check and compare, push nothing',
      )
      .example('$0 pr --push --fork fork --offline', 'refresh the branch; build checks without network')
      .example('$0 pr --push --fork fork --open', 'and create or update the draft pull request (token in GH_TOKEN)')
      .epilog(
        'The commit: the applied tree on the pinned commit, message pr/commit-message.txt verbatim, author and committer from ' +
          'GIT_AUTHOR_*/GIT_COMMITTER_* or git config. The fork keeps the id pushed last in refs/mlx-storage-pr/pushed/<branch>; a branch ' +
          'that holds anything else is refused (commits named) unless --force. The token comes from GH_TOKEN or GITHUB_TOKEN and reaches ' +
          "git through the environment only. By default verify's checks must pass first; the build checks use the saved results of `test` " +
          'and verify for this series when there are any.',
      ),
  load: async () => {
    const { pr } = await import('../commands/pr.js');
    return (o) =>
      pr({
        ...o,
        push: o.push === true,
        fork: o.fork,
        branch: o.branch,
        dryRun: o.dryRun === true,
        force: o.force === true,
        skipChecks: o.skipChecks === true,
        skip: o.skip,
        open: o.open === true,
        draft: o.draft !== false,
        forkOwner: o.forkOwner,
        apiUrl: o.apiUrl,
        offline: o.offline === true,
        depsDir: o.depsDir,
        metalCpp: o.metalCpp,
        requireMetal: o.requireMetal === true,
        jobs: parseJobs(o.jobs),
        include: o.include,
        ...withUpstreamCi({ debug: o.debug === true, cmakeArgs: afterDashes(o) }, o.upstreamCi === true),
      });
  },
});
