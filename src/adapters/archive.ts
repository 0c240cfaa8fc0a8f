import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import type { Logger } from './log.js';
import { orFailure, ProcessError } from './process-error.js';
import { run, runPipe } from './process.js';

type Env = Readonly<Record<string, string | undefined>>;

/** Downloads `url` to `dest` through a side file, so a broken download leaves nothing behind. */
export async function download(url: string, dest: string, log: Logger): Promise<void> {
  log.info(`Downloading ${url}`);
  const partial = `${dest}.partial-${process.pid}`;
  await mkdir(path.dirname(dest), { recursive: true });
  try {
    const response = await fetch(url, { redirect: 'follow', signal: AbortSignal.timeout(300_000) });
    if (!response.ok || response.body === null) throw new Error(`HTTP ${response.status} ${response.statusText}`);
    await pipeline(Readable.fromWeb(response.body), createWriteStream(partial));
    await rename(partial, dest);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
}

/** Unpacks a zip archive with `unzip`, or Python's zipfile module where unzip is missing. */
export async function extractZip(zip: string, dest: string, options: { env: Env; log: Logger }): Promise<void> {
  await mkdir(dest, { recursive: true });
  options.log.command(`unzip -q -o ${zip} -d ${dest}`, dest);
  const unzip = await orFailure(run('unzip', ['-q', '-o', zip, '-d', dest], { env: options.env }));
  if (!(unzip instanceof ProcessError)) return;
  // unzip ran and failed: the archive is bad. Only an unzip that did not start falls back to Python.
  if (!unzip.notStarted) throw unzip;
  options.log.command(`python3 -m zipfile -e ${zip} ${dest}`, dest);
  const python = await orFailure(run('python3', ['-m', 'zipfile', '-e', zip, dest], { env: options.env }));
  if (python instanceof ProcessError) {
    throw new ProcessError(
      python.command,
      { exitCode: python.exitCode, signal: python.signal, stderr: `unzip did not start; ${python.stderr}` },
      { cause: python },
    );
  }
}

/**
 * Writes the files under `paths` of `commit` to `dest` with `git archive`,
 * without touching the repository's index or working tree.
 */
export async function exportGitTree(
  repo: string,
  commit: string,
  paths: readonly string[],
  dest: string,
  options: { env: Env; log: Logger },
): Promise<void> {
  await mkdir(dest, { recursive: true });
  options.log.command(`git archive --format=tar ${commit} -- ${paths.join(' ')} | tar -x -C ${dest}`, repo);
  await runPipe(['git', ['archive', '--format=tar', commit, '--', ...paths]], ['tar', ['-x', '-C', dest]], {
    env: options.env,
    cwd: repo,
  });
}
