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
