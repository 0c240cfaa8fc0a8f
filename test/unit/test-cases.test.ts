import { describe, expect, it } from 'vitest';

import { caseNames, matchesDoctestFilter } from '../../src/core/test-cases.js';

describe('caseNames', () => {
  it('reads the name of every TEST_CASE of a test file, in order, with escapes undone', () => {
    const text = [
      '#include "doctest/doctest.h"',
      '',
      'TEST_CASE("test metal storage view") {',
      '  CHECK(true);',
      '}',
      '',
      '  TEST_CASE ( "test a \\"quoted\\" name" ) {}',
      '// TEST_CASE("commented out") is not a case',
      'TEST_CASE("test last") {}',
    ].join('\n');
    expect(caseNames(text)).toEqual(['test metal storage view', 'test a "quoted" name', 'test last']);
  });

  it('reads no name from a file without cases', () => {
    expect(caseNames('')).toEqual([]);
    expect(caseNames('int main() { return 0; }\n')).toEqual([]);
  });
});

describe('matchesDoctestFilter', () => {
  const matches = (filter: string, name: string) => matchesDoctestFilter(filter, name);

  it('matches the whole name, ignoring case, as doctest does', () => {
    expect(matches('test twin length', 'test twin length')).toBe(true);
    expect(matches('TEST Twin LENGTH', 'test twin length')).toBe(true);
    expect(matches('test twin', 'test twin length')).toBe(false);
    expect(matches('twin length', 'test twin length')).toBe(false);
  });

  it('takes * for any run of characters, also none, and ? for exactly one', () => {
    expect(matches('*storage*', 'test MetalStorageView borrows')).toBe(true);
    expect(matches('*storage*', 'storage')).toBe(true);
    expect(matches('*', 'anything')).toBe(true);
    expect(matches('*', '')).toBe(true);
    expect(matches('test*view', 'test storage view')).toBe(true);
    expect(matches('test*view', 'test storage view a')).toBe(false);
    expect(matches('test ?dd', 'test add')).toBe(true);
    expect(matches('test ?dd', 'test dd')).toBe(false);
    expect(matches('*a*b*c', 'xaxbxbxc')).toBe(true);
    expect(matches('*a*b*c', 'xaxcxb')).toBe(false);
  });

  it('keeps * a wildcard when the name holds a * too', () => {
    expect(matches('a*', 'a*b')).toBe(true);
    expect(matches('x*z', 'x*yz')).toBe(true);
    expect(matches('*x', '**x')).toBe(true);
    expect(matches('a*c', 'a*b')).toBe(false);
  });

  it('takes a comma-separated list: one matching pattern is enough', () => {
    expect(matches('*length*,*contents*', 'test twin contents')).toBe(true);
    expect(matches('*length*,*contents*', 'test stub')).toBe(false);
    // Empty patterns are dropped, as doctest drops them.
    expect(matches(',,*stub*,', 'test stub')).toBe(true);
    expect(matches(',', 'test stub')).toBe(false);
  });

  it('reads \\, as a comma in the name and \\\\ as one backslash; any other backslash is a character of its own', () => {
    expect(matches('test a\\, b', 'test a, b')).toBe(true);
    expect(matches('test a\\, b', 'test a')).toBe(false);
    expect(matches('test \\\\ x', 'test \\ x')).toBe(true);
    // doctest has no escape for * and ?: the backslash stays and must be in the name.
    expect(matches('test \\*', 'test \\ anything')).toBe(true);
    expect(matches('test \\*', 'test *')).toBe(false);
  });

  it('compares UTF-8 bytes and folds only ASCII letters, as doctest does (tolower in the C locale)', () => {
    expect(matches('*ÉTÉ*', 'test été')).toBe(false);
    expect(matches('*été*', 'TEST été')).toBe(true);
    // é is two bytes, so it takes two ?.
    expect(matches('test ??', 'test é')).toBe(true);
    expect(matches('test ?', 'test é')).toBe(false);
  });
});
