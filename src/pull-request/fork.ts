import { existsSync } from 'node:fs';

import type { Env } from '../adapters/env.js';
import { fileIdentity } from '../adapters/files.js';
import { Git } from '../adapters/git.js';
import { markCompleted, markInFlight, pausePoint } from '../adapters/interrupt.js';
import type { Logger } from '../adapters/log.js';
import { lastLines, ProcessError, quote } from '../adapters/process-error.js';
import { realPath } from '../series/project-files.js';
import { UserError } from '../core/errors.js';
import {
  fetchedRefs,
  forkBackupRef,
  hasHttpUser,
  pushUrlOf,
  leaseRef,
  parseRepoLocation,
  planRefresh,
  redactSecrets,
  repositoryKey,
  sameContent,
  tokenHeaderEnv,
  type ForkState,
  type RepoLocation,
} from './fork-refs.js';
import type { Context } from '../series/context.js';
import type { UserCommit } from './commit.js';

/** Where the branch goes: the user's fork, named by a URL, a path or a remote of the checkout. */
export interface ForkTarget {
  /** What the user gave (`--fork`). */
  given: string;
  /** The remote of the checkout it names, or null for a URL or path. */
  remote: string | null;
  /** The URL git pushes to. */
  url: string;
  location: RepoLocation;
}

/** A location with local paths resolved through symlinks, so two names of one folder compare equal. */
function realLocation(url: string, cwd: string): RepoLocation {
  const location = parseRepoLocation(url, cwd);
  return location.kind === 'file' ? { kind: 'file', path: realPath(location.path) } : location;
}

/**
 * What a push to `location` reaches, as one string however it is spelled. A
 * local repository is its object store (the folder git names as its common
 * dir, by device and inode): a linked worktree, its folder under
 * `.git/worktrees/`, a folder whose `.git` file points at it, a symlink and a
 * bind mount all give the store's. A path git would not read as a repository
 * keeps its resolved path. A network location is its normalized host and path.
 */
async function repositoryIdentity(ctx: Context, location: RepoLocation): Promise<string> {
  if (location.kind === 'network') return repositoryKey(location);
  // As git's enter_repo does: `<path>.git` when `<path>` is not there.
  const folder =
    existsSync(location.path) || !existsSync(`${location.path}.git`) ? location.path : `${location.path}.git`;
  const store = await new Git(folder, ctx.log, ctx.env).commonDir();
  const id = store === null ? null : await fileIdentity(store);
  return id === null ? repositoryKey({ kind: 'file', path: realPath(folder) }) : `store:${id}`;
}

/** The repositories the branch must never go to: the upstream URL of the config and the MLX source in use. */
async function upstreamIdentities(ctx: Context): Promise<Map<string, string>> {
  const identities = new Map<string, string>();
  identities.set(
    await repositoryIdentity(ctx, realLocation(ctx.config.upstream.url, ctx.cwd)),
    ctx.config.upstream.url,
  );
  identities.set(await repositoryIdentity(ctx, realLocation(ctx.source.location, ctx.cwd)), ctx.source.display);
  return identities;
}

/**
 * Resolves `--fork`: a remote of the checkout (each of its push URLs, with
 * insteadOf/pushInsteadOf applied), a URL (also as insteadOf rewrites it) or
 * a local path. Refuses the upstream repository in any spelling, and a URL
 * that carries a password or token.
 */
export async function resolveFork(ctx: Context, git: Git, given: string): Promise<ForkTarget> {
  if (given.trim() === '')
    throw new UserError('USAGE', '--fork is empty.', {
      hint: 'Name your fork: --fork https://github.com/<you>/mlx.git, or a remote of the checkout.',
    });
  const isRemote = (await git.remoteNames()).includes(given);
  const looksLikeUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(given) || /^[^/:]+:/.test(given);
  // Before git sees it: a token in the URL would otherwise reach the log and git's messages.
  if (!isRemote && looksLikeUrl) verifyNoHttpUser(parseRepoLocation(given, ctx.cwd), null);
  let candidates: string[];
  let url: string;
  if (isRemote) {
    candidates = await git.remotePushUrls(given);
    if (candidates.length !== 1)
      throw new UserError('USAGE', `The remote ${given} of the checkout pushes to ${candidates.length} URLs.`, {
        hint: 'Pass the URL of your fork itself: --fork <url>.',
        details: { urls: candidates.length },
      });
    url = candidates[0] as string;
  } else if (looksLikeUrl) {
    url = given;
    const expanded = await git.expandUrl(given);
    candidates = [given, expanded, pushUrlOf(given, expanded, await git.pushInsteadOfRules())];
  } else {
    const folder = realPath(parseRepoLocation(given, ctx.cwd).path);
    if (!existsSync(folder))
      throw new UserError(
        'USAGE',
        `--fork ${given} is neither a remote of the checkout, a URL nor an existing folder.`,
        {
          hint: `Pass your fork's URL (--fork https://github.com/<you>/mlx.git) or add it as a remote in ${git.dir} (git -C ${git.dir} remote add fork <url>).`,
        },
      );
    url = folder;
    candidates = [folder];
  }

  const upstream = await upstreamIdentities(ctx);
  for (const candidate of candidates) {
    // git resolves a relative path of a remote or an insteadOf rule from the checkout, where it runs.
    const location = realLocation(candidate, git.dir);
    verifyNoHttpUser(location, isRemote ? given : null);
    const match = upstream.get(await repositoryIdentity(ctx, location));
    if (match !== undefined)
      throw new UserError(
        'PUSH_TARGET_UPSTREAM',
        `${isRemote ? `The remote ${given} points to` : `${given} is`} the upstream repository (${match}), not your fork.`,
        {
          hint: 'mlx-storage-pr pushes only to your fork. Fork the repository on GitHub and pass the fork: --fork https://github.com/<you>/mlx.git (or a remote of the checkout that points to it).',
          details: { fork: isRemote ? given : null, upstream: match },
        },
      );
  }
  return { given, remote: isRemote ? given : null, url, location: realLocation(url, git.dir) };
}

/** Refuses an http(s) URL that names a user or a token, or a URL of any kind holding a password. */
function verifyNoHttpUser(location: RepoLocation, remote: string | null): void {
  if (location.kind !== 'network' || !(location.password || hasHttpUser(location))) return;
  throw new UserError(
    'USAGE',
    `The fork URL holds a user name, password or token${remote === null ? '' : ` (remote ${remote})`}; it is not printed here.`,
    {
      hint: `Give the URL without the part before @ (https://<host>/<you>/mlx.git) and set GH_TOKEN (or GITHUB_TOKEN) instead: the tool hands it to git through the environment only.${remote === null ? '' : ` Fix the remote: git remote set-url ${remote} <url without it>.`}`,
    },
  );
}

/** What a refresh did (or, in a dry run, would do) to the branch on the fork. */
export interface RefreshOutcome {
  status: 'created' | 'updated' | 'unchanged' | 'would-create' | 'would-update';
  /** The commit the branch holds afterwards (unchanged: the fork's own; dry run: the one it would get). */
  commit: string;
  /** The branch tip before, or null when the branch did not exist. */
  previous: string | null;
  backup: { ref: string; commit: string; restore: string[] } | null;
}

const TRACE_VARIABLES = [
  'GIT_TRACE',
  'GIT_TRACE_CURL',
  'GIT_TRACE_CURL_NO_DATA',
  'GIT_CURL_VERBOSE',
  'GIT_TRACE_PACKET',
  'GIT_TRACE_PACKFILE',
  'GIT_TRACE_PERFORMANCE',
  'GIT_TRACE_SETUP',
  'GIT_TRACE2',
  'GIT_TRACE2_EVENT',
  'GIT_TRACE2_PERF',
  'GIT_TRACE_REDACT',
];

/** The git of the checkout, set up to talk to the fork: the token as a header (http/https only), never a prompt. */
function forkGit(git: Git, fork: ForkTarget, env: Env, log: Logger, token: string | null): Git {
  const header = token === null ? {} : tokenHeaderEnv(fork.location, token, env);
  // GitHub masks a secret's own base64 forms, not this header's: ask it to mask the header before git can echo it.
  if (env['GITHUB_ACTIONS'] === 'true')
    for (const value of Object.values(header))
      if (value.startsWith('Authorization: Basic ')) log.stream.write(`::add-mask::${value.slice(21)}\n`);
  return git.withEnv({
    GIT_TERMINAL_PROMPT: '0',
    // git's tracing prints the Authorization header (with GIT_TRACE_REDACT=0 even the token).
    ...Object.fromEntries(TRACE_VARIABLES.map((name) => [name, undefined])),
    ...header,
  });
}

/** What git said, turned into the error of a fork that cannot be read, with git's last lines. */
function unreachable(fork: ForkTarget, error: ProcessError): UserError {
  const said = redactSecrets(lastLines(error.stderr, 6));
  return new UserError('FORK_UNREACHABLE', `Cannot read the fork ${fork.given}:\n${said}`, {
    hint: authHint(said) ?? 'Check the URL (or the remote) and the network, then run again.',
    details: { fork: fork.given, stderr: said },
  });
}

function authHint(said: string): string | null {
  if (
    /Authentication failed|could not read Username|terminal prompts disabled|HTTP 40[13]|403|Permission to .* denied/i.test(
      said,
    )
  )
    return 'The fork refused the credentials: set GH_TOKEN (or GITHUB_TOKEN) to a token that may write to the fork (fine-grained: Contents read and write on the fork; classic: public_repo), or use an ssh URL with your key.';
  return null;
}

/**
 * What the fork holds now: the branch tip and the id the tool pushed last
 * (its lease ref), read with `git ls-remote` as a refresh reads them.
 */
export async function readForkState(
  ctx: Context,
  checkout: Git,
  fork: ForkTarget,
  branch: string,
  token: string | null,
): Promise<ForkState> {
  return remoteState(forkGit(checkout, fork, ctx.env, ctx.log, token), fork, branch);
}

/** The branch tip and the lease on the fork, read with `git ls-remote`; a fork git cannot reach is a user error. */
async function remoteState(git: Git, fork: ForkTarget, branch: string): Promise<ForkState> {
  const branchRef = `refs/heads/${branch}`;
  try {
    const remote = await git.remoteRefIds(fork.url, [branchRef, leaseRef(branch)]);
    return { branch: remote.get(branchRef) ?? null, lease: remote.get(leaseRef(branch)) ?? null };
  } catch (error) {
    if (error instanceof ProcessError) throw unreachable(fork, error);
    throw error;
  }
}

/**
 * Refreshes the branch on the fork with `commit`. The fork keeps, next to the
 * branch, the id the tool pushed last (the lease ref), so every run, also a
 * fresh clone in CI, can tell the tool's commits from anyone else's:
 *
 * - no branch: created; the tool's commit is its tip, nothing else was there;
 * - the tip is the lease and holds the same tree, parent and message: unchanged;
 * - the tip is the lease: updated, with the lease as git's
 *   `--force-with-lease`, so a push that lands in between is not overwritten;
 * - anything else is someone's work: refused, naming the commits; with
 *   `force`, the tip is first kept under a backup ref on the fork.
 *
 * The branch, the lease ref and a backup ref move in one atomic push.
 */
export async function refreshFork(ctx: Context, checkout: Git, o: RefreshOptions): Promise<RefreshOutcome> {
  const git = forkGit(checkout, o.fork, ctx.env, ctx.log, o.token);
  const state = await fetchForkState(git, o, await remoteState(git, o.fork, o.branch));

  const tipMatches =
    state.branch !== null &&
    state.branch === state.lease &&
    sameContent(await git.commitContent(state.branch), o.commit.content);
  const plan = planRefresh(state, { force: o.force, tipMatches });

  if (plan.action === 'refuse') throw await refusal(git, o, state, plan.reason, ctx.config.upstream.commit);
  if (plan.action === 'unchanged')
    return { status: 'unchanged', commit: state.branch as string, previous: state.branch, backup: null };

  const backup = plan.action === 'update' && plan.backup && state.branch !== null ? forkBackup(o, state.branch) : null;
  if (o.dryRun)
    return {
      status: plan.action === 'create' ? 'would-create' : 'would-update',
      commit: o.commit.commit,
      previous: state.branch,
      backup,
    };

  await pushRefresh(ctx, git, o, state, backup);
  return {
    status: plan.action === 'create' ? 'created' : 'updated',
    commit: o.commit.commit,
    previous: state.branch,
    backup,
  };
}

/** What `refreshFork` pushes, where, and how. */
export interface RefreshOptions {
  fork: ForkTarget;
  branch: string;
  commit: UserCommit;
  force: boolean;
  dryRun: boolean;
  now: Date;
  /** Sent to an http(s) fork as a header (null: git's own credentials). */
  token: string | null;
}

/** Fetches the branch and the lease from the fork, and returns the state with the fetched ids. */
async function fetchForkState(git: Git, o: RefreshOptions, state: ForkState): Promise<ForkState> {
  const branchRef = `refs/heads/${o.branch}`;
  const lease = leaseRef(o.branch);
  const local = fetchedRefs(o.branch);
  // The branch and the lease are fetched when their content matters: to compare, to name commits, to back up.
  const wanted: Array<[string, string]> = [];
  if (state.branch !== null && (state.lease !== null || o.force)) wanted.push([branchRef, local.branch]);
  if (state.lease !== null && state.branch !== null) wanted.push([lease, local.lease]);
  try {
    await git.fetchRefs(
      o.fork.url,
      wanted.map(([src, dst]) => `+${src}:${dst}`),
    );
  } catch (error) {
    if (error instanceof ProcessError) throw unreachable(o.fork, error);
    throw error;
  }
  // What was fetched may be newer than what ls-remote said: the fetched ids are the ones to lease against.
  const fetched = { ...state };
  if (wanted.some(([src]) => src === branchRef)) fetched.branch = await git.resolveRef(local.branch);
  if (wanted.some(([src]) => src === lease)) fetched.lease = await git.resolveRef(local.lease);
  return fetched;
}

/** The backup ref that keeps the branch tip `tip` on the fork, and the commands that put it back. */
function forkBackup(o: RefreshOptions, tip: string): NonNullable<RefreshOutcome['backup']> {
  const where = o.fork.url;
  const branchRef = `refs/heads/${o.branch}`;
  return {
    ref: forkBackupRef(o.branch, o.now),
    commit: tip,
    restore: [
      `git fetch ${quote(where)} ${forkBackupRef(o.branch, o.now)}`,
      `git push --force ${quote(where)} FETCH_HEAD:${branchRef}`,
    ],
  };
}

/**
 * Moves the branch and the lease ref to the commit, and sets the backup ref,
 * in one atomic push that leases against the state it read.
 */
async function pushRefresh(
  ctx: Context,
  git: Git,
  o: RefreshOptions,
  state: ForkState,
  backup: RefreshOutcome['backup'],
): Promise<void> {
  const branchRef = `refs/heads/${o.branch}`;
  const where = o.fork.url;
  const updates = [
    ...(backup ? [{ commit: backup.commit, ref: backup.ref, expect: null }] : []),
    { commit: o.commit.commit, ref: branchRef, expect: state.branch },
    { commit: o.commit.commit, ref: leaseRef(o.branch), expect: state.lease },
  ];
  try {
    // Once git has sent the push, the fork may take it even if Ctrl-C stops git before it hears back.
    markInFlight({
      what: `the push of ${o.commit.commit.slice(0, 12)} to ${branchRef} on ${where}`,
      check: `\`git ls-remote ${quote(where)} ${branchRef}\` shows where the branch is now; running the same \`mlx-storage-pr pr --push\` again is safe (it finds the branch unchanged, or updates it)`,
    });
    await git.pushAtomic(o.fork.url, updates);
    markCompleted('the push');
    await pausePoint('push-done');
  } catch (error) {
    if (!(error instanceof ProcessError)) throw error;
    throw await pushFailed(git, o, state, error, {
      pinned: ctx.config.upstream.commit,
      source: redactSecrets(ctx.source.location),
    });
  }
}

/** The refusal for a branch that holds work the tool did not push, naming that work. */
async function refusal(
  git: Git,
  o: { fork: ForkTarget; branch: string },
  state: ForkState,
  reason: 'never-pushed' | 'moved',
  pinned: string,
): Promise<UserError> {
  const tip = state.branch as string;
  const where = o.fork.remote ?? o.fork.given;
  const force =
    'or run again with --force, which first keeps the branch tip on the fork under refs/mlx-storage-pr/backup/ and prints how to get it back.';
  if (reason === 'never-pushed')
    return new UserError(
      'BRANCH_NOT_PUSHED_BY_TOOL',
      `The branch ${o.branch} already exists on ${where} (at ${tip.slice(0, 12)}), and mlx-storage-pr never pushed to it (the fork has no ${leaseRef(o.branch)}).`,
      {
        hint: `Nothing was pushed. Use a new branch (--branch <name>), ${force}`,
        details: { branch: o.branch, fork: o.fork.given, tip, lease: null, commits: [], total: 0 },
      },
    );
  const lease = state.lease as string;
  const rewritten = !(await git.isAncestor(lease, tip));
  const { commits, total } = await git.commitsIn(tip, [lease, pinned], 10);
  const listed = commits.map((c) => `  ${c.commit.slice(0, 12)} ${c.subject} (${c.author})`);
  if (total > commits.length) listed.push(`  and ${total - commits.length} more`);
  return new UserError(
    'BRANCH_MOVED',
    `The branch ${o.branch} on ${where} has ${rewritten ? `been rewritten since mlx-storage-pr pushed ${lease.slice(0, 12)}; it now holds` : `${total} commit(s) that mlx-storage-pr did not push`}:\n${listed.join('\n')}`,
    {
      hint: `Nothing was pushed; those commits are still there. To keep their changes, bring them into the series: \`git -C ${git.dir} fetch ${o.fork.given} ${o.branch}\`, \`git -C ${git.dir} cherry-pick ${lease.slice(0, 12)}..FETCH_HEAD\`, \`mlx-storage-pr export\` (writes them into templates/ and patches/), \`mlx-storage-pr apply\`, then run pr again with --force (their changes are then in the new commit, and the old tip is kept on the fork under refs/mlx-storage-pr/backup/). Or drop them: ${force.replace(/^or /, '')}`,
      details: { branch: o.branch, fork: o.fork.given, tip, lease, commits, total },
    },
  );
}

/** A push that git refused: the branch moved in the meantime, or the fork said no. */
async function pushFailed(
  git: Git,
  o: { fork: ForkTarget; branch: string },
  state: ForkState,
  error: ProcessError,
  mlx: { pinned: string; source: string },
) {
  const branchRef = `refs/heads/${o.branch}`;
  const said = redactSecrets(lastLines(error.stderr, 8));
  // A fork that cannot be read again now: the report falls back to what git said about the push.
  const now = await git.remoteRefIds(o.fork.url, [branchRef, leaseRef(o.branch)]).catch(() => null);
  const tip = now?.get(branchRef) ?? null;
  if (now !== null && (tip !== state.branch || (now.get(leaseRef(o.branch)) ?? null) !== state.lease))
    return new UserError(
      'BRANCH_MOVED',
      `The branch ${o.branch} on ${o.fork.remote ?? o.fork.given} moved after mlx-storage-pr read it (${state.branch?.slice(0, 12) ?? 'absent'} -> ${tip?.slice(0, 12) ?? 'absent'}); nothing was pushed.`,
      {
        hint: 'Someone else pushed to it just now. Run again to see what changed; the new commits are kept.',
        details: { branch: o.branch, fork: o.fork.given, tip, lease: state.lease, commits: [], total: 0 },
      },
    );
  const shallow = /shallow update not allowed/i.test(said);
  return new UserError('PUSH_FAILED', `The fork ${o.fork.remote ?? o.fork.given} refused the push:\n${said}`, {
    hint: shallow
      ? `The fork ${o.fork.remote ?? o.fork.given} has no copy of the pinned commit ${mlx.pinned.slice(0, 12)}, and the checkout holds only a shallow copy of MLX's history, which git cannot push. Nothing was pushed. Sync the fork with upstream (GitHub: "Sync fork" on the fork's page), then run again. Or send the history from the checkout, which needs its full history from a reachable MLX source first: \`git -C ${quote(git.dir)} fetch --unshallow ${quote(mlx.source)}\`, then \`git -C ${quote(git.dir)} push ${quote(o.fork.url)} ${mlx.pinned}:refs/heads/main\` (a fast-forward only, never forced), then run again.`
      : (authHint(said) ?? 'Nothing was pushed (the push is atomic). Fix what git names above and run again.'),
    details: { fork: o.fork.given, stderr: said },
  });
}
