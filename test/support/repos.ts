import { execFileSync, spawn } from 'node:child_process';
import { accessSync, constants, cpSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';

import { execa } from 'execa';
import { inject } from 'vitest';

import { main } from '../../src/cli.js';
import type { Seams } from '../../src/commands/spec.js';
import { tempDir } from './temp.js';

export { tempDir };

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURES = path.join(REPO_ROOT, 'fixtures');
export const BIN = path.join(REPO_ROOT, 'bin', 'mlx-storage-pr.js');
/**
 * The built CLI as bin/ runs it, with the seams a test passes to `main(io)` (where to pause, how often to
 * poll): `node CLI_WITH_SEAMS '<seams as JSON>' <command> ...`, for tests that need a process of its own.
 */
export const CLI_WITH_SEAMS = path.join(REPO_ROOT, 'test', 'support', 'cli-with-seams.mjs');

const GIT_ENV = {
  GIT_AUTHOR_NAME: 'Fixture',
  GIT_AUTHOR_EMAIL: 'fixture@example.invalid',
  GIT_COMMITTER_NAME: 'Fixture',
  GIT_COMMITTER_EMAIL: 'fixture@example.invalid',
  GIT_AUTHOR_DATE: '2025-01-01T00:00:00Z',
  GIT_COMMITTER_DATE: '2025-01-01T00:00:00Z',
  GIT_CONFIG_NOSYSTEM: '1',
};

/** The run's one ccache folder (test/support/global-setup.ts): fixture builds share objects, not the user's cache. */
export function ccacheDir(): string {
  return inject('ccacheDir');
}

/** Runs a command line as it is printed for people (through sh), leaving the test's event loop free; its stdout. */
export async function sh(
  command: string,
  options: { cwd?: string; env?: Record<string, string | undefined> } = {},
): Promise<string> {
  const { stdout } = await execa('sh', ['-c', command], { ...options, stripFinalNewline: false });
  return stdout;
}

/** Where `program` is on this machine's PATH, as `command -v` finds it, without starting a process. */
export function which(program: string): string {
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    const candidate = path.join(dir || '.', program);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not in this folder
    }
  }
  throw new Error(`${program} is not on PATH`);
}

/** Whether `program` is on this machine's PATH. */
export function onPath(program: string): boolean {
  try {
    which(program);
    return true;
  } catch {
    return false;
  }
}

/** A PATH that holds only the named programs of this machine (symlinked into a temp folder). */
export function pathWith(...programs: string[]): string {
  const bin = tempDir('msp-bin-');
  for (const program of programs) symlinkSync(which(program), path.join(bin, program));
  return bin;
}

/** A short git command in a fixture's setup (synchronous: a few milliseconds; long ones use `gitAsync`). */
export function git(dir: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, ...GIT_ENV } });
}

/** A git command that can take a while (clone, fetch, a loop of commits): the test's event loop stays free. */
export async function gitAsync(dir: string, ...args: string[]): Promise<string> {
  const { stdout } = await execa('git', args, { cwd: dir, env: GIT_ENV, stripFinalNewline: false });
  return stdout;
}

/** A real git repository made from a fixture folder (after `prepare` edits it), with one commit. */
export function makeUpstream(fixture = 'upstream', prepare?: (dir: string) => void): { dir: string; sha: string } {
  const dir = tempDir('msp-upstream-');
  cpSync(path.join(FIXTURES, fixture), dir, { recursive: true });
  prepare?.(dir);
  git(dir, 'init', '--quiet', '--initial-branch=main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '--quiet', '-m', 'fixture upstream');
  return { dir, sha: git(dir, 'rev-parse', 'HEAD').trim() };
}

/** A copy of a fixture project (default fixtures/project) pinned to `sha`. */
export function makeProject(sha: string, fixture = 'project'): string {
  const dir = tempDir('msp-project-');
  cpSync(path.join(FIXTURES, fixture), dir, { recursive: true });
  editConfig(dir, (config) => {
    (config['upstream'] as Record<string, unknown>)['commit'] = sha;
  });
  return dir;
}

export function editConfig(project: string, edit: (config: Record<string, unknown>) => void): void {
  const file = path.join(project, 'mlx-storage-pr.config.json');
  const config = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  edit(config);
  writeFileSync(file, JSON.stringify(config, null, 2));
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  // The command's --json object: tests read it field by field.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
}

function collect(stream: PassThrough): () => string {
  const chunks: Buffer[] = [];
  stream.on('data', (c: Buffer) => chunks.push(c));
  return () => Buffer.concat(chunks).toString('utf8');
}

/** Runs the CLI in this process (fast), with its own cwd and env; `columns` makes stdout look like a terminal that wide. */
export async function runCli(
  args: string[],
  options: {
    cwd: string;
    env?: Record<string, string | undefined>;
    signal?: AbortSignal;
    onStderr?: (text: string) => void;
    columns?: number;
    seams?: Seams;
  },
): Promise<CliResult> {
  const stdout: PassThrough & { isTTY?: boolean; columns?: number } = new PassThrough();
  if (options.columns !== undefined) Object.assign(stdout, { isTTY: true, columns: options.columns });
  const stderr = new PassThrough();
  const out = collect(stdout);
  const err = collect(stderr);
  if (options.onStderr) stderr.on('data', (c: Buffer) => options.onStderr?.(c.toString()));
  const env = { PATH: process.env['PATH'], HOME: process.env['HOME'], CCACHE_DIR: ccacheDir(), ...options.env };
  const code = await main({
    argv: args,
    cwd: options.cwd,
    env,
    stdout,
    stderr,
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.seams ? { seams: options.seams } : {}),
  });
  const text = out();
  let json: unknown;
  if (args.includes('--json')) json = JSON.parse(text);
  return { code, stdout: text, stderr: err(), json };
}

/** Runs the built CLI as a separate process. */
export function spawnCli(args: string[], options: { cwd: string; env?: Record<string, string> }): Promise<CliResult> {
  return spawnCliAs([], args, options);
}

/** HEAD, index, status and every file's content: equal snapshots mean nothing changed. */
export function snapshot(checkout: string): string {
  const head = git(checkout, 'rev-parse', 'HEAD');
  const branch = git(checkout, 'rev-parse', '--abbrev-ref', 'HEAD');
  const index = git(checkout, 'ls-files', '--stage');
  const status = git(checkout, 'status', '--porcelain=v1', '--untracked-files=all');
  const files = git(checkout, 'ls-files', '--cached', '--others', '-z')
    .split('\0')
    .filter(Boolean)
    .sort()
    .map((f) => `${f}\n${readFileSync(path.join(checkout, f), 'utf8')}`)
    .join('\n---\n');
  return [head, branch, index, status, files].join('\n===\n');
}

/** The uid/gid of `nobody`, which tests use to drop root's privileges. */
const UNPRIVILEGED = 65534;

/**
 * How to run the CLI so that file permissions apply: as root (which ignores
 * them) through `setpriv` as nobody, otherwise as the user itself. Null with
 * the reason when neither is possible.
 */
export async function unprivilegedRunner(): Promise<
  { prefix: string[]; own: (dir: string) => Promise<void> } | { skip: string }
> {
  if (process.getuid?.() !== 0) return { prefix: [], own: async () => {} };
  if (!onPath('setpriv')) {
    return {
      skip: 'running as root, which ignores file permissions, and setpriv (util-linux) is not installed to drop privileges',
    };
  }
  const prefix = ['setpriv', `--reuid=${UNPRIVILEGED}`, `--regid=${UNPRIVILEGED}`, '--clear-groups', '--'];
  try {
    // The dropped user must be able to run the tool itself: a project inside a private folder is out of its reach.
    await execa(prefix[0]!, [
      ...prefix.slice(1),
      process.execPath,
      '-e',
      `require('node:fs').accessSync(${JSON.stringify(BIN)})`,
    ]);
  } catch {
    return {
      skip: `running as root, and the unprivileged user (uid ${UNPRIVILEGED}) cannot read ${BIN}: a parent folder is private; put the project where other users can read it to run these`,
    };
  }
  return {
    prefix,
    own: async (dir) => {
      await execa('chown', ['-R', `${UNPRIVILEGED}:${UNPRIVILEGED}`, dir]);
    },
  };
}

/** Runs the built CLI as a separate process behind `prefix` (e.g. setpriv). */
export function spawnCliAs(
  prefix: string[],
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const [command, ...rest] = [...prefix, process.execPath, BIN, ...args] as [string, ...string[]];
    const child = spawn(command, rest, { cwd: options.cwd, env: { ...process.env, ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      try {
        resolve({ code: code ?? -1, stdout, stderr, json: args.includes('--json') ? JSON.parse(stdout) : undefined });
      } catch {
        reject(new Error(`exit ${code}: no JSON on stdout; stderr:\n${stderr}`));
      }
    });
  });
}
