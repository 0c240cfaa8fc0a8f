import path from 'node:path';

import { z } from 'zod';

import { UserError } from '../core/errors.js';
import { branchNameProblem } from '../core/git-values.js';
import { parseJsonFile } from '../core/json.js';
import { verifyInsideCheckout } from '../core/paths.js';
import { renderTemplateText, type Variables } from './render.js';

export const CONFIG_FILE = 'mlx-storage-pr.config.json';
export const DEFAULT_UPSTREAM_URL = 'https://github.com/ml-explore/mlx.git';

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const variableName = z.string().regex(IDENTIFIER, 'must be a name of letters, digits and underscores');

/**
 * The series' own variables: any name -> single-line value. Templates and
 * patches use them as `{{name}}`; a reviewer's rename is one edit here.
 */
export const VariablesSchema = z
  .record(variableName, z.string().regex(/^[^\r\n]*$/, 'must be a single line'))
  .default({})
  .describe('Template variables: {{name}} in templates/, patches/, mutants.json and the roles.');

/** A variable computed from another, so that a rename never needs a second edit. */
const DerivedSchema = z
  .record(
    variableName,
    z.union([
      z
        .object({ copy: variableName.describe('The variable whose value this repeats.') })
        .strict()
        .describe('The same value under a second name (e.g. a header path where an #include uses it).'),
      z
        .object({ basename: variableName.describe('The variable whose last path part this is.') })
        .strict()
        .describe('The file name of a path variable, e.g. for an #include or a CMake list.'),
      z
        .object({
          underline: variableName.describe('The variable this underlines.'),
          with: z.string().length(1).default('-').describe('The underline character (reStructuredText).'),
        })
        .strict()
        .describe('A line of one character as long as the value, for a reStructuredText title.'),
    ]),
  )
  .default({})
  .describe('Variables computed from others; their names count as declared.');

/** A checkout path or folder (ending in /) that may use {{variables}}. */
const rolePath = (what: string) => z.string().min(1).describe(what);

/** What the lanes need to know about the series, declared rather than guessed from variable names. */
export const RolesSchema = z
  .object({
    metal: z
      .object({
        sources: z
          .array(rolePath('A Metal-only source: type-checked by check-metal, compiled into the Metal twin.'))
          .min(1),
        tests: z
          .array(rolePath('A Metal-only doctest file: run on the Metal twin on Linux, on Metal on a Mac.'))
          .min(1),
      })
      .strict()
      .optional()
      .describe('Metal-only files of the series. Absent: the Metal lanes (check-metal, the twin) do not apply.'),
    tests: z
      .array(rolePath('A test file, or a folder ending in /.'))
      .min(1)
      .default(['tests/'])
      .describe('Where the tests are: verify splits the series here to prove the tests fail without the rest.'),
  })
  .strict()
  .default({})
  .describe('What the lanes need to know about the series.');

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
      .superRefine((name, ctx) => {
        const problem = branchNameProblem(name);
        if (problem !== null)
          ctx.addIssue({ code: z.ZodIssueCode.custom, message: `must be a branch name: ${problem}` });
      })
      .default('mlx-storage-pr')
      .describe('Local branch in the checkout that holds the applied series.'),
    variables: VariablesSchema,
    derived: DerivedSchema,
    roles: RolesSchema,
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

/** Parses and validates the config file's text; a syntax error names its line and column. */
export function parseConfigText(text: string, file: string): Config {
  return parseConfig(parseJsonFile(text, file), file);
}

/** Validates parsed JSON; the error lists every problem with its JSON path. */
export function parseConfig(raw: unknown, file: string): Config {
  const old = legacyShape(raw);
  if (old !== null)
    throw new UserError(
      'CONFIG_INVALID',
      `${file} has the old shape: the Metal files are named by variables (metal_test_file, source_path, ...) instead of "roles", and the derived variables are built in. The same config in the current shape:\n${JSON.stringify(old, null, 2)}`,
      {
        hint: `Replace ${path.basename(file)} with the config printed above (it renders the same files); docs/project-files.md says what each key means.`,
        details: { file, migrated: old },
      },
    );
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
  templateVariables(result.data, file);
  return result.data;
}

/**
 * Every declared variable with its value: the config's own and the derived
 * ones. A derived name that is also a variable, or that derives from an
 * unknown name, is a config error.
 */
export function templateVariables(config: Pick<Config, 'variables' | 'derived'>, file = CONFIG_FILE): Variables {
  const out: Record<string, string> = { ...config.variables };
  for (const [name, rule] of Object.entries(config.derived)) {
    const source = 'copy' in rule ? rule.copy : 'basename' in rule ? rule.basename : rule.underline;
    const value = config.variables[source];
    const problem = Object.hasOwn(config.variables, name)
      ? `"${name}" is both a variable and a derived variable`
      : value === undefined
        ? `derived.${name} derives from "${source}", which is not in "variables"`
        : null;
    if (problem !== null || value === undefined)
      throw new UserError('CONFIG_INVALID', `${file}: ${problem}.`, {
        hint: "A derived variable names one of the config's own variables and has a name of its own.",
      });
    out[name] =
      'copy' in rule ? value : 'basename' in rule ? path.posix.basename(value) : rule.with.repeat([...value].length);
  }
  return out;
}

/** The roles with their paths rendered; each path lies inside the checkout. */
export interface SeriesRoles {
  metal: { sources: string[]; tests: string[] } | null;
  /** Test files, and folders ending in `/`. */
  tests: string[];
}

export function seriesRoles(config: Config, file = CONFIG_FILE): SeriesRoles {
  const variables = templateVariables(config, file);
  const render = (p: string, key: string) => {
    const where = `${file} roles.${key}`;
    const rendered = renderTemplateText(p, variables, where);
    verifyInsideCheckout(rendered.replace(/\/$/, ''), where);
    return rendered;
  };
  return {
    metal: config.roles.metal
      ? {
          sources: config.roles.metal.sources.map((p) => render(p, 'metal.sources')),
          tests: config.roles.metal.tests.map((p) => render(p, 'metal.tests')),
        }
      : null,
    tests: config.roles.tests.map((p) => render(p, 'tests')),
  };
}

/** What a Metal lane says about a series without a Metal role. */
export const NO_METAL_ROLE = 'not applicable: the series has no Metal role (roles.metal in the config)';

/** True when `file` is one of the role's test files or lies in one of its test folders. */
export function isTestPath(roles: SeriesRoles, file: string): boolean {
  return roles.tests.some((t) => (t.endsWith('/') ? file.startsWith(t) : file === t));
}

/** The variables of the config shape before roles: the storage view's twelve names. */
const LEGACY_KEYS = [
  'namespace',
  'class_name',
  'status_enum',
  'options_struct',
  'try_export_function',
  'export_function',
  'header_path',
  'source_path',
  'metal_test_file',
  'stub_test_file',
  'docs_section_title',
  'copyright_year',
] as const;

/** A config in the shape before roles, rewritten in the current shape; null for any other config. */
function legacyShape(raw: unknown): Record<string, unknown> | null {
  if (typeof raw !== 'object' || raw === null || 'roles' in raw || 'derived' in raw) return null;
  const variables = (raw as { variables?: unknown }).variables;
  if (typeof variables !== 'object' || variables === null) return null;
  if (!LEGACY_KEYS.every((k) => typeof (variables as Record<string, unknown>)[k] === 'string')) return null;
  const { variables: old, build, ...rest } = raw as { variables: Record<string, string>; build?: unknown };
  const outsideTests = (['metal_test_file', 'stub_test_file'] as const).filter((k) => !old[k]?.startsWith('tests/'));
  return {
    ...rest,
    variables: old,
    derived: {
      header_include: { copy: 'header_path' },
      source_file: { basename: 'source_path' },
      metal_test_source: { basename: 'metal_test_file' },
      stub_test_source: { basename: 'stub_test_file' },
      docs_section_underline: { underline: 'docs_section_title', with: '-' },
    },
    roles: {
      metal: { sources: ['{{source_path}}'], tests: ['{{metal_test_file}}'] },
      tests: ['tests/', ...outsideTests.map((k) => `{{${k}}}`)],
    },
    ...(build === undefined ? {} : { build }),
  };
}

/** The metal-cpp archive URL MLX's CMake downloads (`set(METAL_CPP_URL ...)`). */
export function metalCppUrl(cmakeText: string): string | null {
  const match = /set\(\s*METAL_CPP_URL\s+([^\s)]+)\s*\)/.exec(cmakeText);
  return match ? (match[1] as string) : null;
}
