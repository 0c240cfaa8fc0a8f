import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

import { ifAbsent } from '../adapters/files.js';
import { comparePaths } from '../core/paths.js';
import type { PolicyFile } from './policy.js';

/** The user-written PR texts in `<project>/pr/`: every file but README.md. */
export async function readPolicyFiles(projectRoot: string): Promise<PolicyFile[]> {
  const dir = path.join(projectRoot, 'pr');
  const entries = await ifAbsent(readdir(dir, { withFileTypes: true }), []);
  const files: PolicyFile[] = [];
  for (const entry of entries.sort((a, b) => comparePaths(a.name, b.name))) {
    if (!entry.isFile() || entry.name === 'README.md' || entry.name.startsWith('.')) continue;
    files.push({ path: `pr/${entry.name}`, text: await readFile(path.join(dir, entry.name), 'utf8') });
  }
  return files;
}
