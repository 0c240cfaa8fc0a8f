import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';

import { noSpace, noSpaceLine, permissionDenied, UserError } from '../core/errors.js';
import { definedEnv, type Env, withoutRepositoryVariables } from './env.js';
import type { Logger } from './log.js';
import { pausePoint } from './interrupt.js';
import { orFailure, ProcessError } from './process-error.js';
import { runDirect } from './process.js';

/**
 * `values` (refs, commit ids, URLs, remote names), refused when one starts with '-': git would read
 * it as an option (`--upload-pack=<command>` runs the command). Commands reject such values before they
 * reach here; this keeps any that slips through from reaching git.
 */
function operands(...values: string[]): string[] {
  const option = values.find((v) => v.startsWith('-'));
  if (option !== undefined)
    throw new UserError('USAGE', `"${option}" starts with "-": git would take it as an option, so it was not run.`, {
      hint: 'Name a branch, tag, commit or URL (a folder whose name starts with "-": ./<name>).',
      details: { value: option },
    });
  return values;
}

/** `run`'s output, or '' when git exited 1: how `rev-parse --verify --quiet` and `symbolic-ref --quiet` answer "no such ref". */
async function orAbsent(run: Promise<string>): Promise<string> {
  try {
    return await run;
  } catch (error) {
    // Exit 1 is these commands' "absent" (also "a tree, not a commit"); 128 and others (a broken repository, no git) are failures.
    if (error instanceof ProcessError && error.exitCode === 1) return '';
    throw error;
  }
}

export interface StatusEntry {
  path: string;
  /** Two-letter porcelain code, e.g. ` M`, `??`. */
  code: string;
}

export const STATE_AUTHOR = { name: 'mlx-storage-pr', email: 'mlx-storage-pr@localhost' };

/** Git's line about a file it may not write, or null (an ssh "Permission denied (publickey)" is no such line). */
function fileSystemDenial(message: string): string | null {
  const line = message
    .split('\n')
    .find(
      (l) =>
        /insufficient permission|Read-only file system|Permission denied$/.test(l.trim()) &&
        !/publickey|password/i.test(l),
    );
  return line === undefined ? null : line.trim();
}

/**
 * Runs git and collects its output. Any non-zero exit is a failure, also when
 * git prints its reason on stdout (`git stash push` on an unmerged index does).
 * Git is started directly: no shell, arguments passed as they are.
 */
async function runGit(args: readonly string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  const result = await orFailure(runDirect('git', args, { cwd, env }));
  if (!(result instanceof ProcessError)) return result;
  // `stderr` of git's error is its reason, also where git says it on stdout.
  const reason = [result.stderr.trim(), result.output.trim()].filter(Boolean).join('\n');
  const failure = new ProcessError(
    ['git', ...args],
    { exitCode: result.exitCode, signal: result.signal, stderr: reason, output: result.output },
    { cause: result.cause },
  );
  const denied = fileSystemDenial(reason);
  if (denied !== null) throw permissionDenied(cwd, `git ${args[0] ?? ''} failed: ${denied}`, { cause: failure });
  const full = noSpaceLine(reason);
  if (full !== null) throw noSpace(cwd, `git ${args[0] ?? ''} failed: ${full}`, { cause: failure });
  throw failure;
}

/** One git working folder. Every method runs one git command (`branchTipFromFiles` none). */
export class Git {
  private readonly processEnv: NodeJS.ProcessEnv;

  /**
   * `env` is the whole environment git runs with (the command's injected one), not additions to
   * process.env, less the variables that would point git at another repository than `dir`'s
   * (a git hook's GIT_DIR, GIT_INDEX_FILE, ...); `own` are the tool's own settings, set after that.
   */
  constructor(
    readonly dir: string,
    private readonly log: Logger,
    private readonly env: Env,
    private readonly own: Env = {},
  ) {
    this.processEnv = { ...definedEnv({ ...withoutRepositoryVariables(env), ...own }), LC_ALL: 'C' };
  }

  /** The same folder with a separate index file, for building trees without touching the user's index. */
  withIndex(indexFile: string): Git {
    return this.withEnv({ GIT_INDEX_FILE: indexFile });
  }

  async raw(args: string[], options: { echo?: boolean } = {}): Promise<string> {
    if (options.echo) this.log.command(`git ${args.join(' ')}`, this.dir);
    else this.log.debug(`git ${args.join(' ')}`);
    return runGit(args, this.dir, this.processEnv);
  }

  async init(): Promise<void> {
    await this.raw(['init', '--quiet']);
  }

  /**
   * Fetches one commit. `local` (a repository on this machine) skips the
   * source's delta search: the pack crosses no network, and finding new deltas
   * for a shallow pack is most of a local fetch's time.
   */
  async fetchCommit(source: string, commit: string, options: { depth?: number; local?: boolean }): Promise<void> {
    const args = ['fetch', '--quiet', '--no-tags'];
    if (options.depth !== undefined) args.push('--depth', String(options.depth));
    if (options.local) args.push('--upload-pack=git -c pack.window=0 upload-pack');
    await pausePoint(
      'fetch-started',
      this.raw([...args, '--end-of-options', ...operands(source, commit)], { echo: true }),
    );
  }

  async lsRemote(source: string): Promise<void> {
    await this.raw(['ls-remote', '--quiet', '--end-of-options', ...operands(source), 'HEAD']);
  }

  /**
   * The refs of `source` that match `patterns` (as `git ls-remote` matches
   * them: by whole trailing path components), peeled tags as `<ref>^{}`.
   */
  async remoteRefs(source: string, patterns: readonly string[]): Promise<Array<{ ref: string; commit: string }>> {
    const out = await this.raw(['ls-remote', '--quiet', '--end-of-options', ...operands(source, ...patterns)]);
    return out
      .split('\n')
      .map((line) => /^([0-9a-f]{40})\t(.+)$/.exec(line))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ commit: m[1] as string, ref: m[2] as string }));
  }

  /** Fetches several commits in one go (see `fetchCommit`), without updating any ref. */
  async fetchCommits(
    source: string,
    commits: readonly string[],
    options: { depth?: number; local?: boolean },
  ): Promise<void> {
    const args = ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head'];
    if (options.depth !== undefined) args.push('--depth', String(options.depth));
    if (options.local) args.push('--upload-pack=git -c pack.window=0 upload-pack');
    await pausePoint(
      'fetch-started',
      this.raw([...args, '--end-of-options', ...operands(source, ...commits)], { echo: true }),
    );
  }

  /** The commit `rev` names (`<rev>^{commit}`), or null when there is none. */
  async resolveCommit(rev: string): Promise<string | null> {
    const out = await orAbsent(this.raw(['rev-parse', '--verify', '--quiet', '--end-of-options', `${rev}^{commit}`]));
    return out.trim() || null;
  }

  async hasCommit(commit: string): Promise<boolean> {
    const out = await orAbsent(
      this.raw(['rev-parse', '--verify', '--quiet', '--end-of-options', `${commit}^{commit}`]),
    );
    return out.trim().length > 0;
  }

  /** The type of object `id` (`commit`, `tag`, `tree` or `blob`), or null when the repository lacks it. */
  async objectType(id: string): Promise<string | null> {
    const found = await orAbsent(this.raw(['rev-parse', '--verify', '--quiet', '--end-of-options', `${id}^{object}`]));
    if (found.trim().length === 0) return null;
    return (await this.raw(['cat-file', '-t', '--end-of-options', id])).trim();
  }

  /** The name an annotated tag object gives itself (its `tag` line), or null when it has none. */
  async tagName(id: string): Promise<string | null> {
    const text = await this.raw(['cat-file', 'tag', '--end-of-options', id]);
    return /^tag (.+)$/m.exec(text)?.[1] ?? null;
  }

  /**
   * The commit of the branch HEAD is on, read from the two files git keeps them in (no git
   * started): null when they do not say it plainly (HEAD detached, a packed or reftable ref, a
   * worktree's .git file); a caller then asks git.
   */
  async branchTipFromFiles(): Promise<string | null> {
    const gitDir = path.join(this.dir, '.git');
    const head = await readFile(path.join(gitDir, 'HEAD'), 'utf8').catch(() => '');
    const ref = /^ref: (refs\/heads\/[^\n]+)\n?$/.exec(head)?.[1];
    if (ref === undefined) return null;
    const tip = await readFile(path.join(gitDir, ref), 'utf8').catch(() => '');
    return /^(?:[0-9a-f]{40}|[0-9a-f]{64})\n?$/.test(tip) ? tip.trim() : null;
  }

  /** The commit HEAD points at, or null in an empty repository. */
  async head(): Promise<string | null> {
    const out = await orAbsent(this.raw(['rev-parse', '--verify', '--quiet', 'HEAD']));
    return out.trim() || null;
  }

  /** The branch HEAD is on, or null when HEAD is detached. */
  async currentBranch(): Promise<string | null> {
    const out = await orAbsent(this.raw(['symbolic-ref', '--quiet', '--short', 'HEAD']));
    return out.trim() || null;
  }

  /** HEAD's commit, tree, parents and message in one call, or null in an empty repository. */
  async headInfo(): Promise<{ commit: string; tree: string; parents: string[]; message: string } | null> {
    let out: string;
    try {
      out = await this.raw(['log', '-1', '--format=%H%x00%T%x00%P%x00%B', 'HEAD', '--']);
    } catch (error) {
      // git log cannot tell an unborn HEAD from a broken repository; rev-parse can (and throws for the latter).
      if (error instanceof ProcessError && (await this.head()) === null) return null;
      throw error;
    }
    const [commit = '', tree = '', parents = '', message = ''] = out.split('\0');
    return { commit, tree, parents: parents.trim().split(' ').filter(Boolean), message };
  }

  /** The text of `file` at `commit`, or null when the commit has no such file. */
  async fileAt(commit: string, file: string): Promise<string | null> {
    try {
      // `^{commit}` makes an unknown commit its own error, not "path does not exist".
      return await this.raw(['show', '--end-of-options', `${operands(commit)[0]}^{commit}:${file}`]);
    } catch (error) {
      // Only "no such path in that commit" means absent; a missing commit or a broken repository is a failure.
      if (
        error instanceof ProcessError &&
        /^fatal: path '.*' (does not exist in|exists on disk, but not in) /m.test(error.stderr)
      )
        return null;
      throw error;
    }
  }

  /**
   * The lines of the files under `pathspecs` at `commit` that match the
   * extended regular expression `pattern`, each with the `after` lines that
   * follow it (`git grep -A`): one git command, however many files.
   */
  async grepLines(
    commit: string,
    pattern: string,
    pathspecs: readonly string[],
    after = 0,
  ): Promise<Array<{ path: string; line: number; text: string }>> {
    let out: string;
    try {
      out = await this.raw([
        'grep',
        '-z',
        '-n',
        '-I',
        '--no-color',
        '-E',
        `-A${after}`,
        '-e',
        pattern,
        `${operands(commit)[0]}^{commit}`,
        '--',
        ...pathspecs,
      ]);
    } catch (error) {
      // Exit 1 is git grep's "no line matched"; anything else is a failure.
      if (error instanceof ProcessError && error.exitCode === 1) return [];
      throw error;
    }
    const prefix = `${commit}^{commit}:`;
    const lines: Array<{ path: string; line: number; text: string }> = [];
    // With -z, matches and context lines alike read <commit>:<path>\0<line>\0<text>; groups are split by "--".
    for (const row of out.split('\n')) {
      const [where, line, ...text] = row.split('\0');
      if (where === undefined || line === undefined || !where.startsWith(prefix)) continue;
      lines.push({ path: where.slice(prefix.length), line: Number(line), text: text.join('\0') });
    }
    return lines;
  }

  async status(paths: readonly string[] = []): Promise<StatusEntry[]> {
    const out = await this.raw(['status', '--porcelain=v1', '-z', '--untracked-files=all', '--', ...paths]);
    const entries: StatusEntry[] = [];
    const parts = out.split('\0');
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i] as string;
      if (part.length < 4) continue;
      const code = part.slice(0, 2);
      entries.push({ code, path: part.slice(3) });
      if (code.startsWith('R') || code.startsWith('C')) i++;
    }
    return entries;
  }

  /** Paths with unresolved merge conflicts in the index. */
  async unmergedPaths(): Promise<string[]> {
    const out = await this.raw(['ls-files', '--unmerged', '-z']);
    return [
      ...new Set(
        out
          .split('\0')
          .filter(Boolean)
          .map((line) => line.slice(line.indexOf('\t') + 1)),
      ),
    ];
  }

  /** Full names of the refs under `prefix` (e.g. `refs/heads/`). */
  async refs(prefix: string): Promise<string[]> {
    return (await this.raw(['for-each-ref', '--format=%(refname)', prefix])).split('\n').filter(Boolean);
  }

  /**
   * Every ref with the commit it leads to (a tag peeled; null when it leads
   * to no commit); with `notReachableFrom`, only refs to commits that are not
   * that commit or its ancestors (refs to no commit are then left out).
   */
  async refTargets(notReachableFrom?: string): Promise<Array<{ ref: string; commit: string | null }>> {
    const format = '--format=%(refname)%00%(objecttype)%00%(objectname)%00%(*objectname)';
    const filter = notReachableFrom === undefined ? [] : [`--no-merged=${notReachableFrom}`];
    const out = await this.raw(['for-each-ref', format, ...filter]);
    return out
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [ref = '', type, id = '', peeled = ''] = line.split('\0');
        return { ref, commit: type === 'commit' ? id : peeled !== '' ? peeled : null };
      });
  }

  /** The linked worktrees (not the main one): folder, HEAD, branch, and whether the folder is gone. */
  async linkedWorktrees(): Promise<Array<{ path: string; head: string | null; branch: string | null; gone: boolean }>> {
    const out = await this.raw(['worktree', 'list', '--porcelain']);
    const blocks = out.split('\n\n').filter((b) => b.trim() !== '');
    return blocks.slice(1).map((block) => {
      const field = (name: string) =>
        block
          .split('\n')
          .find((l) => l === name || l.startsWith(`${name} `))
          ?.slice(name.length + 1) ?? null;
      return {
        path: field('worktree') ?? '',
        head: field('HEAD'),
        branch: field('branch'),
        gone: field('prunable') !== null,
      };
    });
  }

  /** Files and folders git ignores in the working tree (a folder wholly ignored is one entry, `dir/`). */
  async ignoredFiles(): Promise<string[]> {
    return (await this.raw(['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory']))
      .split('\0')
      .filter(Boolean);
  }

  /** How many entries `git stash list` shows. */
  async stashCount(): Promise<number> {
    return (await this.raw(['stash', 'list'])).split('\n').filter(Boolean).length;
  }

  async readTree(treeish: string): Promise<void> {
    await this.raw(['read-tree', '--end-of-options', ...operands(treeish)]);
  }

  /** Writes files as blobs; returns their ids in the same order. */
  async hashObjects(files: readonly string[]): Promise<string[]> {
    if (files.length === 0) return [];
    const out = await this.raw(['hash-object', '-w', '--', ...files]);
    return out.trim().split('\n');
  }

  async updateIndex(entries: ReadonlyArray<{ path: string; blob: string }>): Promise<void> {
    if (entries.length === 0) return;
    await this.raw(['update-index', '--add', ...entries.flatMap((e) => ['--cacheinfo', `100644,${e.blob},${e.path}`])]);
  }

  /** `git apply --cached`: changes only the (temporary) index; several patches apply in order, all or none. */
  async applyToIndex(
    patchFile: string | readonly string[],
    options: { threeWay?: boolean; reverse?: boolean; check?: boolean } = {},
  ): Promise<void> {
    const args = ['apply', '--cached', '--whitespace=nowarn'];
    if (options.threeWay) args.push('--3way');
    if (options.reverse) args.push('--reverse');
    if (options.check) args.push('--check');
    await this.raw([...args, ...(typeof patchFile === 'string' ? [patchFile] : patchFile)]);
  }

  async writeTree(): Promise<string> {
    return (await this.raw(['write-tree'])).trim();
  }

  /** Blob id of `path` in the index, or null when absent. */
  async indexBlob(path: string): Promise<string | null> {
    const out = await this.raw(['ls-files', '--stage', '--', path]);
    const match = /^\d+ ([0-9a-f]+) /.exec(out);
    return match ? (match[1] as string) : null;
  }

  async catBlob(blob: string): Promise<string> {
    return this.raw(['cat-file', 'blob', ...operands(blob)]);
  }

  async commitTree(tree: string, parent: string, message: string): Promise<string> {
    const env = {
      GIT_AUTHOR_NAME: STATE_AUTHOR.name,
      GIT_AUTHOR_EMAIL: STATE_AUTHOR.email,
      GIT_COMMITTER_NAME: STATE_AUTHOR.name,
      GIT_COMMITTER_EMAIL: STATE_AUTHOR.email,
      GIT_AUTHOR_DATE: '2000-01-01T00:00:00Z',
      GIT_COMMITTER_DATE: '2000-01-01T00:00:00Z',
    };
    const git = this.withEnv(env);
    return (await git.raw(['commit-tree', ...operands(tree), '-p', parent, '-m', message])).trim();
  }

  /**
   * `git diff` between two tree-ish values as a patch, in git's default shape
   * whatever the user's diff settings are: `a/`/`b/` prefixes, 3 lines of
   * context, the default algorithm, no colour, no external diff or textconv.
   * Function context follows git's rules and the repository's attributes.
   */
  async diffPatch(
    from: string,
    to: string,
    paths: readonly string[],
    options: { renames?: boolean } = {},
  ): Promise<string> {
    const config = [
      'diff.noprefix=false',
      'diff.mnemonicPrefix=false',
      'diff.suppressBlankEmpty=false',
      'diff.relative=false',
    ].flatMap((c) => ['-c', c]);
    const flags = [
      '--no-color',
      '--no-ext-diff',
      '--no-textconv',
      // Rename detection only when asked (a pathspec of the old and the new path), at git's default 50%.
      options.renames ? '--find-renames' : '--no-renames',
      '--unified=3',
      '--inter-hunk-context=0',
      '--diff-algorithm=myers',
      '--indent-heuristic',
      '--src-prefix=a/',
      '--dst-prefix=b/',
    ];
    return this.raw([...config, 'diff', ...flags, '--end-of-options', ...operands(from, to), '--', ...paths]);
  }

  /** Paths that differ between two tree-ish values. */
  async changedPaths(from: string, to: string): Promise<string[]> {
    const out = await this.raw([
      'diff',
      '--name-only',
      '-z',
      '--no-renames',
      '--end-of-options',
      ...operands(from, to),
      '--',
    ]);
    return out.split('\0').filter(Boolean);
  }

  /** Paths where the working tree differs from a tree-ish. */
  async worktreeDiff(treeish: string, paths: readonly string[] = []): Promise<string[]> {
    const out = await this.raw([
      'diff',
      '--name-only',
      '-z',
      '--no-renames',
      '--end-of-options',
      ...operands(treeish),
      '--',
      ...paths,
    ]);
    return out.split('\0').filter(Boolean);
  }

  /** Puts `branch` on `commit` and checks it out. Two-way: refuses (without writing) when local changes would be overwritten. */
  async checkoutBranch(branch: string, commit: string): Promise<void> {
    await this.raw(['checkout', '--quiet', '-B', ...operands(branch, commit)], { echo: true });
  }

  async checkoutDetached(commit: string): Promise<void> {
    await this.raw(['checkout', '--quiet', '--detach', ...operands(commit)], { echo: true });
  }

  /**
   * Saves tracked and untracked changes (only in `paths`, taken literally, when
   * given); returns the stash commit, or null when there was nothing to save.
   */
  async stash(message: string, paths?: readonly string[]): Promise<string | null> {
    const before = (await orAbsent(this.raw(['rev-parse', '--verify', '--quiet', 'refs/stash']))).trim();
    const only = paths === undefined ? [] : ['--', ...paths];
    // Literal pathspecs only for the paths given: without paths, stash removes the untracked files it saved through
    // the `:/` pathspec, which a literal reading does not match, and they would stay behind.
    const literal = paths === undefined ? this : this.withEnv({ GIT_LITERAL_PATHSPECS: '1' });
    const args = ['stash', 'push', '--include-untracked', '--quiet', '-m', message, ...only];
    try {
      await literal.raw(args, { echo: true });
    } catch (error) {
      // With a pathspec, git stash fails on a held index lock without saying a word.
      const lock = path.resolve(this.dir, (await this.raw(['rev-parse', '--git-path', 'index.lock'])).trim());
      if (!(error instanceof ProcessError) || !existsSync(lock)) throw error;
      throw new ProcessError(['git', ...args], {
        exitCode: error.exitCode,
        signal: error.signal,
        stderr: `${lock} exists: another git process seems to be running in this repository (if none runs, delete that file)`,
      });
    }
    const after = (await orAbsent(this.raw(['rev-parse', '--verify', '--quiet', 'refs/stash']))).trim();
    return after && after !== before ? after : null;
  }

  async updateRef(ref: string, commit: string): Promise<void> {
    await this.raw(['update-ref', '--end-of-options', ...operands(ref, commit)]);
  }

  /** The same folder with more environment (e.g. what network commands need); the rest is kept. */
  withEnv(extra: Env): Git {
    return new Git(this.dir, this.log, this.env, { ...this.own, ...extra });
  }

  /** Another folder (a linked worktree, say) with the same environment. */
  at(dir: string): Git {
    return new Git(dir, this.log, this.env);
  }

  /** The commit `ref` names, or null when there is no such ref. */
  async resolveRef(ref: string): Promise<string | null> {
    const out = await orAbsent(this.raw(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`]));
    return out.trim() || null;
  }

  /** A commit's tree, parents and message, the message exactly as stored. */
  async commitContent(
    commit: string,
  ): Promise<{ tree: string; parents: string[]; message: string; author: string; committer: string }> {
    const out = await this.raw(['cat-file', 'commit', ...operands(commit)]);
    const end = out.indexOf('\n\n');
    const header = end < 0 ? out : out.slice(0, end);
    const lines = header.split('\n');
    const fields = lines.map((l) => l.split(' '));
    // `author Name <email> <seconds> <zone>`: the identity without the date.
    const ident = (role: string) =>
      (lines.find((l) => l.startsWith(`${role} `)) ?? '').slice(role.length + 1).replace(/ \d+ [+-]\d{4}$/, '');
    return {
      tree: fields.find((f) => f[0] === 'tree')?.[1] ?? '',
      parents: fields.filter((f) => f[0] === 'parent').map((f) => f[1] ?? ''),
      message: end < 0 ? '' : out.slice(end + 2),
      author: ident('author'),
      committer: ident('committer'),
    };
  }

  /**
   * The identity git would write as author or committer, from the GIT_AUTHOR_
   * and GIT_COMMITTER_ variables or user.name/user.email, or git's reason when
   * it has none. git is told not to guess one from the host name.
   */
  async identity(role: 'author' | 'committer'): Promise<{ ident: string } | { missing: string }> {
    try {
      const ident = await this.raw([
        '-c',
        'user.useConfigOnly=true',
        'var',
        role === 'author' ? 'GIT_AUTHOR_IDENT' : 'GIT_COMMITTER_IDENT',
      ]);
      return { ident: ident.trim().replace(/ \d+ [+-]\d{4}$/, '') };
    } catch (error) {
      if (!(error instanceof ProcessError) || error.exitCode !== 128) throw error;
      return {
        missing:
          error.stderr
            .split('\n')
            .filter((l) => l.startsWith('fatal:'))
            .join(' ') || error.stderr,
      };
    }
  }

  /**
   * A commit of `tree` on `parent` with the message in `messageFile` exactly
   * as written, by the user's identity (environment or git config, never a
   * guessed one) at the current time.
   */
  async commitTreeAsUser(tree: string, parent: string, messageFile: string): Promise<string> {
    return (
      await this.raw(['-c', 'user.useConfigOnly=true', 'commit-tree', tree, '-p', parent, '-F', messageFile])
    ).trim();
  }

  /** The remotes configured in this repository. */
  async remoteNames(): Promise<string[]> {
    return (await this.raw(['remote'])).split('\n').filter(Boolean);
  }

  /** Every URL a push to `remote` goes to, with insteadOf and pushInsteadOf applied. */
  async remotePushUrls(remote: string): Promise<string[]> {
    return (await this.raw(['remote', 'get-url', '--push', '--all', '--end-of-options', ...operands(remote)]))
      .split('\n')
      .filter(Boolean);
  }

  /** The `url.<base>.pushInsteadOf` rules of git's configuration, as [base, prefix] pairs. */
  async pushInsteadOfRules(): Promise<Array<[string, string]>> {
    const out = await orAbsent(this.raw(['config', '--get-regexp', '^url\\..*\\.pushinsteadof$']));
    return out
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const space = line.indexOf(' ');
        const key = line.slice(0, space);
        return [key.slice('url.'.length, -'.pushinsteadof'.length), line.slice(space + 1)] as [string, string];
      });
  }

  /**
   * The folder holding this repository's objects and refs (`--git-common-dir`,
   * made absolute): the same for a repository, its linked worktrees and a
   * folder whose `.git` file points at it. Null when git does not read the
   * folder as a repository.
   */
  async commonDir(): Promise<string | null> {
    try {
      return path.resolve(this.dir, (await this.raw(['rev-parse', '--git-common-dir'])).trim());
    } catch {
      return null;
    }
  }

  /** `url` with the insteadOf rules of git's configuration applied. */
  async expandUrl(url: string): Promise<string> {
    return (await this.raw(['ls-remote', '--get-url', '--end-of-options', ...operands(url)])).trim();
  }

  /** The ids of `refs` (full names) on the remote; absent refs are left out. */
  async remoteRefIds(url: string, refs: readonly string[]): Promise<Map<string, string>> {
    const out = await this.raw(['ls-remote', '--end-of-options', ...operands(url, ...refs)], { echo: true });
    const found = new Map<string, string>();
    for (const line of out.split('\n')) {
      const [id, ref] = line.split('\t');
      if (id && ref && refs.includes(ref)) found.set(ref, id);
    }
    return found;
  }

  /** Fetches `refspecs` (`+src:dst`) from `url`, no tags. */
  async fetchRefs(url: string, refspecs: readonly string[]): Promise<void> {
    if (refspecs.length === 0) return;
    await this.raw(
      ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', '--end-of-options', ...operands(url), ...refspecs],
      {
        echo: true,
      },
    );
  }

  /**
   * One atomic push: every ref in `updates` moves, or none does. Each update
   * carries its lease: the id the ref must have on the remote (null: it must
   * not exist), checked by git against what the remote has as it pushes.
   * Returns git's porcelain report.
   */
  async pushAtomic(
    url: string,
    updates: ReadonlyArray<{ commit: string; ref: string; expect: string | null }>,
  ): Promise<string> {
    const leases = updates.map((u) => `--force-with-lease=${u.ref}:${u.expect ?? ''}`);
    const refspecs = updates.map((u) => `${u.commit}:${u.ref}`);
    return this.raw(['push', '--atomic', '--porcelain', ...leases, '--end-of-options', ...operands(url), ...refspecs], {
      echo: true,
    });
  }

  /** True when this repository holds only part of its history (a `--depth` fetch). */
  async isShallow(): Promise<boolean> {
    return (await this.raw(['rev-parse', '--is-shallow-repository'])).trim() === 'true';
  }

  /** The committer time of `commit`, in seconds since 1970. */
  async commitTime(commit: string): Promise<number> {
    return Number(
      (
        await this.raw(['log', '-1', '--format=%ct', '--end-of-options', `${operands(commit)[0]}^{commit}`, '--'])
      ).trim(),
    );
  }

  /**
   * Deepens a shallow repository: fetches `commits` with their history back
   * to `since` (seconds since 1970, `git fetch --shallow-since`), without
   * updating any ref.
   */
  async fetchSince(
    source: string,
    commits: readonly string[],
    since: number,
    options: { local?: boolean },
  ): Promise<void> {
    const args = ['fetch', '--quiet', '--no-tags', '--no-write-fetch-head', `--shallow-since=${since}`];
    if (options.local) args.push('--upload-pack=git -c pack.window=0 upload-pack');
    await this.raw([...args, '--end-of-options', ...operands(source, ...commits)], { echo: true });
  }

  /**
   * Merges two commits without a worktree or index (`git merge-tree
   * --write-tree`): the merged tree and the paths that conflict (in the tree
   * with conflict markers). Git finds their merge base itself, so this
   * repository needs the history back to it.
   */
  async mergeTrees(ours: string, theirs: string): Promise<{ tree: string; conflicts: string[] }> {
    const args = ['merge-tree', '--write-tree', '--name-only', '--no-messages', '--end-of-options'];
    try {
      return { tree: (await this.raw([...args, ...operands(ours, theirs)])).trim(), conflicts: [] };
    } catch (error) {
      // Exit 1: the merge has conflicts; the tree's id, then one conflicted path a line.
      if (!(error instanceof ProcessError) || error.exitCode !== 1) throw error;
      const [tree = '', ...paths] = error.output.split('\n').filter(Boolean);
      return { tree: tree.trim(), conflicts: [...new Set(paths)] };
    }
  }

  /** True when `ancestor` is `commit` or one of its ancestors. */
  async isAncestor(ancestor: string, commit: string): Promise<boolean> {
    try {
      await this.raw(['merge-base', '--is-ancestor', '--end-of-options', ...operands(ancestor, commit)]);
      return true;
    } catch (error) {
      if (error instanceof ProcessError && error.exitCode === 1) return false;
      throw error;
    }
  }

  /** The commits reachable from `include` but from none of `exclude`, newest first, at most `max`; and how many there are. */
  async commitsIn(
    include: string,
    exclude: readonly string[],
    max: number,
  ): Promise<{ commits: Array<{ commit: string; author: string; subject: string }>; total: number }> {
    const not = exclude.length ? ['--not', ...operands(...exclude)] : [];
    operands(include);
    const total = Number((await this.raw(['rev-list', '--count', include, ...not, '--'])).trim());
    const out = await this.raw(['log', `--max-count=${max}`, '--format=%H%x00%an <%ae>%x00%s', include, ...not, '--']);
    const commits = out
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [commit = '', author = '', subject = ''] = line.split('\0');
        return { commit, author, subject };
      });
    return { commits, total };
  }

  /** `rev-list --reverse --parents from..to`: the commits of the range, oldest first, each with its parents. */
  async rangeCommits(from: string, to: string): Promise<Array<{ commit: string; parents: string[] }>> {
    const out = await this.raw([
      'rev-list',
      '--reverse',
      '--parents',
      '--end-of-options',
      `${operands(from)[0]}..${to}`,
      '--',
    ]);
    return out
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [commit = '', ...parents] = line.split(' ');
        return { commit, parents };
      });
  }

  /**
   * What `commit` changes against `parent`, one entry per file, renames not
   * detected: both modes (`000000` for absent) and whether git sees binary
   * content (its numstat shows `-`).
   */
  async commitChanges(
    parent: string,
    commit: string,
  ): Promise<Array<{ path: string; oldMode: string; newMode: string; binary: boolean }>> {
    const pair = ['--end-of-options', ...operands(parent, commit)];
    const raw = await this.raw(['diff-tree', '-r', '-z', '--no-renames', '--raw', ...pair, '--']);
    const numstat = await this.raw(['diff-tree', '-r', '-z', '--no-renames', '--numstat', ...pair, '--']);
    const binary = new Set<string>();
    // With -z and no rename detection each record is `added<TAB>removed<TAB>path<NUL>`.
    for (const record of numstat.split('\0')) {
      const [added, removed, ...file] = record.split('\t');
      if (added === '-' && removed === '-') binary.add(file.join('\t'));
    }
    const parts = raw.split('\0');
    const changes: Array<{ path: string; oldMode: string; newMode: string; binary: boolean }> = [];
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const match = /^:(\d{6}) (\d{6}) /.exec(parts[i] as string);
      const file = parts[i + 1] as string;
      if (match)
        changes.push({
          path: file,
          oldMode: match[1] as string,
          newMode: match[2] as string,
          binary: binary.has(file),
        });
    }
    return changes;
  }

  /**
   * The files that differ between two commits, renames detected (git's
   * default 50%): `from` is the old path of a rename, else the same as `path`.
   */
  async renamedChanges(from: string, to: string): Promise<Array<{ path: string; from: string }>> {
    const parts = (
      await this.raw([
        'diff',
        '-z',
        '--raw',
        '--find-renames',
        '--no-ext-diff',
        '--end-of-options',
        ...operands(from, to),
        '--',
      ])
    ).split('\0');
    const changes: Array<{ path: string; from: string }> = [];
    for (let i = 0; i < parts.length; i++) {
      const status = /^:\d{6} \d{6} [0-9a-f]+ [0-9a-f]+ ([A-Z])/.exec(parts[i] as string)?.[1];
      if (status === undefined) continue;
      if (status === 'R' || status === 'C') {
        changes.push({ from: parts[i + 1] as string, path: parts[i + 2] as string });
        i += 2;
      } else {
        changes.push({ from: parts[i + 1] as string, path: parts[i + 1] as string });
        i += 1;
      }
    }
    return changes;
  }

  /** The tree of a commit. */
  async treeOf(commit: string): Promise<string> {
    return (await this.raw(['rev-parse', '--verify', '--end-of-options', `${commit}^{tree}`])).trim();
  }

  /** The full name a rev names (`refs/heads/x`, `refs/tags/v1`), or '' for a commit id or an ambiguous name. */
  async fullRefName(rev: string): Promise<string> {
    // No ref name starts with '-', and rev-parse would echo --end-of-options here.
    if (rev.startsWith('-')) return '';
    return (await orAbsent(this.raw(['rev-parse', '--symbolic-full-name', rev]))).trim();
  }

  /** The object folder of this repository (a bare mirror's or a working clone's). */
  async objectsDir(): Promise<string> {
    return path.resolve(this.dir, (await this.raw(['rev-parse', '--git-path', 'objects'])).trim());
  }

  /** True when `name` is a valid branch name. */
  async isValidBranchName(name: string): Promise<boolean> {
    try {
      await this.raw(['check-ref-format', `refs/heads/${name}`]);
      return true;
    } catch (error) {
      if (error instanceof ProcessError && error.exitCode === 1) return false;
      throw error;
    }
  }

  /** Untracked files that are not ignored (`git ls-files --others --exclude-standard`). */
  async untrackedFiles(): Promise<string[]> {
    return (await this.raw(['ls-files', '--others', '--exclude-standard', '-z'])).split('\0').filter(Boolean);
  }

  /** The mode (`100644`, `100755`) of `file` at `commit`, or null when the commit has no such file. */
  async fileMode(commit: string, file: string): Promise<string | null> {
    const out = await this.raw(['ls-tree', '--end-of-options', `${operands(commit)[0]}^{commit}`, '--', file]);
    return /^(\d+) /.exec(out)?.[1] ?? null;
  }

  /**
   * `git merge-file`: merges the change from `base` to `theirs` into the
   * file `ours`, which gets the result, conflict markers labelled with
   * `labels` included. Returns the number of conflicts.
   */
  async mergeFile(ours: string, base: string, theirs: string, labels: [string, string, string]): Promise<number> {
    try {
      await this.raw(['merge-file', '-L', labels[0], '-L', labels[1], '-L', labels[2], ours, base, theirs]);
      return 0;
    } catch (error) {
      // The exit code is the number of conflicts; a negative one (an error) arrives as 255.
      if (error instanceof ProcessError && error.exitCode !== null && error.exitCode > 0 && error.exitCode < 128)
        return error.exitCode;
      throw error;
    }
  }
}
