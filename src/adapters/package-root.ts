import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of this package: it holds the default config, templates and patches. */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** This package's version, from its package.json (read by Node's own JSON loader). */
export function packageVersion(): string {
  return (createRequire(import.meta.url)(path.join(PACKAGE_ROOT, 'package.json')) as { version: string }).version;
}
