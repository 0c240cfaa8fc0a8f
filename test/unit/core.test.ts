import { describe, expect, it } from 'vitest';

import { parseConfig, seriesRoles, templateVariables } from '../../src/series/config.js';
import { diagnoseFile, preImageBlobs } from '../../src/series/conflict.js';
import { UserError } from '../../src/core/errors.js';
import { comparePaths, verifyInsideCheckout } from '../../src/core/paths.js';
import { buildPlan } from '../../src/series/plan.js';
import { placeholdersIn, renderPatchText, renderTemplateText } from '../../src/series/render.js';
import { parsePatchFiles, parseSeries } from '../../src/series/series-file.js';
import { chooseSource, recordedForm } from '../../src/series/source.js';
import { RFC_DERIVED, RFC_OWN_VARIABLES, RFC_VARIABLES } from '../support/variables.js';

const variables = RFC_VARIABLES;
const config = {
  upstream: { url: 'https://example.invalid/mlx.git', commit: 'a'.repeat(40), version: '0.32.2' },
  variables: RFC_OWN_VARIABLES,
  derived: RFC_DERIVED,
};

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof UserError) return `${error.code}: ${error.message}`;
    throw error;
  }
  return 'no error';
}

describe('placeholders', () => {
  it('a template replaces exactly {{name}} of a declared name', () => {
    expect(renderTemplateText('class {{class_name}} : {{namespace}}', variables, 'f')).toBe(
      'class MetalStorageView : mlx::core::metal',
    );
  });
  it("keeps every other {{ and }} as text: MLX's {{0, 1}}, Jinja's {{ name }}, {{class-name}}", () => {
    const text = 'pad(x, {{1, 1}}); {{ namespace }} {{class-name}} }} {{';
    expect(renderTemplateText(text, variables, 'f')).toBe(text);
    expect(renderPatchText(`+${text}\n`, variables, 'p')).toEqual({ text: `+${text}\n`, warnings: [] });
  });
  it('a template with an undeclared {{identifier}} is an error naming the closest declared name', () => {
    expect(codeOf(() => renderTemplateText('a\nx {{clas_name}}', variables, 'templates/a.h'))).toBe(
      'TEMPLATE_VARIABLE: templates/a.h:2: unknown template variable "clas_name" (closest declared name: "class_name").',
    );
  });
  it('a patch keeps an undeclared {{identifier}} as text, with a warning only on an added line', () => {
    const patch = '--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n {{ctx}} kept\n-{{old}}\n+{{clas_name}} {{class_name}}\n';
    const rendered = renderPatchText(patch, variables, 'patches/0001.patch');
    expect(rendered.text).toBe(patch.replace('{{class_name}}', 'MetalStorageView'));
    expect(rendered.warnings).toEqual([
      'patches/0001.patch:6: "{{clas_name}}" is not a declared variable, so it stays as text (closest declared name: "class_name").',
    ]);
  });
  it('lists declared placeholders once each', () => {
    expect(placeholdersIn('{{class_name}} {{b}} {{namespace}} {{class_name}}', variables)).toEqual([
      'class_name',
      'namespace',
    ]);
  });
});

describe('parseConfig', () => {
  it('accepts the shipped shape and fills defaults', () => {
    const parsed = parseConfig(config, 'c.json');
    expect(parsed.branch).toBe('mlx-storage-pr');
    expect(parsed.roles).toEqual({ tests: ['tests/'] });
  });
  it('takes any variable a series declares', () => {
    const parsed = parseConfig({ ...config, variables: { op_name: 'softplus' }, derived: {} }, 'c.json');
    expect(parsed.variables).toEqual({ op_name: 'softplus' });
  });
  it('rejects a variable name that is no identifier, and a value of two lines', () => {
    expect(codeOf(() => parseConfig({ ...config, variables: { 'op-name': 'x' }, derived: {} }, 'c.json'))).toMatch(
      /variables\.op-name: must be a name of letters/,
    );
    expect(codeOf(() => parseConfig({ ...config, variables: { a: 'x\ny' }, derived: {} }, 'c.json'))).toMatch(
      /variables\.a: must be a single line/,
    );
  });
  it('names a derived variable whose source is not declared', () => {
    expect(
      codeOf(() => parseConfig({ ...config, variables: {}, derived: { f: { basename: 'path' } } }, 'c.json')),
    ).toBe('CONFIG_INVALID: c.json: derived.f derives from "path", which is not in "variables".');
  });
  it('requires a full commit SHA', () => {
    expect(
      codeOf(() => parseConfig({ ...config, upstream: { ...config.upstream, commit: '846d176' } }, 'c.json')),
    ).toMatch(/upstream\.commit: must be a full 40-character/);
  });
  it('derives the dependent variables', () => {
    const all = templateVariables(parseConfig(config, 'c.json'));
    expect(all['header_include']).toBe('mlx/backend/metal/storage_view.h');
    expect(all['source_file']).toBe('storage_view.cpp');
    expect(all['metal_test_source']).toBe('metal_storage_view_tests.cpp');
    expect(all['docs_section_underline']).toBe('-'.repeat('Borrowing Metal Storage'.length));
  });
  it('refuses the old shape and prints the same config in the new shape, which renders the same variables', () => {
    const old = { upstream: config.upstream, branch: 'b', variables: RFC_OWN_VARIABLES };
    let error: UserError | undefined;
    try {
      parseConfig(old, 'c.json');
    } catch (e) {
      error = e as UserError;
    }
    expect(error?.code).toBe('CONFIG_INVALID');
    expect(error?.message).toMatch(/^c\.json has the old shape/);
    const printed = JSON.parse(error!.message.slice(error!.message.indexOf('\n{'))) as unknown;
    expect(printed).toEqual((error!.details as { migrated: unknown }).migrated);
    const migrated = parseConfig(printed, 'c.json');
    expect(templateVariables(migrated)).toEqual(RFC_VARIABLES);
    expect(seriesRoles(migrated)).toEqual({
      metal: { sources: ['mlx/backend/metal/storage_view.cpp'], tests: ['tests/metal_storage_view_tests.cpp'] },
      tests: ['tests/'],
    });
  });
});

describe('verifyInsideCheckout', () => {
  it.each(['../a', '/etc/passwd', 'a/../../b', 'a/.git/config', '', 'C:/x'])('rejects %j', (p) => {
    expect(codeOf(() => verifyInsideCheckout(p, 'o'))).toMatch(/^PATH_ESCAPES_CHECKOUT/);
  });
  it('normalises a path inside', () => {
    expect(verifyInsideCheckout('mlx/./backend//x.h', 'o')).toBe('mlx/backend/x.h');
  });
});

describe('comparePaths', () => {
  it('orders by code units, as git does: capitals before small letters, the same in every locale', () => {
    // localeCompare puts these as aa, b, B in English and as B, b, aa in Danish (aa is å there).
    const paths = ['b.h', 'B.h', 'aa.h', 'a_b.h', 'a-b.h', 'a.h', 'A.h', 'a/b.h', '1.h', 'z.h', 'é.h'];
    expect([...paths].sort(comparePaths)).toEqual([
      '1.h',
      'A.h',
      'B.h',
      'a-b.h',
      'a.h',
      'a/b.h',
      'a_b.h',
      'aa.h',
      'b.h',
      'z.h',
      'é.h',
    ]);
  });
});

describe('series', () => {
  it('reads names in order and skips comments', () => {
    expect(parseSeries('# c\n0001-a.patch\n\n0002-b.patch # note\n', 's')).toEqual(['0001-a.patch', '0002-b.patch']);
  });
  it('rejects paths and duplicates', () => {
    expect(codeOf(() => parseSeries('../x.patch', 's'))).toMatch(/SERIES_INVALID/);
    expect(codeOf(() => parseSeries('a\na', 's'))).toMatch(/listed twice/);
  });
  it('parses the files of a git diff', () => {
    const files = parsePatchFiles('diff --git a/x.txt b/x.txt\n--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-a\n+b\n', 'p');
    expect(files.map((f) => [f.path, f.created, f.hunks.length])).toEqual([['x.txt', false, 1]]);
  });
  it('rejects a patch that targets a path outside the checkout', () => {
    expect(codeOf(() => parsePatchFiles('--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n', 'p'))).toMatch(
      /PATH_ESCAPES_CHECKOUT/,
    );
  });
});

describe('buildPlan', () => {
  const patch = 'diff --git a/x.txt b/x.txt\n--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-a\n+{{class_name}}\n';
  const inputs = (over: Partial<Parameters<typeof buildPlan>[0]> = {}) => ({
    config: parseConfig(config, 'c'),
    templates: [{ path: '{{header_path}}', content: '// {{copyright_year}}\n' }],
    seriesText: '0001.patch\n',
    patches: new Map([['0001.patch', patch]]),
    ...over,
  });
  it('renders paths, contents and patches', () => {
    const plan = buildPlan(inputs());
    expect(plan.files).toEqual([
      { path: 'mlx/backend/metal/storage_view.h', content: '// 2026\n', template: '{{header_path}}' },
    ]);
    expect(plan.patches[0]?.text).toContain('+MetalStorageView');
  });
  it('gives the same input hash for the same inputs and a new one after an edit', () => {
    expect(buildPlan(inputs()).inputHash).toBe(buildPlan(inputs()).inputHash);
    expect(buildPlan(inputs({ templates: [{ path: '{{header_path}}', content: 'x' }] })).inputHash).not.toBe(
      buildPlan(inputs()).inputHash,
    );
  });
  it('refuses a template path that renders outside the checkout', () => {
    expect(codeOf(() => buildPlan(inputs({ templates: [{ path: '../{{class_name}}.h', content: '' }] })))).toMatch(
      /^PATH_ESCAPES_CHECKOUT: templates\/\.\.\/\{\{class_name\}\}\.h/,
    );
  });
  it('refuses a variable used in a template path that leaves the checkout, naming the variable', () => {
    const outside = { ...config, variables: { ...RFC_OWN_VARIABLES, header_path: '../x.h' } };
    expect(codeOf(() => buildPlan(inputs({ config: parseConfig(outside, 'c') })))).toMatch(
      /^PATH_ESCAPES_CHECKOUT: variables\.header_path \(used in the path of templates\/\{\{header_path\}\}\)/,
    );
  });
  it('keeps MLX braces in a patch and warns of an undeclared name on an added line', () => {
    const braces =
      'diff --git a/x.txt b/x.txt\n--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-a\n+f({{0, 1}}); {{clas_name}}\n';
    const plan = buildPlan(inputs({ patches: new Map([['0001.patch', braces]]) }));
    expect(plan.patches[0]?.text).toContain('+f({{0, 1}}); {{clas_name}}');
    expect(plan.warnings).toEqual([
      'patches/0001.patch:6: "{{clas_name}}" is not a declared variable, so it stays as text (closest declared name: "class_name").',
    ]);
  });
  it('refuses a series entry without a file and a patch missing from the series', () => {
    expect(codeOf(() => buildPlan(inputs({ seriesText: '0001.patch\n0002.patch\n' })))).toMatch(/does not exist/);
    expect(codeOf(() => buildPlan(inputs({ seriesText: '' })))).toMatch(/does not list it/);
  });
});

describe('diagnoseFile', () => {
  const [file] = parsePatchFiles(
    'diff --git a/x b/x\nindex abc1234..def5678 100644\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n one\n-two\n+2\n',
    'p',
  );
  it('reads pre-image blobs', () => {
    expect(preImageBlobs('diff --git a/x b/x\nindex abc1234..def5678 100644\n').get('x')).toBe('abc1234');
  });
  it('classifies the four reasons', () => {
    const f = file!;
    expect(diagnoseFile('p', f, { content: null, blob: null, reverseApplies: false }, 'abc1234')?.reason).toBe(
      'file_missing',
    );
    expect(diagnoseFile('p', f, { content: 'one\n2\n', blob: 'fff', reverseApplies: true }, 'abc1234')?.reason).toBe(
      'already_applied',
    );
    expect(
      diagnoseFile('p', f, { content: 'one\nthree\n', blob: 'abc1234ffff', reverseApplies: false }, 'abc1234'),
    ).toMatchObject({ reason: 'patch_changed', hunk: 1 });
    expect(
      diagnoseFile('p', f, { content: 'one\nthree\n', blob: '999', reverseApplies: false }, 'abc1234'),
    ).toMatchObject({ reason: 'upstream_changed', hunk: 1, hunkHeader: '@@ -1,2 +1,2 @@' });
    expect(
      diagnoseFile('p', f, { content: 'one\ntwo\n', blob: '999', reverseApplies: false }, 'abc1234'),
    ).toBeUndefined();
  });
  it('tells file_exists from already_applied for a patch that creates a file', () => {
    const [created] = parsePatchFiles(
      'diff --git a/n b/n\nnew file mode 100644\n--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+new\n',
      'p',
    );
    expect(
      diagnoseFile('p', created!, { content: null, blob: null, reverseApplies: false }, undefined),
    ).toBeUndefined();
    expect(
      diagnoseFile('p', created!, { content: 'other\n', blob: '999', reverseApplies: false }, undefined),
    ).toMatchObject({ reason: 'file_exists', file: 'n' });
    expect(
      diagnoseFile('p', created!, { content: 'new\n', blob: '999', reverseApplies: true }, undefined)?.reason,
    ).toBe('already_applied');
  });
});

describe('chooseSource', () => {
  it('prefers the flag, then MLX_REPO, then the source apply recorded, then the config URL', () => {
    expect(chooseSource('/m', '/e', 'https://u', '/', '/r')).toMatchObject({ display: '/m', origin: 'option' });
    expect(chooseSource(undefined, 'rel', 'https://u', '/base', '/r')).toEqual({
      kind: 'path',
      display: '/base/rel',
      location: 'file:///base/rel',
      origin: 'env',
    });
    expect(chooseSource(undefined, '', 'https://u', '/', '/r')).toMatchObject({ display: '/r', origin: 'apply' });
    // A recorded source that is the config's URL is just the default.
    expect(chooseSource(undefined, undefined, 'https://u', '/', 'https://u')).toMatchObject({ origin: 'config' });
    expect(chooseSource(undefined, undefined, 'https://u/x.git', '/')).toMatchObject({
      kind: 'url',
      location: 'https://u/x.git',
    });
    expect(chooseSource('git@github.com:me/mlx.git', undefined, 'x', '/').kind).toBe('url');
  });

  it('records a URL without its http(s) user part, so no token is written to the workdir', () => {
    const recorded = (value: string) => recordedForm(chooseSource(value, undefined, 'x', '/base'));
    expect(recorded('https://ghp_secret@mirror.example/mlx.git')).toBe('https://mirror.example/mlx.git');
    expect(recorded('http://me:pw@127.0.0.1:8/mlx.git')).toBe('http://127.0.0.1:8/mlx.git');
    expect(recorded('git@github.com:me/mlx.git')).toBe('git@github.com:me/mlx.git');
    expect(recorded('mirror')).toBe('/base/mirror');
  });
});

describe('schema/config.schema.json', () => {
  it('matches the zod schema (run `npm run gen-schema` after changing it)', async () => {
    const { readFileSync } = await import('node:fs');
    const { configJsonSchema } = await import('../../scripts/gen-schema.mjs');
    const { ConfigSchema } = await import('../../src/series/config.js');
    expect(readFileSync(new URL('../../schema/config.schema.json', import.meta.url), 'utf8')).toBe(
      configJsonSchema(ConfigSchema),
    );
  });
});
