import { z } from 'zod';

import { ConfigSchema } from './config.js';

/** JSON schema of mlx-storage-pr.config.json, for editors; generated from the zod schema. */
export function configJsonSchema(): string {
  return `${JSON.stringify(z.toJSONSchema(ConfigSchema, { io: 'input' }), null, 2)}\n`;
}
