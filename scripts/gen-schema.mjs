// Writes schema/config.schema.json from the zod schema in src/series/config.ts (run after `npm run build`).
// zod-to-json-schema is a devDependency: only this script and the test that keeps the file in step use it.
import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

import { zodToJsonSchema } from 'zod-to-json-schema';

/** JSON schema of mlx-storage-pr.config.json, for editors. */
export function configJsonSchema(schema) {
  return `${JSON.stringify(zodToJsonSchema(schema, { $refStrategy: 'none' }), null, 2)}\n`;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { ConfigSchema } = await import('../dist/series/config.js');
  writeFileSync(new URL('../schema/config.schema.json', import.meta.url), configJsonSchema(ConfigSchema));
}
