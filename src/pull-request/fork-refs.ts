import path from 'node:path';
import { domainToASCII } from 'node:url';

import { UserError } from '../core/errors.js';
import { redactUrls } from '../core/redact.js';

/**
 * The user's fork as a push target: what a repository URL names, whether it
 * is the upstream repository, the refs the tool keeps on the fork, and what a
 * refresh does given what the fork holds. Pure: the ops layer asks git.
 */

/** What git would parse a repository location as. */
export type RepoLocation =
  | {
      kind: 'network';
      /** `https`, `ssh`, ...; `ssh` for the scp-like form. */
      scheme: string;
      host: string;
      port: string | null;
      path: string;
      user: string | null;
      password: boolean;
    }
  | { kind: 'file'; path: string };

/** `scheme://[user[:password]@]host[:port]/path`. */
const URL_FORM = /^([a-z][a-z0-9+.-]*):\/\/(?:([^@/]*)@)?([^/?#]*)(\/[^?#]*)?/i;
/** git's `<transport>::<address>` (a scheme's characters before `::`). */
const HELPER_FORM = /^[a-z][a-z0-9+.-]*::(.*)$/is;
/** git's scp-like form `[user@]host:path`: only when no slash comes before the first colon. */
const SCP_FORM = /^(?:([^@/:]+)@)?([^/:]+):(.*)$/;

/**
 * Parses a repository location as git does: a URL, the scp-like
 * `[user@]host:path`, or a local path (resolved against `cwd`).
 */
export function parseRepoLocation(location: string, cwd: string): RepoLocation {
  // git's `<transport>::<address>`: the remote helper for <transport> goes to <address>.
  const helper = HELPER_FORM.exec(location);
  if (helper) return parseRepoLocation(helper[1] as string, cwd);
  const url = URL_FORM.exec(location);
  if (url) {
    const scheme = (url[1] as string).toLowerCase();
    const rest = decodePath(url[4] ?? '/');
    if (scheme === 'file') return { kind: 'file', path: path.posix.resolve('/', rest) };
    const userinfo = url[2] ?? null;
    const colon = userinfo === null ? -1 : userinfo.indexOf(':');
    const authority = (url[3] as string).toLowerCase();
    const port = /:(\d+)$/.exec(authority)?.[1] ?? null;
    return {
      kind: 'network',
      scheme,
      host: authority.replace(/:\d*$/, ''),
      port,
      path: rest,
      user: userinfo === null ? null : colon < 0 ? userinfo : userinfo.slice(0, colon),
      password: colon >= 0,
    };
  }
  const scp = SCP_FORM.exec(location);
  // A single letter before the colon is a Windows drive, not a host.
  if (scp && !/^[A-Za-z]$/.test(scp[2] as string)) {
    return {
      kind: 'network',
      scheme: 'ssh',
      host: (scp[2] as string).toLowerCase(),
      port: null,
      path: decodePath(scp[3] as string),
      user: scp[1] ?? null,
      password: false,
    };
  }
  return { kind: 'file', path: path.resolve(cwd, location) };
}

function decodePath(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * A host name as a resolver reads it: percent-decoded, through IDNA (which
 * also lowercases and folds full-width letters), without the trailing dot of a
 * fully qualified name; then the other names of the same service (GitHub's ssh
 * over port 443, the www. alias).
 */
function canonicalHost(host: string): string {
  const decoded = decodePath(host).toLowerCase();
  const ascii = decoded.startsWith('[') ? decoded : domainToASCII(decoded) || decoded;
  const bare = ascii.replace(/\.+$/, '').replace(/^www\./, '');
  return bare === 'ssh.github.com' ? 'github.com' : bare;
}

/**
 * One key per repository, whatever the form of its location: any scheme, user
 * or port, any case, with or without `.git` and trailing slashes. Local
 * repositories: the path (a working tree and its `.git` folder are one
 * repository).
 */
export function repositoryKey(location: RepoLocation): string {
  if (location.kind === 'file') return `file:${location.path.replace(/\/+$/, '').replace(/\/\.git$/, '') || '/'}`;
  const repoPath = path.posix
    .normalize(`/${location.path}`)
    .replace(/\/{2,}/g, '/')
    .replace(/^\/+|\/+$/g, '')
    .replace(/\.git$/i, '')
    .replace(/\/+$/, '')
    .toLowerCase();
  return `${canonicalHost(location.host)}/${repoPath}`;
}

/** `owner/repo` of a repository on a GitHub host (`github.com` or an Enterprise server), or null. */
export function githubRepoOf(location: RepoLocation): { host: string; owner: string; repo: string } | null {
  if (location.kind !== 'network') return null;
  const parts = location.path
    .replace(/^\/+|\/+$/g, '')
    .replace(/\.git$/i, '')
    .split('/');
  if (parts.length !== 2 || !parts.every((p) => /^[\w.-]+$/.test(p))) return null;
  return { host: canonicalHost(location.host), owner: parts[0] as string, repo: parts[1] as string };
}

/** The refs the tool keeps on the fork, next to the branch. */
export const FORK_REF_PREFIX = 'refs/mlx-storage-pr';

/** The id the tool pushed last to `branch`: the lease every refresh checks the branch against. */
export function leaseRef(branch: string): string {
  return `${FORK_REF_PREFIX}/pushed/${branch}`;
}

/** Where `--force` keeps the branch tip it replaces. */
export function forkBackupRef(branch: string, now: Date): string {
  return `${FORK_REF_PREFIX}/backup/${branch}/${now.toISOString().replace(/[:.]/g, '-')}`;
}

/** Where the checkout keeps what it fetched of the fork's branch and lease ref. */
export function fetchedRefs(branch: string): { branch: string; lease: string } {
  return { branch: `${FORK_REF_PREFIX}/fork/heads/${branch}`, lease: `${FORK_REF_PREFIX}/fork/pushed/${branch}` };
}

/**
 * A commit's content as a refresh compares it: ids differ by date, so the tree,
 * the parents, the message and who wrote and committed it (`Name <email>`, no date).
 */
export interface CommitContent {
  tree: string;
  parents: string[];
  message: string;
  author: string;
  committer: string;
}

export function sameContent(a: CommitContent, b: CommitContent): boolean {
  return (
    a.tree === b.tree &&
    a.message === b.message &&
    a.parents.join(' ') === b.parents.join(' ') &&
    a.author === b.author &&
    a.committer === b.committer
  );
}

/** What the fork holds: the branch tip and the tool's lease ref (null: absent). */
export interface ForkState {
  branch: string | null;
  lease: string | null;
}

export type RefreshPlan =
  | { action: 'unchanged' }
  | { action: 'create' }
  | { action: 'update'; backup: boolean }
  | { action: 'refuse'; reason: 'never-pushed' | 'moved' };

/**
 * What a refresh does. The branch may be replaced only when its tip is the
 * commit the tool pushed last (the lease ref), or when it does not exist.
 * A tip that is the tool's and has the same content as the new commit is
 * left as it is. Anything else is someone's work: refused, unless `force`,
 * which first keeps the tip under a backup ref.
 */
export function planRefresh(fork: ForkState, options: { force: boolean; tipMatches: boolean }): RefreshPlan {
  if (fork.branch === null) return { action: 'create' };
  if (fork.lease === fork.branch)
    return options.tipMatches ? { action: 'unchanged' } : { action: 'update', backup: false };
  if (options.force) return { action: 'update', backup: true };
  return { action: 'refuse', reason: fork.lease === null ? 'never-pushed' : 'moved' };
}

/** The first line of a commit message: the pull request's title. */
export function commitSubject(message: string): string {
  return (message.split('\n').find((l) => l.trim() !== '') ?? '').trim();
}

/**
 * The URL git pushes to for `url`: the longest matching `url.<base>.pushInsteadOf`
 * prefix replaced by its base, else `expanded` (the URL with insteadOf applied), as git does.
 */
export function pushUrlOf(url: string, expanded: string, rules: ReadonlyArray<[string, string]>): string {
  let best: [string, string] | null = null;
  for (const rule of rules)
    if (url.startsWith(rule[1]) && (best === null || rule[1].length > best[1].length)) best = rule;
  return best === null ? expanded : best[0] + url.slice(best[1].length);
}

/** An http(s) URL that names a user (`user@`, `token@`, `user:pass@`): where tokens hide. */
export function hasHttpUser(location: RepoLocation): boolean {
  return location.kind === 'network' && /^https?$/.test(location.scheme) && location.user !== null;
}

/** `text` with the user part of every URL replaced by `***@` (ssh user names kept), and any Authorization header's value removed. */
export function redactSecrets(text: string): string {
  return redactUrls(text).replace(/^(.*authorization:\s*).*$/gim, '$1***');
}

/** This machine: a local git server (as in tests) may use plain http. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');
  return bare === 'localhost' || bare === '::1' || /^127(?:\.\d{1,3}){3}$/.test(bare);
}

/**
 * The environment that hands git a token as an HTTP header for the origin
 * (scheme, host and port) of an http(s) location only, through git's environment-provided configuration
 * (GIT_CONFIG_COUNT/KEY/VALUE), after any such entries the environment
 * already has. The token never appears in a URL, a command line or a file,
 * and never goes over plain http to another machine (refused).
 */
export function tokenHeaderEnv(
  location: RepoLocation,
  token: string,
  env: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  if (location.kind !== 'network' || !/^https?$/.test(location.scheme)) return {};
  if (location.scheme === 'http' && !isLoopback(location.host)) {
    const url = `http://${location.host}${location.port ? `:${location.port}` : ''}${location.path}`;
    throw new UserError(
      'USAGE',
      `${url}: mlx-storage-pr does not send the token over plain http, where it would cross the network unencrypted.`,
      { hint: 'Give the fork as an https:// URL (or an ssh one, which uses your ssh key and no token).' },
    );
  }
  const existing = Number(env['GIT_CONFIG_COUNT'] ?? '0');
  const index = Number.isInteger(existing) && existing > 0 ? existing : 0;
  const credentials = Buffer.from(`x-access-token:${token}`, 'utf8').toString('base64');
  return {
    GIT_CONFIG_COUNT: String(index + 1),
    [`GIT_CONFIG_KEY_${index}`]: `http.${location.scheme}://${location.host}${location.port ? `:${location.port}` : ''}/.extraHeader`,
    [`GIT_CONFIG_VALUE_${index}`]: `Authorization: Basic ${credentials}`,
  };
}
