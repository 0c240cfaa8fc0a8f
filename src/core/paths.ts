import path from 'node:path';

import { UserError } from './errors.js';

/**
 * Checks that `relative` names a file inside the checkout and returns it in
 * normalised POSIX form. Rendered paths come from templates and config, so a
 * value like `../x` or `/etc/x` must never reach the file system.
 */
export function verifyInsideCheckout(relative: string, origin: string): string {
  const posix = relative.replaceAll('\\', '/');
  const normalised = path.posix.normalize(posix);
  if (
    posix.length === 0 ||
    path.posix.isAbsolute(posix) ||
    /^[A-Za-z]:/.test(posix) ||
    normalised === '.' ||
    normalised === '..' ||
    normalised.startsWith('../') ||
    normalised.split('/').includes('.git')
  ) {
    throw new UserError('PATH_ESCAPES_CHECKOUT', `${origin}: path "${relative}" is outside the MLX checkout.`, {
      hint: 'Template paths and path variables must be relative paths inside the checkout (no "..", no absolute paths, no .git).',
      details: { origin, path: relative },
    });
  }
  return normalised;
}

/** The default workdir: inside the project, and ignored by the project's .gitignore. */
export const DEFAULT_WORKDIR = '.work';

/**
 * Checks where the workdir may be. An empty value would make the project
 * folder itself the workdir, and any other folder inside the project puts an
 * MLX clone and build folders among the project's own files; only the default
 * `.work` (which .gitignore covers) may be inside. Paths are absolute and real
 * (symlinks resolved) so `..` and links cannot hide where a folder is.
 */
export function verifyWorkdir(workdir: string, projectRoot: string, origin: string): void {
  const relative = path.relative(projectRoot, workdir);
  const inside =
    relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
  const first = relative.split(path.sep)[0];
  if (inside && first !== DEFAULT_WORKDIR) {
    throw new UserError(
      'WORKDIR_INVALID',
      `The workdir ${workdir} (from ${origin}) is inside the project ${projectRoot}.`,
      {
        hint: `The MLX checkout and builds would land among the project's files. Choose a folder outside the project, or leave ${origin} out to use ${path.join(projectRoot, DEFAULT_WORKDIR)}.`,
        details: { workdir, projectRoot, origin },
      },
    );
  }
}

/**
 * Orders paths by their UTF-16 code units, as git and `Array.prototype.sort` do. Unlike
 * `localeCompare` it gives the same order in every locale, so what depends on it (the input hash,
 * the files a rewrite lists) is the same on every machine.
 */
export function comparePaths(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
