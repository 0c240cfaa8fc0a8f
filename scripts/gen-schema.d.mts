import type { ZodTypeAny } from 'zod';

/** JSON schema of mlx-storage-pr.config.json, for editors. */
export function configJsonSchema(schema: ZodTypeAny): string;
