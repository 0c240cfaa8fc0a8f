import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import os from 'node:os';
import { PassThrough } from 'node:stream';

import { main } from '../../src/cli.js';
import { BIN, ccacheDir, pathWith } from './repos.js';

/**
 * Keys whose values are sentences for people (messages, hints, fixes, titles,
 * free-form details, other tools' output); `parent.key` names a key only
 * inside the object held under `parent`. A contract pins that they are there
 * and are text, not their wording.
 */
const PROSE = new Set([
  'message',
  'hint',
  'detail',
  'fix',
  'title',
  'notes',
  'problems',
  'stderr',
  'blindSpots',
  'clangFormat.reason',
  'cmakeFormat.reason',
  'twin.shows',
  'twin.cannotShow',
]);

export interface Names {
  /** Folders to print as `<name>`, e.g. `{ project: '/tmp/msp-project-x' }`. */
  paths?: Record<string, string>;
  /** Other strings that differ between machines (a compiler's name), to print as `<name>`. */
  literals?: Record<string, string>;
  /** Commits to print as `<name>`; any other 40-hex id becomes `<sha1>`, `<sha2>`, ... in order of appearance. */
  shas?: Record<string, string>;
  /**
   * Keys whose values differ between machines or runs (timings, tool versions, pids): printed as their type,
   * `<number>`. `parent.key` names a key only inside the object held under `parent`.
   */
  vary?: string[];
}

const CHECK_KEYS = ['detail', 'fix', 'id', 'required', 'status', 'title'];

/**
 * A check of `doctor`, `verify` or `test` (`{id, title, status, detail,
 * fix?, required}`, title/detail/fix text) as one line:
 * `<id>: <status>, required|optional[, fix]`. Anything else shaped even
 * slightly differently stays an object, so a change of shape shows.
 */
function checkLine(v: object): string | null {
  const c = v as Record<string, unknown>;
  const keys = Object.keys(c).sort();
  const expected = CHECK_KEYS.filter((k) => k !== 'fix' || 'fix' in c);
  if (keys.join() !== expected.join()) return null;
  if (typeof c['id'] !== 'string' || typeof c['status'] !== 'string' || typeof c['title'] !== 'string') return null;
  if (
    typeof c['detail'] !== 'string' ||
    typeof c['required'] !== 'boolean' ||
    ('fix' in c && typeof c['fix'] !== 'string')
  )
    return null;
  return `${c['id']}: ${c['status']}, ${c['required'] ? 'required' : 'optional'}${'fix' in c ? ', fix' : ''}`;
}

function typeTag(value: unknown): string {
  return Array.isArray(value) ? '<array>' : value === null ? '<null>' : `<${typeof value}>`;
}

/**
 * The `--json` output of a run with everything that differs between runs and
 * machines replaced by a name: temp folders, commit ids, times, build keys,
 * prose and the `vary` keys. Equal results mean equal shape, types and stable
 * values. The same commit gets the same name everywhere in one result, so
 * relations ("the saved stash is the one the restore command names") stay
 * visible.
 */
export function normalise(value: unknown, names: Names = {}): unknown {
  const folders: Array<[string, string]> = [];
  for (const [name, dir] of Object.entries(names.paths ?? {})) {
    folders.push([dir, `<${name}>`]);
    const real = realpathSync(dir);
    if (real !== dir) folders.push([real, `<${name}>`]);
  }
  folders.push([realpathSync(os.tmpdir()), '<tmp>'], [os.tmpdir(), '<tmp>']);
  for (const [name, literal] of Object.entries(names.literals ?? {})) folders.push([literal, `<${name}>`]);
  folders.sort((a, b) => b[0].length - a[0].length);

  const labels = new Map<string, string>(
    Object.entries(names.shas ?? {})
      .filter(([, sha]) => /^[0-9a-f]{40}$/.test(sha))
      .map(([name, sha]) => [sha, `<${name}>`]),
  );
  let next = 1;
  const label = (sha: string) => {
    if (!labels.has(sha)) labels.set(sha, `<sha${next++}>`);
    return labels.get(sha) as string;
  };
  const vary = new Set(names.vary ?? []);

  const text = (s: string): string => {
    let out = s;
    for (const [dir, name] of folders) out = out.split(dir).join(name);
    out = out.replace(/\b[0-9a-f]{40}\b/g, label);
    // Short ids (12 characters, as in folder names) of the named commits.
    for (const [sha, name] of labels) out = out.split(sha.slice(0, 12)).join(name.replace('>', ':12>'));
    return out
      .replace(/\d{4}-\d\d-\d\dT\d\d[-:]\d\d[-:]\d\d[-.]\d{3}Z/g, '<time>')
      .replace(/\b(release|debug)-[0-9a-f]{10}\b/g, '$1-<key>')
      .replace(/^[0-9a-f]{16}$/, '<hex16>');
  };
  // `key` is the nearest object key above `v`; `parent` the key of the object holding it.
  const walk = (v: unknown, key: string | null, parent: string | null): unknown => {
    if (key !== null && (vary.has(key) || vary.has(`${parent}.${key}`))) return typeTag(v);
    if (Array.isArray(v)) return v.map((x) => walk(x, key, parent));
    if (typeof v === 'string')
      return key !== null && (PROSE.has(key) || PROSE.has(`${parent}.${key}`)) ? '<text>' : text(v);
    if (v !== null && typeof v === 'object')
      return checkLine(v) ?? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k, key)]));
    return v;
  };
  return walk(value, null, null);
}

export interface Outcome {
  code: number;
  /** The normalised `--json` object, or null when stdout held none. */
  json: unknown;
}

/** `args` with `--json`, before a `--` (what follows `--` goes to CMake). */
function withJson(args: string[]): string[] {
  const end = args.indexOf('--');
  return end < 0 ? [...args, '--json'] : [...args.slice(0, end), '--json', ...args.slice(end)];
}

/**
 * Runs the CLI in this process with `--json` and returns the exit code and
 * the normalised JSON. Unlike `runCli`, an empty stdout is allowed (it is
 * null here), so usage errors can be pinned too.
 */
export async function runJson(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined>; names?: Names },
): Promise<Outcome> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const chunks: Buffer[] = [];
  stdout.on('data', (c: Buffer) => chunks.push(c));
  stderr.resume();
  const code = await main({
    argv: withJson(args),
    cwd: options.cwd,
    env: { PATH: process.env['PATH'], HOME: process.env['HOME'], CCACHE_DIR: ccacheDir(), ...options.env },
    stdout,
    stderr,
  });
  const text = Buffer.concat(chunks).toString('utf8');
  return { code, json: text.trim() === '' ? null : normalise(JSON.parse(text), options.names) };
}

/**
 * As `runJson`, but runs the built CLI (bin/, run `npm run build` first) as a
 * process of its own, for a PATH that the whole process sees. It inherits
 * nothing from this process's environment but HOME.
 */
export function spawnJson(
  args: string[],
  options: { cwd: string; env: Record<string, string>; names?: Names },
): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const env: Record<string, string> = {
      ...(process.env['HOME'] ? { HOME: process.env['HOME'] } : {}),
      ...options.env,
    };
    const child = spawn(process.execPath, [BIN, ...withJson(args)], { cwd: options.cwd, env });
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.resume();
    child.on('error', reject);
    child.on('close', (code) =>
      resolve({ code: code ?? -1, json: stdout.trim() === '' ? null : normalise(JSON.parse(stdout), options.names) }),
    );
  });
}

/**
 * Groups the outcomes of a table by equal outcome: `{ "apply, status": outcome }`,
 * so "every command does X" reads as one entry. A failure's `command` that is the
 * row's own command reads `<command>`, so that equal failures of several commands group.
 */
export function byOutcome(outcomes: Record<string, Outcome>): Record<string, Outcome> {
  const groups = new Map<string, { names: string[]; outcome: Outcome }>();
  for (const [name, given] of Object.entries(outcomes)) {
    const json = given.json as Record<string, unknown> | null;
    const outcome =
      json !== null && 'error' in json && json['command'] === name.split(' ')[0]
        ? { ...given, json: { ...json, command: '<command>' } }
        : given;
    const key = JSON.stringify(outcome);
    const group = groups.get(key) ?? { names: [], outcome };
    group.names.push(name);
    groups.set(key, group);
  }
  return Object.fromEntries([...groups.values()].map((g) => [g.names.join(', '), g.outcome]));
}

/** Runs each row (name -> arguments) in turn; name -> outcome. */
export async function runTable(
  rows: Record<string, string[]>,
  run: (args: string[]) => Promise<Outcome>,
): Promise<Record<string, Outcome>> {
  const out: Record<string, Outcome> = {};
  for (const [name, args] of Object.entries(rows)) out[name] = await run(args);
  return out;
}

/** A folder holding only a link to git: as PATH, a machine without any other tool. */
export function gitOnlyPath(): string {
  return pathWith('git');
}
