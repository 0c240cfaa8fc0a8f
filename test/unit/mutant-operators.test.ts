import { describe, expect, it } from 'vitest';

import { tokenize } from '../../src/core/cxx-tokens.js';
import { matchEquivalents, parseEquivalents } from '../../src/core/mutant-equivalents.js';
import { enumsIn, generateMutants, mutantKey, mutationScore, OPERATORS } from '../../src/core/mutant-operators.js';

/** Every mutant of `text` (all lines added), as "operator: mutated line". */
function mutants(text: string, enums = new Map<string, string[]>()) {
  const lines = new Set(text.split('\n').map((_, i) => i + 1));
  return generateMutants({ file: 'a.cpp', text, lines, enums });
}
const summary = (text: string) => mutants(text).map((m) => `${m.operator}: ${m.mutated.trim()}`);

describe('C++ tokenizer', () => {
  it('keeps comments, strings, character literals and preprocessor lines whole', () => {
    const text = [
      '#include <vector> // a < b',
      '#if A > 1 && \\',
      '    B < 2',
      '#endif',
      'auto s = "a < b && c"; /* x >= y */ char c = \'<\';',
      'auto r = R"x(a < ")" > b)x";',
      'auto w = u8"x + y" L"p - q";',
    ].join('\n');
    const kinds = tokenize(text).map((t) => `${t.kind} ${t.text}`);
    expect(kinds).toContain('preproc #include <vector> // a < b');
    expect(kinds).toContain('preproc #if A > 1 && \\\n    B < 2');
    expect(kinds).toContain('string "a < b && c"');
    expect(kinds).toContain('comment /* x >= y */');
    expect(kinds).toContain("char '<'");
    expect(kinds).toContain('string R"x(a < ")" > b)x"');
    expect(kinds).toContain('string u8"x + y"');
    expect(kinds).toContain('string L"p - q"');
  });

  it('reads ->, >>=, <=>, digit separators and exponents as one token', () => {
    const texts = tokenize("p->x >>= 1'000; a <=> b; 1.5e-3;").map((t) => t.text);
    expect(texts).toEqual(['p', '->', 'x', '>>=', "1'000", ';', 'a', '<=>', 'b', ';', '1.5e-3', ';']);
  });

  it('marks template argument lists, and not comparisons', () => {
    const marked = (text: string) =>
      tokenize(text)
        .filter((t) => t.inTemplate)
        .map((t) => t.text)
        .join(' ');
    expect(marked('auto b = static_cast<MTL::Buffer*>(p);')).toBe('< MTL :: Buffer * >');
    expect(marked('std::vector<std::vector<int>> v;')).toBe('< std :: vector < int >>');
    expect(marked('std::map<int, a<b>> m;')).toBe('< int , a < b >>');
    expect(marked('if (i < n) { x = a > b; }')).toBe('');
    expect(marked('for (size_t i = 0; i < a.ndim(); ++i) {}')).toBe('');
    expect(marked('bool f = a < b && c > d;')).toBe('');
  });
});

describe('mutation operators', () => {
  it('changes each relational and logical operator', () => {
    expect(summary('bool f(int a, int b) { return a < b && a != b; }')).toEqual([
      'cxx_lt_to_ge: bool f(int a, int b) { return a >= b && a != b; }',
      'cxx_lt_to_le: bool f(int a, int b) { return a <= b && a != b; }',
      'cxx_logical_and_to_or: bool f(int a, int b) { return a < b || a != b; }',
      'cxx_ne_to_eq: bool f(int a, int b) { return a < b && a == b; }',
    ]);
    expect(summary('  x = a >= b || a == b;')).toEqual([
      'cxx_ge_to_gt: x = a > b || a == b;',
      'cxx_ge_to_lt: x = a < b || a == b;',
      'cxx_logical_or_to_and: x = a >= b && a == b;',
      'cxx_eq_to_ne: x = a >= b || a != b;',
    ]);
    expect(summary('  y = a <= b; z = a > b;')).toEqual([
      'cxx_le_to_gt: y = a > b; z = a > b;',
      'cxx_le_to_lt: y = a < b; z = a > b;',
      'cxx_gt_to_ge: y = a <= b; z = a >= b;',
      'cxx_gt_to_le: y = a <= b; z = a <= b;',
    ]);
  });

  it('changes binary arithmetic, compound assignment and increments, not pointers, references or signs', () => {
    expect(summary('  n = a + b - c * d / e % f;')).toEqual([
      'cxx_add_to_sub: n = a - b - c * d / e % f;',
      'cxx_sub_to_add: n = a + b + c * d / e % f;',
      'cxx_mul_to_div: n = a + b - c / d / e % f;',
      'cxx_div_to_mul: n = a + b - c * d * e % f;',
      'cxx_rem_to_div: n = a + b - c * d / e / f;',
    ]);
    expect(summary('  last += n; ++i;')).toEqual([
      'cxx_add_assign_to_sub_assign: last -= n; ++i;',
      'cxx_inc_to_dec: last += n; --i;',
    ]);
    expect(summary('void f(T* p, T& r, T&& m) { g(*p, &r, -x); }')).toEqual([
      'cxx_remove_void_call: void f(T* p, T& r, T&& m) {  }',
    ]);
    expect(summary('  s = std::string("a") + "b";')).toEqual([]);
  });

  it('removes a negation, flips booleans and replaces conditions', () => {
    expect(summary('  if (!ok) {\n    g();\n  }')).toEqual([
      'cxx_condition_to_false: if (false) {',
      'cxx_condition_to_true: if (true) {',
      'negate_mutator: if (ok) {',
      'cxx_remove_void_call: ',
    ]);
    expect(summary('  bool wait = true;')).toEqual(['cxx_bool_true_to_false: bool wait = false;']);
    expect(summary('  if constexpr (a) {}')).toEqual([]);
  });

  it('replaces an integer literal by n+1, n-1 and 0, keeping its suffix', () => {
    expect(summary('  x = 8u;')).toEqual([
      'scalar_value_mutator: x = 9u;',
      'scalar_value_mutator: x = 7u;',
      'scalar_value_mutator: x = 0u;',
    ]);
    expect(summary('  x = 0;')).toEqual(['scalar_value_mutator: x = 1;']);
    expect(summary('  x = 1.5;')).toEqual([]);
  });

  it('removes calls, assignments and a return in a branch, never a declaration', () => {
    const text = [
      'int f(int a) {',
      '  int n = 0;',
      '  n = a;',
      '  g(n);',
      '  if (a) {',
      '    return 1;',
      '  }',
      '  return n;',
      '}',
    ].join('\n');
    const removed = mutants(text)
      .filter((m) => m.operator.startsWith('cxx_remove'))
      .map((m) => `${m.operator} ${m.line}`);
    expect(removed).toEqual(['cxx_remove_assignment 3', 'cxx_remove_void_call 4', 'cxx_remove_return 6']);
  });

  it('replaces a returned enum value by the next enumerator', () => {
    const text = 'enum class S { ok, bad, worse };\nS f() {\n  return S::worse;\n}';
    const enums = enumsIn(text);
    expect(enums.get('S')).toEqual(['ok', 'bad', 'worse']);
    expect(mutants(text, enums).map((m) => m.mutated.trim())).toContain('return S::ok;');
  });

  it('makes no mutant inside comments, strings, preprocessor lines or template arguments', () => {
    const text = [
      '#include <a.h>',
      '#if X > 1 && Y',
      '#endif',
      '// if (a < b) return 1;',
      '/* a - b */',
      'auto s = "a < b && c + 1";',
      'auto r = R"(x > 2 || y)";',
      "auto c = '-';",
      'auto v = static_cast<std::array<int, 3>*>(p);',
      'std::vector<std::pair<int, int>> w;',
    ].join('\n');
    expect(mutants(text)).toEqual([]);
  });

  it('mutates only the added lines, with stable ids and one-line descriptions', () => {
    const text = '  a = b + 1;\n  c = d + 1;\n';
    const only2 = generateMutants({ file: 'x.cpp', text, lines: new Set([2]), enums: new Map() });
    expect(only2.map((m) => m.id)).toEqual([
      'x.cpp:2:9:cxx_add_to_sub',
      'x.cpp:2:11:scalar_value_mutator:plus_one',
      'x.cpp:2:11:scalar_value_mutator:minus_one',
    ]);
    expect(only2[0]?.description).toBe('+ -> -');
    expect(mutantKey(only2[1]!)).toBe(mutantKey({ ...only2[1]! }));
    expect(OPERATORS).toContain('cxx_lt_to_le');
  });
});

describe('score and equivalent mutants', () => {
  it('computes the score without not-viable and equivalent mutants', () => {
    expect(mutationScore({ generated: 10, notViable: 2, killed: 6, survived: 1, equivalent: 1 })).toBeCloseTo(85.71, 1);
    expect(mutationScore({ generated: 1, notViable: 1, killed: 0, survived: 0, equivalent: 0 })).toBe(100);
  });

  it('matches an entry by id and mutated line, and reports the others as stale', () => {
    const [m] = mutants('  x = 0;');
    const entries = parseEquivalents(
      JSON.stringify({
        equivalent: [
          { id: m!.id, mutated: 'x = 1;', reason: 'x is never read again.' },
          { id: 'a.cpp:9:9:cxx_add_to_sub', mutated: 'y = a - b;', reason: 'the code moved away.' },
        ],
      }),
      'mutants-equivalent.json',
    );
    const { equivalent, stale } = matchEquivalents(entries, [m!]);
    expect([...equivalent.keys()]).toEqual([m!.id]);
    expect(stale.map((e) => e.id)).toEqual(['a.cpp:9:9:cxx_add_to_sub']);
    expect(() => parseEquivalents('{"equivalent": [{"id": "x", "mutated": "y"}]}', 'f.json')).toThrow(/reason/);
  });
});
