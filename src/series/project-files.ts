import { existsSync, realpathSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

import { CONFIG_FILE, parseConfigText, type Config } from './config.js';
import { UserError } from '../core/errors.js';
import type { PlanInputs } from './plan.js';

import { ifAbsent } from '../adapters/files.js';
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

export async function loadConfig(projectRoot: string): Promise<Config> {
  const file = path.join(projectRoot, CONFIG_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new UserError('CONFIG_INVALID', `No ${CONFIG_FILE} in ${projectRoot}.`, {
      hint: `Run the command inside an mlx-storage-pr project, or pass --project <dir>.`,
    });
  }
  return parseConfigText(text, file);
}

async function listFiles(root: string, dir = ''): Promise<string[]> {
  const entries = await ifAbsent(readdir(path.join(root, dir), { withFileTypes: true }), []);
  const files: string[] = [];
  for (const entry of entries) {
    const relative = dir ? `${dir}/${entry.name}` : entry.name;
    if (entry.isDirectory()) files.push(...(await listFiles(root, relative)));
    else if (entry.isFile()) files.push(relative);
  }
  return files.sort();
}

/** Reads templates/, patches/series and patches/* of a project. */
export async function loadPlanInputs(projectRoot: string, config: Config): Promise<PlanInputs> {
  const templatesDir = path.join(projectRoot, 'templates');
  const patchesDir = path.join(projectRoot, 'patches');
  const templates = await Promise.all(
    (await listFiles(templatesDir)).map(async (file) => ({
      path: file,
      content: await readFile(path.join(templatesDir, file), 'utf8'),
    })),
  );
  const seriesText = await ifAbsent(readFile(path.join(patchesDir, 'series'), 'utf8'), '');
  const patches = new Map<string, string>();
  for (const file of await listFiles(patchesDir)) {
    if (file === 'series' || file.endsWith('.md')) continue;
    patches.set(file, await readFile(path.join(patchesDir, file), 'utf8'));
  }
  return { config, templates, seriesText, patches };
}
