import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';

import { CONFIG_FILE, parseConfigText, type Config } from './config.js';
import { UserError } from '../core/errors.js';
import { withGitLineEndings } from '../core/patch.js';
import type { PlanInputs } from './plan.js';

import { ifAbsentSync } from '../adapters/files.js';
import { PACKAGE_ROOT } from '../adapters/package-root.js';

export { PACKAGE_ROOT };

/**
 * The project folder: the nearest folder from `cwd` upwards with a config
 * file, or this package's own folder.
 */
export function findProjectRoot(cwd: string): string {
  for (let dir = path.resolve(cwd); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, CONFIG_FILE))) return dir;
    if (path.dirname(dir) === dir) return PACKAGE_ROOT;
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

export function loadConfig(projectRoot: string): Config {
  const file = path.join(projectRoot, CONFIG_FILE);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new UserError('CONFIG_INVALID', `No ${CONFIG_FILE} in ${projectRoot}.`, {
      hint: `Run the command inside an mlx-storage-pr project, or pass --project <dir>.`,
    });
  }
  return parseConfigText(text, file);
}

function listFiles(root: string, dir = ''): string[] {
  const entries = ifAbsentSync(() => readdirSync(path.join(root, dir), { withFileTypes: true }), []);
  const files: string[] = [];
  for (const entry of entries) {
    const relative = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) files.push(...listFiles(root, relative));
    else if (entry.isFile()) files.push(relative);
  }
  return files.sort();
}

/** Reads templates/, patches/series and patches/* of a project. */
export function loadPlanInputs(projectRoot: string, config: Config): PlanInputs {
  const templatesDir = path.join(projectRoot, 'templates');
  const patchesDir = path.join(projectRoot, 'patches');
  const templates = listFiles(templatesDir).map((file) => ({
    path: file,
    content: readFileSync(path.join(templatesDir, file), 'utf8'),
  }));
  const seriesText = ifAbsentSync(() => readFileSync(path.join(patchesDir, 'series'), 'utf8'), '');
  const patches = new Map<string, string>();
  for (const file of listFiles(patchesDir)) {
    if (file === 'series' || file.endsWith('.md')) continue;
    patches.set(file, withGitLineEndings(readFileSync(path.join(patchesDir, file), 'utf8')));
  }
  return { config, templates, seriesText, patches };
}
