import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { ifAbsent } from './files.js';
import type { Logger } from './log.js';
import { orFailure, ProcessError } from './process-error.js';
import { probe, quote, run } from './process.js';

/** A sphinx-build and its version. */
export interface Sphinx {
  command: string;
  version: string;
}

export type SphinxLookup = { tool: Sphinx; reason: null } | { tool: null; reason: string };

/** Finds sphinx-build: `SPHINXBUILD` (as in Sphinx's own Makefiles), else `sphinx-build` on PATH. */
export async function findSphinx(
  env: Readonly<Record<string, string | undefined>>,
  log: Logger,
): Promise<SphinxLookup> {
  const command = env['SPHINXBUILD'] || 'sphinx-build';
  log.debug(`Looking for Sphinx: ${command} --version`);
  const said = await probe(command, ['--version'], env);
  const version = said === null ? undefined : /(\d+\.\d+(?:\.\d+)?)/.exec(said)?.[1];
  if (version === undefined) return { tool: null, reason: `${command} not found` };
  return { tool: { command, version }, reason: null };
}

export interface DummyBuild {
  /** sphinx-build's exit code (null: it did not start). */
  exitCode: number | null;
  /** The warnings file (`-w`). */
  warnings: string;
  /** The temporary source folder the pages were built in (gone when this returns); warnings name it. */
  srcdir: string;
  /** Last lines of sphinx-build's own output, for errors. */
  tail: string;
}

/**
 * Builds pages with the `dummy` builder (parses and resolves, writes
 * nothing) in a temporary source folder holding only `conf` (as conf.py)
 * and `files`.
 */
export async function buildDummy(
  sphinx: Sphinx,
  input: { conf: string; files: ReadonlyArray<{ path: string; content: string }> },
  options: { env: Readonly<Record<string, string | undefined>>; log: Logger },
): Promise<DummyBuild> {
  const tmp = await mkdtemp(path.join(os.tmpdir(), 'mlx-storage-pr-sphinx-'));
  try {
    const srcdir = path.join(tmp, 'src');
    await mkdir(srcdir);
    await writeFile(path.join(srcdir, 'conf.py'), input.conf);
    for (const file of input.files) {
      const target = path.join(srcdir, file.path);
      await mkdir(path.dirname(target), { recursive: true });
      await writeFile(target, file.content);
    }
    const warningFile = path.join(tmp, 'warnings.txt');
    const args = [
      '-b',
      'dummy',
      '-E',
      '-N',
      '-q',
      '-w',
      warningFile,
      '-d',
      path.join(tmp, 'doctrees'),
      srcdir,
      path.join(tmp, 'out'),
    ];
    options.log.command([sphinx.command, ...args].map(quote).join(' '), tmp);
    // A failed build is an answer here: the caller reports its exit code and last lines.
    const result = await orFailure(
      run(sphinx.command, args, {
        cwd: tmp,
        env: { ...options.env, PYTHONDONTWRITEBYTECODE: '1' },
        timeoutMs: 10 * 60_000,
      }),
    );
    const warnings = await ifAbsent(readFile(warningFile, 'utf8'), '');
    const [exitCode, all, stderr] =
      result instanceof ProcessError ? [result.exitCode, result.output, result.stderr] : [0, result.all, result.stderr];
    const tail = all.trim().split('\n').slice(-8).join('\n');
    return { exitCode, warnings, srcdir, tail: tail || stderr };
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
