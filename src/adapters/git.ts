import { simpleGit, type SimpleGit } from 'simple-git';

import { definedEnv, type Env } from './env.js';
import type { Logger } from './log.js';

/** A failed git command, with git's own stderr. */
export class GitCommandError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly stderr: string,
  ) {
    super(`git ${args.join(' ')} failed: ${lastLines(stderr, 8)}`);
    this.name = 'GitCommandError';
  }
}

export function lastLines(text: string, count: number): string {
  return text.trim().split('\n').slice(-count).join('\n');
}

export interface StatusEntry {
  path: string;
  /** Two-letter porcelain code, e.g. ` M`, `??`. */
  code: string;
}

export const STATE_AUTHOR = { name: 'mlx-storage-pr', email: 'mlx-storage-pr@localhost' };

/** One git working folder. Every method runs exactly one git command. */
export class Git {
  private readonly git: SimpleGit;

  /** `env` is the whole environment git runs with (the command's injected one), not additions to process.env. */
  constructor(
    readonly dir: string,
    private readonly log: Logger,
    private readonly env: Env,
  ) {
    // The environment is the user's own (editor, pager, ssh settings), not untrusted input,
    // so simple-git's checks on those variables stay off; its checks on arguments stay on.
    const unsafe = {
      allowUnsafeEditor: true,
      allowUnsafePager: true,
      allowUnsafeSshCommand: true,
      allowUnsafeAskPass: true,
      allowUnsafeGitProxy: true,
      allowUnsafeConfigEnvCount: true,
    };
    this.git = simpleGit({ baseDir: dir, trimmed: false, unsafe }).env({ ...definedEnv(env), LC_ALL: 'C' });
  }

  /** The same folder with a separate index file, for building trees without touching the user's index. */
  withIndex(indexFile: string): Git {
    return new Git(this.dir, this.log, { ...this.env, GIT_INDEX_FILE: indexFile });
  }

  async raw(args: string[], options: { echo?: boolean } = {}): Promise<string> {
    if (options.echo) this.log.command(`git ${args.join(' ')}`, this.dir);
    else this.log.debug(`git ${args.join(' ')}`);
    try {
      return await this.git.raw(args);
    } catch (error) {
      throw new GitCommandError(args, (error as Error).message);
    }
  }

  async init(): Promise<void> {
    await this.raw(['init', '--quiet']);
  }

  async fetchCommit(source: string, commit: string, options: { depth?: number }): Promise<void> {
    const args = ['fetch', '--quiet', '--no-tags'];
    if (options.depth !== undefined) args.push('--depth', String(options.depth));
    await this.raw([...args, source, commit], { echo: true });
  }

  async lsRemote(source: string): Promise<void> {
    await this.raw(['ls-remote', '--quiet', source, 'HEAD']);
  }

  async hasCommit(commit: string): Promise<boolean> {
    const out = await this.raw(['rev-parse', '--verify', '--quiet', '--end-of-options', `${commit}^{commit}`]).catch(() => '');
    return out.trim().length > 0;
  }

  /** The commit HEAD points at, or null in an empty repository. */
  async head(): Promise<string | null> {
    const out = await this.raw(['rev-parse', '--verify', '--quiet', 'HEAD']).catch(() => '');
    return out.trim() || null;
  }

  async currentBranch(): Promise<string | null> {
    const out = await this.raw(['symbolic-ref', '--quiet', '--short', 'HEAD']).catch(() => '');
    return out.trim() || null;
  }

  /** HEAD's commit, tree, parents and message in one call, or null in an empty repository. */
  async headInfo(): Promise<{ commit: string; tree: string; parents: string[]; message: string } | null> {
    const out = await this.raw(['log', '-1', '--format=%H%x00%T%x00%P%x00%B', 'HEAD', '--']).catch(() => '');
    if (!out) return null;
    const [commit = '', tree = '', parents = '', message = ''] = out.split('\0');
    return { commit, tree, parents: parents.trim().split(' ').filter(Boolean), message };
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

  async readTree(treeish: string): Promise<void> {
    await this.raw(['read-tree', treeish]);
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

  /** `git apply --cached`: changes only the (temporary) index. */
  async applyToIndex(patchFile: string, options: { threeWay?: boolean; reverse?: boolean; check?: boolean } = {}): Promise<void> {
    const args = ['apply', '--cached', '--whitespace=nowarn'];
    if (options.threeWay) args.push('--3way');
    if (options.reverse) args.push('--reverse');
    if (options.check) args.push('--check');
    await this.raw([...args, patchFile]);
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
    return this.raw(['cat-file', 'blob', blob]);
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
    const git = new Git(this.dir, this.log, { ...this.env, ...env });
    return (await git.raw(['commit-tree', tree, '-p', parent, '-m', message])).trim();
  }

  /**
   * `git diff` between two tree-ish values as a patch, in git's default shape
   * whatever the user's diff settings are: `a/`/`b/` prefixes, 3 lines of
   * context, the default algorithm, no colour, no external diff or textconv.
   * Function context follows git's rules and the repository's attributes.
   */
  async diffPatch(from: string, to: string, paths: readonly string[]): Promise<string> {
    const config = ['diff.noprefix=false', 'diff.mnemonicPrefix=false', 'diff.suppressBlankEmpty=false', 'diff.relative=false'].flatMap((c) => ['-c', c]);
    const flags = ['--no-color', '--no-ext-diff', '--no-textconv', '--no-renames', '--unified=3', '--inter-hunk-context=0', '--diff-algorithm=myers', '--indent-heuristic', '--src-prefix=a/', '--dst-prefix=b/'];
    return this.raw([...config, 'diff', ...flags, from, to, '--', ...paths]);
  }

  /** Paths that differ between two tree-ish values. */
  async changedPaths(from: string, to: string): Promise<string[]> {
    const out = await this.raw(['diff', '--name-only', '-z', '--no-renames', from, to, '--']);
    return out.split('\0').filter(Boolean);
  }

  /** Paths where the working tree differs from a tree-ish. */
  async worktreeDiff(treeish: string, paths: readonly string[] = []): Promise<string[]> {
    const out = await this.raw(['diff', '--name-only', '-z', '--no-renames', treeish, '--', ...paths]);
    return out.split('\0').filter(Boolean);
  }

  /** Two-way checkout: refuses (without writing) when local changes would be overwritten. */
  async checkoutBranch(branch: string, commit: string): Promise<void> {
    await this.raw(['checkout', '--quiet', '-B', branch, commit], { echo: true });
  }

  async checkoutDetached(commit: string): Promise<void> {
    await this.raw(['checkout', '--quiet', '--detach', commit], { echo: true });
  }

  /** Saves tracked and untracked changes; returns the stash commit, or null when there was nothing. */
  async stash(message: string): Promise<string | null> {
    const before = (await this.raw(['rev-parse', '--verify', '--quiet', 'refs/stash']).catch(() => '')).trim();
    await this.raw(['stash', 'push', '--include-untracked', '--quiet', '-m', message], { echo: true });
    const after = (await this.raw(['rev-parse', '--verify', '--quiet', 'refs/stash']).catch(() => '')).trim();
    return after && after !== before ? after : null;
  }

  async updateRef(ref: string, commit: string): Promise<void> {
    await this.raw(['update-ref', ref, commit]);
  }
}
