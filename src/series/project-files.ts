import { existsSync, lstatSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';

import { CONFIG_FILE, parseConfigText, type Config } from './config.js';
import { UserError, type ErrorCode } from '../core/errors.js';
import { withGitLineEndings } from '../core/patch.js';
import { decodeUtf8, describeBadByte } from '../core/text.js';
import type { PlanInputs } from './plan.js';

import { ifAbsentSync } from '../adapters/files.js';
import { PACKAGE_ROOT } from '../adapters/package-root.js';

export { PACKAGE_ROOT };

/**
 * The project folder: the nearest folder from `cwd` upwards with a config
 * file, or this package's own folder.
 */
export function findProjectRoot(cwd: string): string {
  return findProject(cwd).root;
}

/** The project of `cwd`, and whether it was found upward (false: the installed package itself). */
export function findProject(cwd: string): { root: string; found: boolean } {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, CONFIG_FILE))) return { root: dir, found: true };
    if (path.dirname(dir) === dir) return { root: PACKAGE_ROOT, found: false };
  }
}

/**
 * `file` with symlinks resolved. A path that does not exist yet keeps its
 * missing tail on the real path of its nearest existing parent.
 */
export function realPath(file: string): string {
  const absolute = path.resolve(file);
  try {
    return realpathSync(absolute);
  } catch {
    const parent = path.dirname(absolute);
    return parent === absolute ? absolute : path.join(realPath(parent), path.basename(absolute));
  }
}

// The project's files are few and small: they are read synchronously, which at start-up is
// several times faster than a round trip through Node's thread pool for each.

/**
 * A project file's text. Templates, patches and the config are text that the
 * tool renders and compares, so bytes that are not UTF-8 are refused with the
 * offset of the first one: decoding them would replace them with U+FFFD.
 */
function readText(file: string, shown: string, code: ErrorCode, bytes: Buffer = readFileSync(file)): string {
  const decoded = decodeUtf8(bytes);
  if ('text' in decoded) return decoded.text;
  throw new UserError(code, `${shown} is not UTF-8 text: ${describeBadByte(bytes, decoded)}.`, {
    hint: `Save ${shown} as UTF-8 (\`iconv -f latin1 -t utf-8\` converts Latin-1), or take a binary file out of the project; the tool never changes the bytes of what it writes.`,
    details: { file: shown, offset: decoded.offset, line: decoded.line },
  });
}

export function loadConfig(projectRoot: string): Config {
  const file = path.join(projectRoot, CONFIG_FILE);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    throw new UserError('CONFIG_INVALID', `No ${CONFIG_FILE} in ${projectRoot}.`, {
      hint: `Run the command inside an mlx-storage-pr project, or pass --project <dir>.`,
    });
  }
  return parseConfigText(readText(file, CONFIG_FILE, 'CONFIG_INVALID', bytes), file);
}

/**
 * The files under `root`, by relative path. A symbolic link (to a file or a
 * folder) is refused, naming it: the tool would read a file from outside the
 * project as a template, and `export` write through the link into a folder
 * outside it. So is anything but a file or a folder (a FIFO, a socket).
 */
function listFiles(root: string, shown: string, code: ErrorCode, dir = ''): string[] {
  const entries = ifAbsentSync(() => readdirSync(path.join(root, dir), { withFileTypes: true }), []);
  const files: string[] = [];
  for (const entry of entries) {
    const relative = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) files.push(...listFiles(root, shown, code, relative));
    else if (entry.isFile()) files.push(relative);
    else {
      const what = entry.isSymbolicLink() ? 'a symbolic link' : 'neither a file nor a folder';
      throw new UserError(code, `${shown}/${relative} is ${what}; ${shown}/ holds files and folders only.`, {
        hint: `Replace ${shown}/${relative} with the file or folder itself (\`cp -L\` copies what a link points to), or remove it.`,
        details: { file: `${shown}/${relative}` },
      });
    }
  }
  return files.sort();
}

/** `templates/` or `patches/` itself must be a folder of the project, not a link to one elsewhere. */
function verifyFolder(dir: string, shown: string, code: ErrorCode): void {
  const stats = ifAbsentSync(() => lstatSync(dir), null);
  if (stats === null || stats.isDirectory()) return;
  throw new UserError(
    code,
    `${shown}/ is ${stats.isSymbolicLink() ? 'a symbolic link' : 'not a folder'}; it must be a folder of the project.`,
    {
      hint: `Replace ${shown} with a folder holding the files (\`cp -RL\` copies what a link points to).`,
      details: { file: shown },
    },
  );
}

/** Reads templates/, patches/series and patches/* of a project. */
export function loadPlanInputs(projectRoot: string, config: Config): PlanInputs {
  const templatesDir = path.join(projectRoot, 'templates');
  const patchesDir = path.join(projectRoot, 'patches');
  verifyFolder(templatesDir, 'templates', 'TEMPLATE_SYNTAX');
  verifyFolder(patchesDir, 'patches', 'SERIES_INVALID');
  const templates = listFiles(templatesDir, 'templates', 'TEMPLATE_SYNTAX').map((file) => ({
    path: file,
    content: readText(path.join(templatesDir, file), `templates/${file}`, 'TEMPLATE_SYNTAX'),
  }));
  const patchFiles = listFiles(patchesDir, 'patches', 'SERIES_INVALID');
  const seriesText = patchFiles.includes('series')
    ? readText(path.join(patchesDir, 'series'), 'patches/series', 'SERIES_INVALID')
    : '';
  const patches = new Map<string, string>();
  for (const file of patchFiles) {
    if (file === 'series' || file.endsWith('.md')) continue;
    patches.set(file, withGitLineEndings(readText(path.join(patchesDir, file), `patches/${file}`, 'SERIES_INVALID')));
  }
  return { config, templates, seriesText, patches };
}
