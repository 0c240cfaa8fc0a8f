import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

import { ifAbsent } from '../adapters/files.js';
import { UserError } from '../core/errors.js';
import { comparePaths } from '../core/paths.js';
import { decodeUtf8, describeBadByte } from '../core/text.js';
import type { PolicyFile } from './policy.js';

/** The user-written PR texts in `<project>/pr/`: every file but README.md. */
export async function readPolicyFiles(projectRoot: string): Promise<PolicyFile[]> {
  const dir = path.join(projectRoot, 'pr');
  const entries = await ifAbsent(readdir(dir, { withFileTypes: true }), []);
  const files: PolicyFile[] = [];
  for (const entry of entries.sort((a, b) => comparePaths(a.name, b.name))) {
    if (!entry.isFile() || entry.name === 'README.md' || entry.name.startsWith('.')) continue;
    const text = await readPrText(path.join(dir, entry.name), `pr/${entry.name}`);
    if (text !== null) files.push({ path: `pr/${entry.name}`, text });
  }
  return files;
}

/**
 * A PR text file (null: it does not exist). Its bytes go to the commit and to
 * GitHub as they are, so they must be UTF-8: git would take other bytes for
 * Latin-1 and re-encode them, and GitHub show them as U+FFFD.
 */
export async function readPrText(file: string, shown: string): Promise<string | null> {
  const bytes = await ifAbsent(readFile(file), null);
  if (bytes === null) return null;
  const decoded = decodeUtf8(bytes);
  if ('text' in decoded) return decoded.text;
  throw new UserError('PR_TEXT_INCOMPLETE', `${shown} is not UTF-8 text: ${describeBadByte(bytes, decoded)}.`, {
    hint: `Save ${shown} as UTF-8 (\`iconv -f latin1 -t utf-8\` converts Latin-1); the tool sends its bytes as they are and never re-encodes them. Nothing was pushed or sent.`,
    details: { file: shown, offset: decoded.offset, line: decoded.line, placeholders: [] },
  });
}
