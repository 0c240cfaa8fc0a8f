import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of this package: it holds the default config, templates and patches. */
export const PACKAGE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
