import path from 'node:path';

import { UserError } from './errors.js';

/**
 * Code points HFS+ ignores in a file name (zero-width joiners, direction marks,
 * the byte-order mark): `.g\u200Cit` is `.git` there. The list is git's
 * (`is_hfs_dotgit` in utf8.c).
 */
const HFS_IGNORED = /[\u200C-\u200F\u202A-\u202E\u206A-\u206F\uFEFF]/g;

/**
 * Whether a path component names `.git` on some file system, as git's
 * `verify_path` judges it: any case (APFS, HFS+ and NTFS are case-insensitive
 * by default), with the characters HFS+ ignores, with trailing dots and spaces
 * or an alternate data stream (`.git::$INDEX_ALLOCATION`), which NTFS drops,
 * and NTFS's short name `git~1`.
 */
export function isDotGit(component: string): boolean {
  return /^(?:\.git|git~1)[. ]*(?::.*)?$/i.test(component.replace(HFS_IGNORED, ''));
}

/** A component made of dots and spaces only beyond `.`: NTFS drops trailing dots and spaces, so `.. ` is `..` there. */
const isDotsOnly = (component: string) => /^[. ]+$/.test(component) && component !== '.';

/**
 * Checks that `relative` names a file inside the checkout and returns it in
 * normalised POSIX form. Rendered paths come from templates and config, so a
 * value like `../x`, `/etc/x` or `.Git/config` must never reach the file system.
 */
export function verifyInsideCheckout(relative: string, origin: string): string {
  const posix = relative.replaceAll('\\', '/');
  const normalised = path.posix.normalize(posix);
  const components = normalised.split('/');
  const dotGit = components.find(isDotGit);
  if (
    posix.length === 0 ||
    path.posix.isAbsolute(posix) ||
    /^[A-Za-z]:/.test(posix) ||
    normalised === '.' ||
    normalised === '..' ||
    normalised.startsWith('../') ||
    dotGit !== undefined ||
    components.some(isDotsOnly)
  ) {
    const where =
      dotGit === undefined
        ? 'is outside the MLX checkout'
        : `names git's own folder: "${dotGit}" is .git on a case-insensitive or NTFS file system`;
    throw new UserError('PATH_ESCAPES_CHECKOUT', `${origin}: path "${relative}" ${where}.`, {
      hint: 'Template paths and path variables must be relative paths inside the checkout (no "..", no absolute paths, no .git in any spelling: .GIT, .git., git~1).',
      details: { origin, path: relative },
    });
  }
  return normalised;
}

/** The default workdir: inside the project, and ignored by the project's .gitignore. */
export const DEFAULT_WORKDIR = '.work';

/**
 * The default workdir when the project in use is the installed package (no
 * config found upward from the current folder): a per-user state folder,
 * never inside the package, where reinstalling or clearing npm's cache would
 * delete it. `$XDG_STATE_HOME/mlx-storage-pr`, else
 * `~/.local/state/mlx-storage-pr`; on macOS `~/Library/Application Support/mlx-storage-pr`.
 */
export function stateWorkdir(
  env: Readonly<Record<string, string | undefined>>,
  platform: NodeJS.Platform,
  home: string,
): string {
  const xdg = env['XDG_STATE_HOME'];
  if (xdg !== undefined && path.isAbsolute(xdg)) return path.join(xdg, 'mlx-storage-pr');
  if (platform === 'darwin') return path.join(home, 'Library', 'Application Support', 'mlx-storage-pr');
  return path.join(home, '.local', 'state', 'mlx-storage-pr');
}

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
