import path from 'node:path';

import { z } from 'zod';

import { UserError } from '../core/errors.js';
import { parseJsonFile } from '../core/json.js';
import { verifyInsideCheckout } from '../core/paths.js';
import type { Variables } from './render.js';

export const CONFIG_FILE = 'mlx-storage-pr.config.json';
export const DEFAULT_UPSTREAM_URL = 'https://github.com/ml-explore/mlx.git';

const identifier = (what: string) =>
  z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a C++ identifier')
    .describe(what);

const checkoutPath = (what: string) =>
  z
    .string()
    .min(1)
    .refine(
      (p) => !p.startsWith('/') && !p.split('/').includes('..'),
      'must be a relative path inside the MLX checkout',
    )
    .describe(what);

/** The template variables a reviewer may ask to rename. Each rename is one edit here. */
export const VariablesSchema = z
  .object({
    namespace: z
      .string()
      .regex(/^[A-Za-z_]\w*(::[A-Za-z_]\w*)*$/, 'must be a C++ namespace like mlx::core::metal')
      .describe(
        "C++ namespace of the API. The non-Metal stub is added inside no_metal.cpp's own `namespace metal` block, so another namespace also needs patches/0002-no-metal-stub.patch changed.",
      ),
    class_name: identifier('Name of the view class.'),
    status_enum: identifier('Name of the status enum.'),
    options_struct: identifier('Name of the options struct.'),
    try_export_function: identifier('Name of the non-throwing export function.'),
    export_function: identifier('Name of the throwing export function.'),
    header_path: checkoutPath('Path of the public header in the checkout.'),
    source_path: checkoutPath('Path of the Metal implementation in the checkout.'),
    metal_test_file: checkoutPath('Path of the Metal-only doctest file.'),
    stub_test_file: checkoutPath('Path of the always-built doctest file with the non-Metal case.'),
    docs_section_title: z.string().min(1).describe('Title of the docs section in docs/src/dev/extensions.rst.'),
    copyright_year: z
      .string()
      .regex(/^\d{4}$/, 'must be a four-digit year')
      .describe('Year in the copyright line of new files.'),
  })
  .strict();

export const ConfigSchema = z
  .object({
    $schema: z.string().optional(),
    upstream: z
      .object({
        url: z
          .string()
          .min(1)
          .default(DEFAULT_UPSTREAM_URL)
          .describe('Where MLX is fetched from unless --mlx-repo or MLX_REPO says otherwise.'),
        commit: z
          .string()
          .regex(/^[0-9a-f]{40}$/, 'must be a full 40-character lowercase commit SHA')
          .describe('The pinned MLX commit the templates and patches are written against.'),
        version: z
          .string()
          .regex(/^\d+\.\d+\.\d+$/, 'must be a version like 0.32.2')
          .describe('The MLX version at the pinned commit.'),
        metalCpp: z
          .object({
            url: z.string().url().describe("The metal-cpp archive MLX's CMake names at the pin (METAL_CPP_URL)."),
            sha256: z
              .string()
              .regex(/^[0-9a-f]{64}$/, 'must be 64 lowercase hex digits')
              .optional()
              .describe('SHA-256 of that archive. Unset: the download says its hash; set: a mismatch fails.'),
          })
          .strict()
          .optional()
          .describe('The metal-cpp archive of the Metal type-check, pinned next to the MLX commit.'),
      })
      .strict(),
    branch: z
      .string()
      .regex(/^[A-Za-z0-9._/-]+$/, 'must be a valid git branch name')
      .default('mlx-storage-pr')
      .describe('Local branch in the checkout that holds the applied series.'),
    variables: VariablesSchema,
    build: z
      .object({
        target: z.string().min(1).default('tests').describe('CMake target that builds the C++ test binary.'),
        testBinary: z
          .string()
          .min(1)
          .default('tests/tests')
          .describe('Path of the doctest binary inside the build folder.'),
        library: z
          .string()
          .min(1)
          .default('mlx')
          .describe('CMake target of the library the tests link; the Metal twin links a copy of it.'),
        testMain: z
          .string()
          .min(1)
          .default('tests/tests.cpp')
          .describe('Checkout path of the doctest main, which the Metal twin test executable also uses.'),
        cmakeArgs: z
          .array(z.string())
          .default(['-DMLX_BUILD_TESTS=ON', '-DMLX_BUILD_EXAMPLES=OFF'])
          .describe('CMake arguments every build gets (before --offline mappings and arguments after --).'),
      })
      .strict()
      .default({})
      .describe('How `test` builds and runs the C++ suite.'),
  })
  .strict();

export type Config = z.infer<typeof ConfigSchema>;
export type ConfigVariables = z.infer<typeof VariablesSchema>;

/** Parses and validates the config file's text; a syntax error names its line and column. */
export function parseConfigText(text: string, file: string): Config {
  return parseConfig(parseJsonFile(text, file), file);
}

/** Validates parsed JSON; the error lists every problem with its JSON path. */
export function parseConfig(raw: unknown, file: string): Config {
  const result = ConfigSchema.safeParse(raw);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const where = issue.path.join('.') || '(root)';
      if (issue.code === 'unrecognized_keys')
        return `${where}: unknown key(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
      return `${where}: ${issue.message}`;
    });
    throw new UserError('CONFIG_INVALID', `${file} is invalid:\n  ${problems.join('\n  ')}`, {
      hint: `Fix the listed keys in ${path.basename(file)}; schema/config.schema.json describes every key.`,
      details: { file, problems },
    });
  }
  for (const key of ['header_path', 'source_path', 'metal_test_file', 'stub_test_file'] as const) {
    verifyInsideCheckout(result.data.variables[key], `${file} variables.${key}`);
  }
  return result.data;
}

/**
 * The variables templates see: the configured ones plus values derived from
 * them, so a rename never needs a second edit.
 */
export function templateVariables(variables: ConfigVariables): Variables {
  return {
    ...variables,
    header_include: variables.header_path,
    source_file: path.posix.basename(variables.source_path),
    metal_test_source: path.posix.basename(variables.metal_test_file),
    stub_test_source: path.posix.basename(variables.stub_test_file),
    docs_section_underline: '-'.repeat([...variables.docs_section_title].length),
  };
}
