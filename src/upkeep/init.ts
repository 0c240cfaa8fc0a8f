import { chmod, copyFile, lstat, mkdir, mkdtemp, readdir, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import type { Env } from '../adapters/env.js';
import { Git } from '../adapters/git.js';
import { createLogger, type Logger } from '../adapters/log.js';
import { PACKAGE_ROOT } from '../adapters/package-root.js';
import { ProcessError } from '../adapters/process-error.js';
import { UserError } from '../core/errors.js';
import { branchNameProblem } from '../core/git-values.js';
import { CONFIG_FILE, DEFAULT_UPSTREAM_URL, parseConfig, type Config } from '../series/config.js';
import { mlxVersion } from './repin.js';
import { buildPlan } from '../series/plan.js';
import { findProjectRoot, loadConfig, loadPlanInputs } from '../series/project-files.js';
import { chooseSource, type Source } from '../series/source.js';
import { buildTree } from '../series/applied-tree.js';

export interface InitOptions {
  cwd: string;
  env: Env;
  /** The new project folder (--project). */
  target: string;
  /** The commit, branch or tag whose commits become the series (--from). */
  from: string;
  /** The commit the series starts from (--pin); default: the pin of the project in `cwd`. */
  pin?: string | undefined;
  mlxRepo?: string | undefined;
  verbose?: boolean | undefined;
  logger?: Logger | undefined;
}

export interface InitPatch {
  name: string;
  file: string;
  /** The path the file had at the pin, when the series renames it. */
  renamedFrom?: string;
}

export interface InitData {
  command: 'init';
  project: string;
  source: string;
  pin: string;
  version: string;
  from: string;
  head: string;
  branch: string;
  commits: number;
  patches: InitPatch[];
  /** The tree of `head`, which the new series applied to the pin reproduces. */
  tree: string;
}

// ---------------------------------------------------------------------------
// Pure planning

/** One file changed by one commit of the range, as git reports it (modes `000000` for absent). */
export interface CommitChange {
  path: string;
  oldMode: string;
  newMode: string;
  binary: boolean;
}

/** Why a change cannot be carried by a series, or null when it can. */
export function unsupportedChange(change: CommitChange): string | null {
  if (change.binary) return 'a binary file: patches are text';
  const modes = [change.oldMode, change.newMode];
  if (modes.includes('120000')) return 'a symbolic link: a series carries regular files only';
  if (modes.includes('160000')) return 'a submodule: a series carries regular files only';
  return null;
}

/**
 * The files of the final diff in the order the range first changes them; a
 * renamed file counts from the first change of either of its paths.
 */
export function orderByFirstChange<T extends { path: string; from: string }>(
  finalChanges: readonly T[],
  commits: ReadonlyArray<readonly CommitChange[]>,
): T[] {
  const first = new Map<string, number>();
  for (const change of commits.flat()) if (!first.has(change.path)) first.set(change.path, first.size);
  const rank = (c: T) => Math.min(first.get(c.path) ?? Infinity, first.get(c.from) ?? Infinity);
  return finalChanges
    .map((change, index) => ({ change, index }))
    .sort((a, b) => rank(a.change) - rank(b.change) || a.index - b.index)
    .map((e) => e.change);
}

/** `0003-mlx-backend-cpu-unary.cpp.patch`: the position in the series and the file's path. */
export function patchName(index: number, file: string): string {
  return `${String(index + 1).padStart(4, '0')}-${file.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[.-]+/, '')}.patch`;
}

const BRANCH = /^[A-Za-z0-9._/-]+$/;

/**
 * The config's branch: the short name of the ref (`refs/heads/fix-x` ->
 * `fix-x`, also for tags and remote branches), or `mlx-<short id>` for a commit
 * or a name a branch cannot have.
 */
export function branchFor(fullName: string, commit: string): string {
  const short =
    /^refs\/(?:heads|tags)\/(.+)$/.exec(fullName)?.[1] ?? /^refs\/remotes\/[^/]+\/(.+)$/.exec(fullName)?.[1];
  if (short !== undefined && BRANCH.test(short) && branchNameProblem(short) === null) return short;
  return `mlx-${commit.slice(0, 12)}`;
}

/**
 * `$schema` of the new config: the package's schema, relative to the project,
 * when the package is the project's neighbour (an ancestor folder's project
 * or its node_modules); null when the path would not survive (a global or
 * temporary install).
 */
export function schemaReference(target: string, packageRoot: string): string | null {
  const relative = path.relative(target, path.join(packageRoot, 'schema', 'config.schema.json')).split(path.sep);
  const rest = relative.slice(relative.findIndex((p) => p !== '..'));
  const nearby = rest.join('/') === 'schema/config.schema.json' || rest[0] === 'node_modules';
  return nearby ? relative.join('/') : null;
}

/** The new project's config: the pin, its version and the branch; no variables, no roles. */
export function initialConfig(options: {
  schema: string | null;
  url: string;
  commit: string;
  version: string;
  branch: string;
}): Record<string, unknown> {
  return {
    ...(options.schema === null ? {} : { $schema: options.schema }),
    upstream: { url: options.url, commit: options.commit, version: options.version },
    branch: options.branch,
  };
}

// ---------------------------------------------------------------------------
// Reading MLX

/**
 * A repository to read the range in, in a temporary folder: for a source on
 * this machine it borrows the source's objects (nothing is copied and nothing
 * is written into the source); for a URL it fetches the two commits' history.
 * Trees built to check the result go into this repository only.
 */
async function openScratch(
  source: Source,
  scratchDir: string,
  refs: { from: string; pin: string },
  log: Logger,
  env: Env,
): Promise<{ scratch: Git; from: string; fullName: string; pin: string }> {
  const scratch = new Git(scratchDir, log, env);
  await scratch.init();
  if (source.kind === 'path') {
    const origin = new Git(source.display, log, env);
    let objects: string;
    try {
      objects = await origin.objectsDir();
    } catch (error) {
      if (!(error instanceof ProcessError)) throw error;
      throw new UserError('SOURCE_NOT_REPOSITORY', `${source.display} is not a git repository.`, {
        hint: 'Pass an MLX clone or mirror with --mlx-repo <path> (or MLX_REPO).',
        cause: error,
      });
    }
    await writeFile(path.join(scratchDir, '.git', 'objects', 'info', 'alternates'), `${objects}\n`);
    const from = await resolveIn(origin, refs.from, '--from', source);
    const pin = await resolveIn(origin, refs.pin, '--pin', source);
    return { scratch, from, fullName: await origin.fullRefName(refs.from), pin };
  }
  const fetch = async (ref: string, as: string) => {
    try {
      await scratch.fetchRefs(source.location, [`+${ref}:${as}`]);
    } catch (error) {
      if (!(error instanceof ProcessError)) throw error;
      throw new UserError('REF_NOT_FOUND', `${source.display} has no ${ref}.`, {
        hint: 'Name a branch, a tag or a full commit id of that source; a short id works only with a source on this machine (--mlx-repo <path>). --verbose shows what git said.',
        cause: error,
      });
    }
  };
  await fetch(refs.from, 'refs/init/from');
  await fetch(refs.pin, 'refs/init/pin');
  const from = (await scratch.resolveCommit('refs/init/from')) as string;
  const pin = (await scratch.resolveCommit('refs/init/pin')) as string;
  const fullName = /^refs\//.test(refs.from)
    ? refs.from
    : /^[0-9a-f]{40}$/.test(refs.from)
      ? ''
      : `refs/heads/${refs.from}`;
  return { scratch, from, fullName, pin };
}

async function resolveIn(git: Git, rev: string, option: string, source: Source): Promise<string> {
  const commit = await git.resolveCommit(rev);
  if (commit === null)
    throw new UserError('REF_NOT_FOUND', `${option} ${rev}: ${source.display} has no such commit, branch or tag.`, {
      hint: `Name a commit, branch or tag of ${source.display}; a mirror may need \`git fetch\` first.`,
      details: { option, rev, source: source.display },
    });
  return commit;
}

/** The target folder is absent or an empty folder; anything else is refused before any work. */
async function verifyTarget(target: string): Promise<void> {
  const stat = await lstat(target).catch(() => null);
  if (stat === null) return;
  const empty = stat.isDirectory() && (await readdir(target)).length === 0;
  if (!empty)
    throw new UserError(
      'INIT_TARGET_NOT_EMPTY',
      `${target} already exists${stat.isDirectory() ? ' and is not empty' : ' (not a folder)'}.`,
      {
        hint: 'init makes a new project folder: name a folder that does not exist yet (or an empty one), e.g. --project ../my-mlx-change.',
        details: { target },
      },
    );
}

/** The nearest folder of `file`'s ancestors that exists. */
async function nearestExisting(file: string): Promise<string> {
  let dir = path.dirname(file);
  while ((await lstat(dir).catch(() => null)) === null && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

// ---------------------------------------------------------------------------
// The command's work

/**
 * Turns the commits from the pin to `from` into a new project folder: one
 * patch per changed file (in the order the commits first change the files),
 * the PR text placeholders and an empty mutants list. The folder is written
 * aside and renamed into place only once the series, applied to the pin in a
 * temporary index, gives `from`'s tree exactly: a failure leaves nothing.
 */
export async function initProject(options: InitOptions): Promise<InitData> {
  const log = options.logger ?? createLogger({ verbose: options.verbose ?? false });
  const target = path.resolve(options.cwd, options.target);
  await verifyTarget(target);

  // The current folder's project gives the default pin and the upstream URL.
  const here = findProjectRoot(options.cwd);
  const current = options.pin === undefined ? loadConfig(here) : configOrNull(here);
  const pinRef = options.pin ?? (current as NonNullable<typeof current>).upstream.commit;
  const configUrl = current?.upstream.url ?? DEFAULT_UPSTREAM_URL;
  const source = chooseSource(options.mlxRepo, options.env['MLX_REPO'], configUrl, options.cwd);

  const scratchDir = await mkdtemp(path.join(os.tmpdir(), 'mlx-storage-pr-init-'));
  let stage: string | null = null;
  try {
    const { scratch, from, fullName, pin } = await openScratch(
      source,
      scratchDir,
      { from: options.from, pin: pinRef },
      log,
      options.env,
    );
    await verifyDescends(scratch, { pin, from, fromName: options.from });
    const range = await scratch.rangeCommits(pin, from);
    const perCommit = await seriesChanges(scratch, range, { pin, fromName: options.from });
    const version = await pinVersion(scratch, pin);
    const patches = await seriesPatches(scratch, pin, from, perCommit);

    const config = initialConfig({
      schema: schemaReference(target, PACKAGE_ROOT),
      url: source.kind === 'url' ? source.location : configUrl,
      commit: pin,
      version,
      branch: branchFor(fullName, from),
    });
    parseConfig(config, path.join(target, CONFIG_FILE));

    const parent = await nearestExisting(target);
    stage = await mkdtemp(path.join(parent, `.${path.basename(target)}.init-`));
    await writeProject(stage, config, patches);
    // mkdtemp makes the folder for its owner only; a project folder is an ordinary one.
    await chmod(stage, 0o755);

    const tree = await verifyGivesTree(scratch, stage, pin, from);

    await mkdir(path.dirname(target), { recursive: true });
    // rename() replaces an empty folder, and only an empty one.
    await rename(stage, target);
    stage = null;
    return {
      command: 'init',
      project: target,
      source: source.display,
      pin,
      version,
      from,
      head: from,
      branch: config['branch'] as string,
      commits: range.length,
      patches: patches.map(({ text: _text, ...p }) => p),
      tree,
    };
  } finally {
    if (stage !== null) await rm(stage, { recursive: true, force: true });
    await rm(scratchDir, { recursive: true, force: true });
  }
}

/** Refuses a `from` that does not descend from the pin: a series is the commits from the pin to it. */
async function verifyDescends(scratch: Git, c: { pin: string; from: string; fromName: string }): Promise<void> {
  const { pin, from, fromName } = c;
  if (!(await scratch.isAncestor(pin, from)))
    throw new UserError(
      'INIT_NOT_DESCENDANT',
      `${fromName} (${from.slice(0, 12)}) does not descend from the pin ${pin.slice(0, 12)}: a series is the commits from the pin to ${fromName}.`,
      {
        hint: `Rebase the branch onto the pin (\`git rebase ${pin.slice(0, 12)}\`), or name its base with --pin <commit>.`,
        details: { from, pin },
      },
    );
}

/** The changes of each commit of the range, in order; a merge or a change a patch cannot hold is refused. */
async function seriesChanges(
  scratch: Git,
  range: ReadonlyArray<{ commit: string; parents: string[] }>,
  c: { pin: string; fromName: string },
): Promise<CommitChange[][]> {
  const { pin, fromName } = c;
  const subject = async (commit: string) =>
    `${commit.slice(0, 12)} ("${(await scratch.commitContent(commit)).message.split('\n')[0] ?? ''}")`;
  const perCommit: CommitChange[][] = [];
  for (const { commit, parents } of range) {
    if (parents.length > 1)
      throw new UserError('INIT_UNSUPPORTED_CHANGE', `Commit ${await subject(commit)} is a merge.`, {
        hint: `A series is a straight line of commits: rebase ${fromName} onto the pin (\`git rebase ${pin.slice(0, 12)}\`) and run init again.`,
        details: { commit },
      });
    const changes = await scratch.commitChanges(parents[0] ?? pin, commit);
    for (const change of changes) {
      const why = unsupportedChange(change);
      if (why !== null)
        throw new UserError(
          'INIT_UNSUPPORTED_CHANGE',
          `Commit ${await subject(commit)} changes ${change.path}, ${why}.`,
          {
            hint: `Leave ${change.path} out of the branch (rewrite the commit with \`git rebase -i ${pin.slice(0, 12)}\`) and run init again.`,
            details: { commit, path: change.path },
          },
        );
    }
    perCommit.push(changes);
  }
  return perCommit;
}

/** The MLX version of the pin, from mlx/version.h or CMakeLists.txt; a pin without one is refused. */
async function pinVersion(scratch: Git, pin: string): Promise<string> {
  const version = mlxVersion(await scratch.fileAt(pin, 'mlx/version.h'), await scratch.fileAt(pin, 'CMakeLists.txt'));
  if (version === null)
    throw new UserError(
      'VERSION_NOT_FOUND',
      `MLX ${pin.slice(0, 12)} has no version in mlx/version.h or CMakeLists.txt.`,
      {
        hint: 'Name a commit of MLX itself with --pin (a release tag such as v0.30.0, or a commit of its main branch).',
        details: { pin },
      },
    );
  return version;
}

/** One patch per file the series changes, from the pin to `from`, in the order the commits first change the files. */
async function seriesPatches(
  scratch: Git,
  pin: string,
  from: string,
  perCommit: ReadonlyArray<readonly CommitChange[]>,
): Promise<Array<InitPatch & { text: string }>> {
  const files = orderByFirstChange(await scratch.renamedChanges(pin, from), perCommit);
  const patches: Array<InitPatch & { text: string }> = [];
  for (const [index, change] of files.entries()) {
    const renamed = change.from !== change.path;
    const text = await scratch.diffPatch(pin, from, renamed ? [change.from, change.path] : [change.path], {
      renames: renamed,
    });
    patches.push({
      name: patchName(index, change.path),
      file: change.path,
      ...(renamed ? { renamedFrom: change.from } : {}),
      text,
    });
  }
  return patches;
}

/**
 * Applies the series of the project written in `stage` to the pin and returns
 * `from`'s tree, which it must give exactly.
 */
async function verifyGivesTree(scratch: Git, stage: string, pin: string, from: string): Promise<string> {
  // The series must give `from`'s tree exactly; anything else is a bug here, not the user's.
  const inputs = loadPlanInputs(stage, loadConfig(stage));
  const built = await buildTree(scratch, buildPlan(inputs));
  const tree = await scratch.treeOf(from);
  if (built.tree !== tree)
    throw new Error(
      `init: the series applied to ${pin} gives tree ${built.tree ?? `none (${JSON.stringify(built.conflicts)})`}, not ${tree} of ${from}`,
    );
  return tree;
}

const SERIES_HEADER = '# One patch per changed file, in the order the commits first change the files.\n';
const NO_MUTANTS = `${JSON.stringify({ mutants: [] }, null, 2)}\n`;

async function writeProject(
  dir: string,
  config: Record<string, unknown>,
  patches: ReadonlyArray<{ name: string; text: string }>,
): Promise<void> {
  await writeFile(path.join(dir, CONFIG_FILE), `${JSON.stringify(config, null, 2)}\n`);
  await mkdir(path.join(dir, 'patches'));
  for (const patch of patches) await writeFile(path.join(dir, 'patches', patch.name), patch.text);
  await writeFile(path.join(dir, 'patches', 'series'), SERIES_HEADER + patches.map((p) => `${p.name}\n`).join(''));
  await mkdir(path.join(dir, 'pr'));
  for (const file of await readdir(path.join(PACKAGE_ROOT, 'pr')))
    await copyFile(path.join(PACKAGE_ROOT, 'pr', file), path.join(dir, 'pr', file));
  await writeFile(path.join(dir, 'mutants.json'), NO_MUTANTS);
}

/** The config of the project at `root`, or null when it has none or cannot be read. */
function configOrNull(root: string): Config | null {
  try {
    return loadConfig(root);
  } catch {
    return null;
  }
}
