import { describe, expect, it } from 'vitest';

import { parseConfigText } from '../../src/series/config.js';
import { locateJsonError } from '../../src/core/json.js';
import { UserError } from '../../src/core/errors.js';
import { parseMutants } from '../../src/suite/mutants.js';
import { buildPlan } from '../../src/series/plan.js';
import { renderTemplateText } from '../../src/series/render.js';
import { parsePatchFiles } from '../../src/series/series-file.js';
import { RFC_DERIVED, RFC_OWN_VARIABLES, RFC_VARIABLES } from '../support/variables.js';

function errorOf(fn: () => unknown): UserError {
  try {
    fn();
  } catch (error) {
    if (error instanceof UserError) return error;
    throw error;
  }
  throw new Error('no error thrown');
}

/** Bytes from a fixed linear congruential sequence: "random" but the same on every run. */
function noise(length: number, seed: number): Buffer {
  const bytes = Buffer.alloc(length);
  let state = seed;
  for (let i = 0; i < length; i++) {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    bytes[i] = state >> 16;
  }
  return bytes;
}

describe('invalid JSON in mutants.json', () => {
  it('gives the line and column, as for the config', () => {
    const text = '{\n  "mutants": [\n    { "name": "x" ]\n}\n';
    const error = errorOf(() => parseMutants(text, '/p/mutants.json', RFC_VARIABLES));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toMatch(/^\/p\/mutants\.json:3:19: invalid JSON: /);
    expect(error.hint).toBe('Fix the JSON syntax at line 3, column 19 of mutants.json.');
  });
});

describe('invalid JSON in the config', () => {
  it('gives the line and column of the first syntax error', () => {
    const text = '{\n  "upstream": {\n    "commit": "abc",,\n  }\n}\n';
    const error = errorOf(() => parseConfigText(text, '/p/mlx-storage-pr.config.json'));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toMatch(/^\/p\/mlx-storage-pr\.config\.json:3:21: invalid JSON: /);
    expect(error.details).toMatchObject({ line: 3, column: 21 });
  });

  it.each([
    ['{\n  "a": 1,\n}', 3, 1, 'trailing comma'],
    ['{\n  "a" 1\n}', 2, 7, "expected ':'"],
    ['{"a": tru}', 1, 7, 'unexpected'],
    ['{"a": 1}\nx', 2, 1, 'after the end'],
    ['{\n  "a": "b', 2, 10, 'end of the file'],
    ["{'a': 1}", 1, 2, 'double quotes'],
  ])('locates %j at line %i, column %i', (text, line, column, words) => {
    expect(() => JSON.parse(text)).toThrow();
    const found = locateJsonError(text);
    expect({ line: found.line, column: found.column }).toEqual({ line, column });
    expect(found.message).toContain(words);
  });
});

describe('template variables', () => {
  it('names the file and the line of an unknown variable', () => {
    const error = errorOf(() =>
      renderTemplateText('// one\n// two\n#include "{{header_file}}"\n', RFC_VARIABLES, 'templates/a.cpp'),
    );
    expect(error.code).toBe('TEMPLATE_VARIABLE');
    expect(error.message).toMatch(/^templates\/a\.cpp:3: unknown template variable "header_file"/);
    expect(error.details).toMatchObject({ file: 'templates/a.cpp', line: 3, variable: 'header_file' });
  });
});

describe('a corrupt patch', () => {
  const config = {
    upstream: { url: 'https://example.invalid/mlx.git', commit: 'a'.repeat(40), version: '0.32.2' },
    variables: RFC_OWN_VARIABLES,
    derived: RFC_DERIVED,
    roles: { tests: ['tests/'] },
    branch: 'b',
    build: { target: 't', testBinary: 't', library: 'l', testMain: 'm', cmakeArgs: [] },
  };
  const planWith = (patch: string) => () =>
    buildPlan({ config, templates: [], seriesText: '0001-x.patch\n', patches: new Map([['0001-x.patch', patch]]) });

  it('of random bytes is "not a unified diff", even when the bytes hold {{ or }}', () => {
    for (const seed of [1, 2, 3]) {
      const bytes = Buffer.concat([noise(1000, seed), Buffer.from('{{ }}'), noise(1000, seed + 10)]);
      const error = errorOf(planWith(bytes.toString('utf8')));
      expect(error.code).toBe('SERIES_INVALID');
      expect(error.message).toBe('patches/0001-x.patch: not a unified diff: the file is binary or not UTF-8 text.');
      expect(error.hint).toContain('git diff');
    }
  });

  it('of text without diff lines is "not a unified diff"', () => {
    expect(errorOf(planWith('Some notes\nabout a change\n')).message).toBe(
      'patches/0001-x.patch: not a unified diff: no "diff --git", "---"/"+++" or "@@" line.',
    );
  });

  it('with file headers but no hunks still "changes nothing"', () => {
    expect(errorOf(() => parsePatchFiles('--- a/x\n+++ b/x\n', 'p')).message).toBe('p: the patch changes nothing.');
  });
});
