import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { expect } from 'vitest';

import { git, makeProject, makeUpstream, runCli, tempDir, type CliResult } from './repos.js';

/** The user's own words in pr/, as `pr` needs them. */
export const MESSAGE =
  'Add a read-only Metal storage view\n\nLets external Metal code borrow the buffer of an evaluated array.\n';
export const DESCRIPTION =
  '## Proposed changes\n\nA read-only view of the Metal buffer of an evaluated array.\n\n## AI usage disclosure\n\nNo AI was used for this pull request.\n';
/** Every check but the PR text, which needs nothing but pr/: the build and tool checks have tests of their own. */
export const ONLY_PR_TEXT = ['--skip', 'format', 'metal-typecheck', 'docs', 'build'];

export const IDENTITY = {
  GIT_AUTHOR_NAME: 'Ada Lovelace',
  GIT_AUTHOR_EMAIL: 'ada@example.invalid',
  GIT_COMMITTER_NAME: 'Ada Lovelace',
  GIT_COMMITTER_EMAIL: 'ada@example.invalid',
};

export interface World {
  upstream: { dir: string; sha: string };
  /** The fork: a bare clone of the upstream. */
  fork: string;
  project: string;
  checkout: string;
  env: Record<string, string>;
  /** `pr --push --fork <fork> --json <args>` in the project. */
  pr(...args: string[]): Promise<CliResult>;
  /** The refs of the fork, name -> id. */
  forkRefs(): Record<string, string>;
}

export function writePrText(project: string, message = MESSAGE, description = DESCRIPTION): void {
  mkdirSync(path.join(project, 'pr'), { recursive: true });
  writeFileSync(path.join(project, 'pr', 'commit-message.txt'), message);
  writeFileSync(path.join(project, 'pr', 'description.md'), description);
}

/** A git repository's refs, name -> id. */
export function refsOf(repo: string): Record<string, string> {
  return Object.fromEntries(
    git(repo, 'for-each-ref', '--format=%(refname) %(objectname)')
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(' ').reverse() as [string, string])
      .map(([id, ref]) => [ref, id]),
  );
}

/** A project applied against `upstream` in its own workdir, as a fresh clone in CI would have it. */
export async function cloneProject(upstream: { dir: string; sha: string }, env: Record<string, string>) {
  const project = makeProject(upstream.sha);
  writePrText(project);
  const applied = await runCli(['apply'], { cwd: project, env });
  expect(applied.code, applied.stderr).toBe(0);
  return { project, checkout: path.join(project, '.work', 'mlx') };
}

export async function makeWorld(extraEnv: Record<string, string> = {}): Promise<World> {
  const upstream = makeUpstream();
  const forks = tempDir('msp-fork-');
  const fork = path.join(forks, 'mlx.git');
  git(forks, 'clone', '--quiet', '--bare', upstream.dir, fork);
  // No git configuration of the machine's user: the identity comes from the environment only.
  const env = {
    HOME: tempDir('msp-home-'),
    GIT_CONFIG_NOSYSTEM: '1',
    MLX_REPO: upstream.dir,
    ...IDENTITY,
    ...extraEnv,
  };
  const { project, checkout } = await cloneProject(upstream, env);
  return {
    upstream,
    fork,
    project,
    checkout,
    env,
    pr: (...args) => runCli(['pr', '--push', '--fork', fork, '--json', ...args], { cwd: project, env }),
    forkRefs: () => refsOf(fork),
  };
}

/** A commit made by hand on the fork's branch (a clone, a commit, a push), as during a review. */
export function pushByHand(fork: string, subject: string, branch = 'mlx-storage-pr'): string {
  const clone = path.join(tempDir('msp-hand-'), 'clone');
  git(path.dirname(clone), 'clone', '--quiet', '--branch', branch, fork, clone);
  writeFileSync(path.join(clone, 'REVIEW.md'), `${subject}\n`);
  git(clone, 'add', 'REVIEW.md');
  git(clone, 'commit', '--quiet', '-m', subject);
  git(clone, 'push', '--quiet', 'origin', branch);
  return git(clone, 'rev-parse', 'HEAD').trim();
}
