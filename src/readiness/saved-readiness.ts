/**
 * A passing run of verify's checks, saved in the workdir with everything the
 * checks read, so that `pr` can stand on it instead of running them again
 * when nothing they read has changed.
 */
import { createHash } from 'node:crypto';
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import path from 'node:path';

import { ifAbsent } from '../adapters/files.js';
import { packageVersion, PACKAGE_ROOT } from '../adapters/package-root.js';
import { EQUIVALENTS_FILE } from '../core/mutant-equivalents.js';
import { comparePaths } from '../core/paths.js';
import { itemsPass } from '../core/report-items.js';
import { inputsName, readinessInputs } from '../core/readiness-inputs.js';
import { CONFIG_FILE } from '../series/config.js';
import { inspectCheckout } from '../series/checkout.js';
import type { Context } from '../series/context.js';
import { MUTANTS_FILE } from '../suite/mutants.js';
import { readSavedChecks, saveChecks, type SavedChecks } from '../suite/saved-results.js';
import type { ReadinessItemsOptions } from './registry.js';
import { skippedItems } from './skip.js';

/** The project's files the checks read that the series hash does not cover. */
const PROJECT_FILES = [CONFIG_FILE, 'pr', MUTANTS_FILE, EQUIVALENTS_FILE];
/** The tool's own files the checks read: the Metal twin and the shims of Apple's headers. */
const TOOL_FILES = ['twin', 'shims'];
/** The environment variables that choose the programs the checks run, and how they build. */
const TOOL_VARIABLES = [
  'PATH',
  'CXX',
  'CC',
  'CLANGXX',
  'SPHINXBUILD',
  'CXXFLAGS',
  'CFLAGS',
  'LDFLAGS',
  'CMAKE_PREFIX_PATH',
];

/** The inputs of a run of verify's checks, and their short name. */
export interface ReadinessKey {
  inputs: string;
  name: string;
}

/** Where a reused result came from. */
export interface ReusedChecks {
  /** When the checks ran (ISO 8601). */
  at: string;
  /** The command that ran them: `verify` or `pr`. */
  command: SavedChecks['command'];
  /** The short name of the inputs they ran with. */
  inputs: string;
}

/**
 * Everything verify's checks read, as `readinessInputs` puts it; null when
 * the checkout does not hold the current series as `apply` made it (not
 * applied, outdated, or with edits of its own): then there is nothing a
 * result could be saved for.
 */
export async function readinessKey(ctx: Context, options: ReadinessItemsOptions): Promise<ReadinessKey | null> {
  const found = await inspectCheckout(ctx);
  if (found.current === null) return null;
  if ((await found.current.git.status()).length > 0) return null;
  const files: Record<string, string | null> = {};
  for (const item of PROJECT_FILES) Object.assign(files, await digests(ctx.projectRoot, item, 'project'));
  for (const item of TOOL_FILES) Object.assign(files, await digests(PACKAGE_ROOT, item, 'tool'));
  // The tool's own code, as one digest: an updated tool may check differently though its version is the same.
  files['tool:dist'] = await toolCodeDigest(PACKAGE_ROOT);
  const resolve = (p: string | undefined) => (p === undefined ? undefined : path.resolve(ctx.cwd, p));
  const inputs = readinessInputs({
    tool: packageVersion(),
    platform: ctx.platform,
    inputHash: found.current.plan.inputHash,
    applied: { commit: found.current.head.commit, tree: found.current.head.tree },
    files,
    tools: Object.fromEntries(TOOL_VARIABLES.map((name) => [name, ctx.env[name]])),
    skipped: skippedItems(options.skip ?? []),
    options: {
      mutants: options.mutants,
      metalCpp: resolve(options.metalCpp),
      include: options.include?.map((p) => path.resolve(ctx.cwd, p)),
      requireMetal: options.requireMetal,
      offline: options.offline,
      depsDir: resolve(options.depsDir),
      sanitize: options.sanitize,
      cxx: options.cxx,
      debug: options.debug,
      upstreamCi: options.upstreamCi,
      cmakeArgs: options.cmakeArgs,
    },
  });
  return { inputs, name: inputsName(inputs) };
}

/**
 * The digest of the file `item` under `root`, or of each file below it when
 * it is a folder, by `<origin>:<path>`; a missing item is null.
 */
async function digests(root: string, item: string, origin: string): Promise<Record<string, string | null>> {
  const file = path.join(root, item);
  const key = `${origin}:${item}`;
  const stats = await ifAbsent(lstat(file), null);
  if (stats === null) return { [key]: null };
  const sha = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
  if (stats.isSymbolicLink()) return { [key]: `link:${sha(await readlink(file))}` };
  if (stats.isFile()) return { [key]: sha(await readFile(file)) };
  if (!stats.isDirectory()) return { [key]: 'other' };
  const result: Record<string, string | null> = {};
  const entries = await readdir(file);
  for (const name of entries.sort(comparePaths))
    Object.assign(result, await digests(root, path.posix.join(item, name), origin));
  return result;
}

/** One digest of the tool's built code (`dist/` under `root`): it changes with any file there. */
export async function toolCodeDigest(root: string): Promise<string> {
  return createHash('sha256')
    .update(JSON.stringify(await digests(root, 'dist', 'tool')))
    .digest('hex');
}

/** The passing checks saved for exactly these inputs, or null. */
export async function readReadiness(ctx: Context, key: ReadinessKey): Promise<SavedChecks | null> {
  const saved = await readSavedChecks(ctx.layout.verify.results, key.inputs);
  // Only passing runs are saved; one that does not pass is never reused, however it got there.
  if (saved === null || !itemsPass(saved.checks)) return null;
  return saved;
}

/**
 * Saves a passing run for `key`, when the inputs read after the run are still
 * those read before it (nothing changed while the checks ran).
 */
export async function saveReadiness(
  ctx: Context,
  options: ReadinessItemsOptions,
  key: ReadinessKey | null,
  result: Omit<SavedChecks, 'at'>,
): Promise<void> {
  if (key === null) return;
  if (!itemsPass(result.checks)) return;
  const after = await readinessKey(ctx, options);
  if (after?.inputs !== key.inputs) return;
  await saveChecks(ctx, ctx.layout.verify.results, key.inputs, { ...result, at: new Date().toISOString() });
}
