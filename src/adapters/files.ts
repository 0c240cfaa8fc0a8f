import { constants } from 'node:fs';
import { link, lstat, mkdir, open, readdir, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';

import type { z } from 'zod';

import { parseSaved } from '../core/json.js';
import { madeMark, MARK_TEXT } from '../core/workdir.js';

/**
 * Reads a JSON file the tool wrote (saved results, the bump state, the lock)
 * and checks it against `schema`. Null when it is missing, cannot be read, is
 * not JSON or not of the schema: such a file holds nothing the tool can use.
 */
export async function readJsonFile<T>(file: string, schema: z.ZodType<T, z.ZodTypeDef, unknown>): Promise<T | null> {
  const text = await readFile(file, 'utf8').catch(() => null);
  return text === null ? null : parseSaved(text, schema);
}

/** The file or folder does not exist (ENOENT, or a parent that is not a folder). */
function isAbsent(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/**
 * `fallback` when the file or folder `operation` reads does not exist (ENOENT,
 * or a parent that is not a folder); any other failure (permissions, I/O) is thrown.
 */
export async function ifAbsent<T, F>(operation: Promise<T>, fallback: F): Promise<T | F> {
  try {
    return await operation;
  } catch (error) {
    if (isAbsent(error)) return fallback;
    throw error;
  }
}

/** `ifAbsent` for a synchronous `read`. */
export function ifAbsentSync<T, F>(read: () => T, fallback: F): T | F {
  try {
    return read();
  } catch (error) {
    if (isAbsent(error)) return fallback;
    throw error;
  }
}

/** The entries of a folder, or null when it does not exist. */
export async function listFolder(dir: string): Promise<Array<{ name: string; isDirectory: boolean }> | null> {
  try {
    return (await readdir(dir, { withFileTypes: true })).map((e) => ({ name: e.name, isDirectory: e.isDirectory() }));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * Device and inode of a file or folder, symlinks followed: one value for every
 * path to it (a symlink, a bind mount, `..` detours). Null when it does not exist.
 */
export async function fileIdentity(file: string): Promise<string | null> {
  const stats = await ifAbsent(stat(file, { bigint: true }), null);
  return stats === null ? null : `${stats.dev}:${stats.ino}`;
}

/** Bytes a file or folder takes on disk (allocated blocks, as `du` counts), symlinks not followed. */
export async function diskUsage(file: string): Promise<number> {
  // A file deleted while being counted takes no space.
  const stats = await ifAbsent(lstat(file), null);
  if (stats === null) return 0;
  const own = stats.blocks * 512;
  if (!stats.isDirectory()) return own;
  const entries = await ifAbsent(readdir(file), [] as string[]);
  const sizes = await Promise.all(entries.map((entry) => diskUsage(path.join(file, entry))));
  return sizes.reduce((sum, size) => sum + size, own);
}

export async function removeTree(file: string): Promise<void> {
  await rm(file, { recursive: true, force: true });
}

/**
 * Makes the workdir item `dir` (a folder; its parents as needed) and, when
 * this call made it, marks it as made by the tool, so `clean` may remove it.
 * A folder already there is used as it is and stays unmarked: the tool did
 * not make it. A checkout's mark goes into its `.git/` before `git init`.
 */
export async function makeMarkedFolder(dir: string): Promise<void> {
  await mkdir(path.dirname(dir), { recursive: true });
  try {
    await mkdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw error;
  }
  const mark = madeMark(dir);
  await mkdir(path.dirname(mark), { recursive: true });
  await writeFile(mark, MARK_TEXT);
}

/** True when the workdir item at `item` carries the tool's mark (a regular file, not a link). */
export async function isMarked(item: string): Promise<boolean> {
  return (await ifAbsent(lstat(madeMark(item)), null))?.isFile() === true;
}

/** What `readInside` found at a path. */
export type InsideFile =
  | { kind: 'file'; bytes: Buffer }
  | { kind: 'absent' }
  /** `at`: the relative path of the link, `relative` itself or a folder above it. */
  | { kind: 'link'; at: string }
  | { kind: 'folder' }
  | { kind: 'special' };

/**
 * The bytes of the file `relative` under `root`, never read through a
 * symbolic link: each component is looked at without following links, and
 * the file is opened with O_NOFOLLOW (a link put there in between fails
 * rather than being followed). A FIFO is never opened, so nothing blocks.
 */
export async function readInside(root: string, relative: string): Promise<InsideFile> {
  const parts = relative.split('/');
  for (let i = 0; i < parts.length; i++) {
    const at = parts.slice(0, i + 1).join('/');
    const stats = await ifAbsent(lstat(path.join(root, at)), null);
    if (stats === null) return { kind: 'absent' };
    if (stats.isSymbolicLink()) return { kind: 'link', at };
    if (i < parts.length - 1) {
      if (!stats.isDirectory()) return { kind: 'absent' };
      continue;
    }
    if (stats.isDirectory()) return { kind: 'folder' };
    if (!stats.isFile()) return { kind: 'special' };
  }
  let handle;
  try {
    handle = await open(path.join(root, relative), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') return { kind: 'link', at: relative };
    if (isAbsent(error)) return { kind: 'absent' };
    throw error;
  }
  try {
    if (!(await handle.stat()).isFile()) return { kind: 'special' };
    return { kind: 'file', bytes: await handle.readFile() };
  } finally {
    await handle.close();
  }
}

/** The first existing component of `relative` under `root` that is a symbolic link, or null. */
export async function linkOnPath(root: string, relative: string): Promise<string | null> {
  const parts = relative.split('/');
  for (let i = 0; i < parts.length; i++) {
    const at = parts.slice(0, i + 1).join('/');
    const stats = await ifAbsent(lstat(path.join(root, at)), null);
    if (stats === null) return null;
    if (stats.isSymbolicLink()) return at;
  }
  return null;
}

/**
 * Writes files as one change: every new text is written beside its place
 * first (`<file>.<tag>`), and only when all are written are they moved in
 * (each old file kept under a hard link until the end) and the removed ones
 * (`text` null) deleted. A failure — a full disk, a file that cannot be
 * written — puts back what was moved and removes the drafts and the folders
 * made for them: every file is as it was. `files` are absolute paths.
 */
export async function writeFilesTogether(
  files: ReadonlyArray<{ file: string; text: string | null }>,
  tag: string,
): Promise<void> {
  const drafts: string[] = [];
  const madeFolders: string[] = [];
  const kept: Array<{ file: string; old: string | null }> = [];
  try {
    for (const { file, text } of files) {
      if (text === null) continue;
      const made = await mkdir(path.dirname(file), { recursive: true });
      if (made !== undefined) madeFolders.push(made);
      const draft = `${file}.${tag}`;
      drafts.push(draft);
      await writeFile(draft, text);
    }
    for (const { file, text } of files) {
      const old = `${file}.${tag}-old`;
      // A hard link keeps the old file without taking space; a file that does not exist keeps nothing.
      const had = await ifAbsent(
        link(file, old).then(() => true),
        false,
      );
      kept.push({ file, old: had ? old : null });
      if (text === null) await rm(file, { force: true });
      else await rename(`${file}.${tag}`, file);
    }
  } catch (error) {
    for (const { file, old } of kept.reverse()) {
      if (old === null) await rm(file, { force: true }).catch(() => undefined);
      else await rename(old, file).catch(() => undefined);
    }
    for (const draft of drafts) await rm(draft, { force: true }).catch(() => undefined);
    for (const folder of madeFolders.reverse()) await removeEmptyFolders(folder);
    throw error;
  }
  for (const { old } of kept) if (old !== null) await rm(old, { force: true });
}

/** Removes `folder` and the empty folders below it (made for files that were then taken back); a folder with files stays. */
async function removeEmptyFolders(folder: string): Promise<void> {
  for (const entry of await ifAbsent(readdir(folder, { withFileTypes: true }), [])) {
    if (entry.isDirectory()) await removeEmptyFolders(path.join(folder, entry.name));
  }
  await rmdir(folder).catch(() => undefined);
}
