// Writes schema/config.schema.json from the zod schema in src/core/config.ts.
import { writeFileSync } from 'node:fs';

import { configJsonSchema } from '../dist/core/schema.js';

writeFileSync(new URL('../schema/config.schema.json', import.meta.url), configJsonSchema());
