import { zodToJsonSchema } from 'zod-to-json-schema';

import { ConfigSchema } from './config.js';

/** JSON schema of mlx-storage-pr.config.json, for editors; generated from the zod schema. */
export function configJsonSchema(): string {
  return `${JSON.stringify(zodToJsonSchema(ConfigSchema, { $refStrategy: 'none' }), null, 2)}\n`;
}
