/**
 * Mutants generated from C++ source by fixed operator classes, modelled on
 * Mull's (cxx_lt_to_le, cxx_logical_and_to_or, negate_mutator,
 * scalar_value_mutator, cxx_remove_void_call, ...). Pure: text in, mutants out.
 */
import { createHash } from 'node:crypto';

import { tokenize, type Token } from './cxx-tokens.js';

export interface GeneratedMutant {
  /** Stable id: file:line:column:operator (plus a suffix when one operator makes several mutants there). */
  id: string;
  operator: string;
  file: string;
  line: number;
  column: number;
  /** One line: what the mutant changes. */
  description: string;
  /** The source line before and after (the first line of the change). */
  original: string;
  mutated: string;
  /** The whole mutated file. */
  text: string;
}

interface Edit {
  operator: string;
  start: number;
  end: number;
  replacement: string;
  description: string;
  /** Tells two mutants of one operator at one place apart. */
  suffix?: string;
}

const RELATIONAL: Record<string, Array<[string, string]>> = {
  '<': [
    ['<=', 'cxx_lt_to_le'],
    ['>=', 'cxx_lt_to_ge'],
  ],
  '<=': [
    ['<', 'cxx_le_to_lt'],
    ['>', 'cxx_le_to_gt'],
  ],
  '>': [
    ['>=', 'cxx_gt_to_ge'],
    ['<=', 'cxx_gt_to_le'],
  ],
  '>=': [
    ['>', 'cxx_ge_to_gt'],
    ['<', 'cxx_ge_to_lt'],
  ],
  '==': [['!=', 'cxx_eq_to_ne']],
  '!=': [['==', 'cxx_ne_to_eq']],
  '&&': [['||', 'cxx_logical_and_to_or']],
  '||': [['&&', 'cxx_logical_or_to_and']],
};

const ARITHMETIC: Record<string, [string, string]> = {
  '+': ['-', 'cxx_add_to_sub'],
  '-': ['+', 'cxx_sub_to_add'],
  '*': ['/', 'cxx_mul_to_div'],
  '/': ['*', 'cxx_div_to_mul'],
  '%': ['/', 'cxx_rem_to_div'],
  '+=': ['-=', 'cxx_add_assign_to_sub_assign'],
  '-=': ['+=', 'cxx_sub_assign_to_add_assign'],
  '*=': ['/=', 'cxx_mul_assign_to_div_assign'],
  '/=': ['*=', 'cxx_div_assign_to_mul_assign'],
  '++': ['--', 'cxx_inc_to_dec'],
  '--': ['++', 'cxx_dec_to_inc'],
};

/** Every operator the generator knows, for documentation and tests. */
export const OPERATORS = [
  ...new Set([
    ...Object.values(RELATIONAL).flatMap((r) => r.map(([, name]) => name)),
    ...Object.values(ARITHMETIC).map(([, name]) => name),
    'negate_mutator',
    'scalar_value_mutator',
    'cxx_bool_true_to_false',
    'cxx_bool_false_to_true',
    'cxx_condition_to_true',
    'cxx_condition_to_false',
    'cxx_remove_void_call',
    'cxx_remove_assignment',
    'cxx_remove_return',
    'cxx_replace_enum_return',
  ]),
];

const KEYWORDS_BEFORE_UNARY = new Set([
  'return',
  'case',
  'throw',
  'co_return',
  'co_yield',
  'sizeof',
  'delete',
  'new',
  'else',
  'do',
]);

/** The token ends an operand: a binary operator can follow it. */
function endsOperand(t: Token | undefined): boolean {
  if (t === undefined) return false;
  if (t.kind === 'ident') return !KEYWORDS_BEFORE_UNARY.has(t.text);
  if (t.kind === 'number' || t.kind === 'string' || t.kind === 'char') return true;
  return t.kind === 'punct' && (t.text === ')' || t.text === ']');
}

export interface GenerateInput {
  file: string;
  text: string;
  /** 1-based line numbers the series adds; only these are mutated. */
  lines: ReadonlySet<number>;
  /** Enumerators by enum name (`enum class E { a, b }`), for returned enum values. */
  enums: ReadonlyMap<string, readonly string[]>;
}

/** The enumerators of each `enum` / `enum class` in the source. */
export function enumsIn(text: string): Map<string, string[]> {
  const tokens = code(tokenize(text));
  const found = new Map<string, string[]>();
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i]?.text !== 'enum') continue;
    let k = i + 1;
    if (tokens[k]?.text === 'class' || tokens[k]?.text === 'struct') k++;
    const name = tokens[k];
    if (name?.kind !== 'ident') continue;
    while (k < tokens.length && tokens[k]?.text !== '{' && tokens[k]?.text !== ';') k++;
    if (tokens[k]?.text !== '{') continue;
    const members: string[] = [];
    let expectName = true;
    let depth = 0;
    for (k++; k < tokens.length; k++) {
      const t = tokens[k] as Token;
      if (depth === 0 && t.text === '}') break;
      if (t.text === '(' || t.text === '{') depth++;
      else if (t.text === ')' || t.text === '}') depth--;
      else if (depth === 0 && t.text === ',') expectName = true;
      else if (expectName && t.kind === 'ident') {
        members.push(t.text);
        expectName = false;
      }
    }
    found.set(name.text, members);
  }
  return found;
}

function code(tokens: readonly Token[]): Token[] {
  return tokens.filter((t) => t.kind !== 'comment' && t.kind !== 'preproc');
}

/** The mutants of the added lines of one file, in source order, with unique ids. */
export function generateMutants(input: GenerateInput): GeneratedMutant[] {
  const tokens = code(tokenize(input.text));
  const edits: Edit[] = [];
  const onAddedLine = (t: Token) => input.lines.has(t.line);
  const blocks = blockKinds(tokens);

  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    const prev = tokens[i - 1];
    if (!onAddedLine(t) || t.inTemplate) continue;
    if (prev?.text === 'operator') continue;
    edits.push(...tokenEdits(tokens, i));
  }
  edits.push(...statementEdits(tokens, blocks, onAddedLine, input.enums, input.text));
  return mutantsOf(input, edits);
}

/** The edits of the token at `i` on its own: its operator, a `true` or `false`, a number. */
function tokenEdits(tokens: readonly Token[], i: number): Edit[] {
  const t = tokens[i] as Token;
  const edits: Edit[] = [];
  if (t.kind === 'punct') edits.push(...operatorEdits(tokens, i));
  if (t.kind === 'ident' && (t.text === 'true' || t.text === 'false')) {
    const to = t.text === 'true' ? 'false' : 'true';
    edits.push({
      operator: `cxx_bool_${t.text}_to_${to}`,
      start: t.start,
      end: t.start + t.text.length,
      replacement: to,
      description: `${t.text} -> ${to}`,
    });
  }
  if (t.kind === 'number') edits.push(...scalarEdits(t));
  return edits;
}

/** The edits of the punctuator at `i`: relational and arithmetic operators, `!`, and the condition it opens. */
function operatorEdits(tokens: readonly Token[], i: number): Edit[] {
  const t = tokens[i] as Token;
  const prev = tokens[i - 1];
  const next = tokens[i + 1];
  const edits: Edit[] = [];
  // clang-format spaces binary operators: `T&& x`, `T* p`, `-1`, `*p` and `&x` are not binary.
  const binary = endsOperand(prev) && t.spaceBefore && t.spaceAfter;
  for (const [to, name] of RELATIONAL[t.text] ?? [])
    if (binary)
      edits.push({
        operator: name,
        start: t.start,
        end: t.start + t.text.length,
        replacement: to,
        description: `${t.text} -> ${to}`,
      });
  const arith = ARITHMETIC[t.text];
  if (arith !== undefined) {
    const [to, name] = arith;
    const step = t.text === '++' || t.text === '--';
    const compound = t.text.endsWith('=');
    // `std::string + "..."` only compiles as concatenation.
    const text = prev?.kind === 'string' || next?.kind === 'string';
    if (step || compound || (binary && !text))
      edits.push({
        operator: name,
        start: t.start,
        end: t.start + t.text.length,
        replacement: to,
        description: `${t.text} -> ${to}`,
      });
  }
  if (t.text === '!' && !endsOperand(prev))
    edits.push({
      operator: 'negate_mutator',
      start: t.start,
      end: t.start + 1,
      replacement: '',
      description: `!x -> x`,
    });
  if (t.text === '(' && (prev?.text === 'if' || prev?.text === 'while') && next?.text !== 'constexpr')
    edits.push(...conditionEdits(tokens, i, prev.text));
  return edits;
}

/** The condition of the `if` or `while` whose `(` is at `open`, replaced by `true` and by `false`. */
function conditionEdits(tokens: readonly Token[], open: number, keyword: string): Edit[] {
  const close = matching(tokens, open);
  const init = close !== null && tokens.slice(open + 1, close).some((x) => x.text === ';');
  if (close === null || init) return [];
  const from = (tokens[open + 1] as Token).start;
  const to = (tokens[close] as Token).start;
  return ['true', 'false'].map((value) => ({
    operator: `cxx_condition_to_${value}`,
    start: from,
    end: to,
    replacement: value,
    description: `${keyword} condition -> ${value}`,
  }));
}

/** The mutants the edits make, in source order, each with a unique id; an edit that changes nothing makes none. */
function mutantsOf(input: GenerateInput, edits: Edit[]): GeneratedMutant[] {
  const mutants: GeneratedMutant[] = [];
  const ids = new Set<string>();
  for (const e of edits.sort((a, b) => a.start - b.start || a.operator.localeCompare(b.operator))) {
    const text = input.text.slice(0, e.start) + e.replacement + input.text.slice(e.end);
    if (text === input.text) continue;
    const { line, column } = lineColumn(input.text, e.start);
    let id = `${input.file}:${line}:${column}:${e.operator}${e.suffix ? `:${e.suffix}` : ''}`;
    for (let n = 2; ids.has(id); n++) id = `${input.file}:${line}:${column}:${e.operator}:${n}`;
    ids.add(id);
    const original = input.text.split('\n')[line - 1] ?? '';
    const mutatedLine = text.split('\n')[line - 1] ?? '';
    mutants.push({
      id,
      operator: e.operator,
      file: input.file,
      line,
      column,
      description: e.description,
      original,
      mutated: mutatedLine,
      text,
    });
  }
  return mutants;
}

function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const line = before.split('\n').length;
  return { line, column: offset - before.lastIndexOf('\n') };
}

/** scalar_value_mutator: an integer literal n becomes n+1, n-1 and 0 (each once). */
function scalarEdits(t: Token): Edit[] {
  const match = /^(0[xX][\da-fA-F']+|0[bB][01']+|\d[\d']*)([uUlLzZ]*)$/.exec(t.text);
  if (match === null) return [];
  const digits = (match[1] as string).replace(/'/g, '');
  const value = /^0[bB]/.test(digits) ? parseInt(digits.slice(2), 2) : Number(digits);
  if (!Number.isSafeInteger(value)) return [];
  const suffix = match[2] as string;
  const values = [
    ['plus_one', value + 1],
    ['minus_one', value - 1],
    ['zero', 0],
  ] as const;
  const seen = new Set<number>([value]);
  const out: Edit[] = [];
  for (const [name, v] of values) {
    if (seen.has(v) || v < 0) continue;
    seen.add(v);
    out.push({
      operator: 'scalar_value_mutator',
      suffix: name,
      start: t.start,
      end: t.start + t.text.length,
      replacement: `${v}${suffix}`,
      description: `${t.text} -> ${v}${suffix}`,
    });
  }
  return out;
}

function matching(tokens: readonly Token[], open: number): number | null {
  const pairs: Record<string, string> = { '(': ')', '{': '}', '[': ']' };
  const closer = pairs[(tokens[open] as Token).text];
  let depth = 0;
  for (let k = open; k < tokens.length; k++) {
    const text = (tokens[k] as Token).text;
    if (text === (tokens[open] as Token).text) depth++;
    else if (text === closer && --depth === 0) return k;
  }
  return null;
}

type BlockKind = 'code' | 'branch' | 'init' | 'decl';

/** What each `{` opens: a function body, the body of an if/else/loop, an initializer, or a declaration scope. */
function blockKinds(tokens: readonly Token[]): Map<number, BlockKind> {
  const kinds = new Map<number, BlockKind>();
  const stack: BlockKind[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    if (t.text === '}') {
      stack.pop();
      continue;
    }
    if (t.text !== '{') continue;
    const prev = tokens[i - 1];
    const inside = stack.at(-1);
    let kind: BlockKind;
    if (prev?.text === 'else' || prev?.text === 'do') kind = 'branch';
    else if (prev?.text === ')') {
      const open = openingParen(tokens, i - 1);
      const head = open === null ? undefined : tokens[open - 1]?.text;
      kind = head === 'if' || head === 'for' || head === 'while' || head === 'switch' ? 'branch' : 'code';
    } else if (prev !== undefined && ['const', 'noexcept', 'override', 'final', 'try', 'mutable'].includes(prev.text))
      kind = 'code';
    else if (inside === 'code' || inside === 'branch' || inside === 'init')
      kind = prev?.text === ';' || prev?.text === '{' || prev?.text === '}' ? 'code' : 'init';
    else kind = 'decl';
    kinds.set(i, kind);
    stack.push(kind);
  }
  return kinds;
}

function openingParen(tokens: readonly Token[], close: number): number | null {
  let depth = 0;
  for (let k = close; k >= 0; k--) {
    const text = (tokens[k] as Token).text;
    if (text === ')') depth++;
    else if (text === '(' && --depth === 0) return k;
  }
  return null;
}

/**
 * Statement removal (a call, an assignment, a `return` in a branch) and
 * returned enum values: statements directly in a function or branch body.
 */
function statementEdits(
  tokens: readonly Token[],
  blocks: ReadonlyMap<number, BlockKind>,
  added: (t: Token) => boolean,
  enums: ReadonlyMap<string, readonly string[]>,
  text: string,
): Edit[] {
  const edits: Edit[] = [];
  const stack: Array<{ kind: BlockKind; braceOnly: boolean }> = [];
  let statementStart = 0;
  let depth = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i] as Token;
    if (t.text === '(' || t.text === '[') depth++;
    else if (t.text === ')' || t.text === ']') depth--;
    if (depth > 0) continue;
    if (t.text === '{') {
      stack.push({ kind: blocks.get(i) ?? 'decl', braceOnly: true });
      if (blocks.get(i) !== 'init') statementStart = i + 1;
      continue;
    }
    if (t.text === '}') {
      const closed = stack.pop();
      if (closed?.kind !== 'init') statementStart = i + 1;
      continue;
    }
    if (t.text !== ';') continue;
    const block = stack.at(-1)?.kind;
    const statement = tokens.slice(statementStart, i + 1);
    statementStart = i + 1;
    if ((block !== 'code' && block !== 'branch') || statement.length < 2) continue;
    const first = statement[0] as Token;
    if (!statement.every(added)) continue;
    const start = first.start;
    const end = t.start + 1;
    const source = text.slice(start, end);
    const short = source.replace(/\s+/g, ' ');
    if (first.text === 'return') {
      const enumEdit = enumReturn(statement, enums);
      if (enumEdit) edits.push(enumEdit);
      if (block === 'branch')
        edits.push({ operator: 'cxx_remove_return', start, end, replacement: '', description: `remove \`${short}\`` });
      continue;
    }
    if (first.kind !== 'ident' || isDeclaration(statement) || KEYWORDS_BEFORE_UNARY.has(first.text)) continue;
    if (['break', 'continue', 'goto', 'using', 'typedef', 'static_assert'].includes(first.text)) continue;
    const assignment = statement.some(
      (s) => ['=', '+=', '-=', '*=', '/=', '%=', '|=', '&=', '^=', '<<=', '>>='].includes(s.text) && !s.inTemplate,
    );
    const last = statement.at(-2);
    if (assignment)
      edits.push({
        operator: 'cxx_remove_assignment',
        start,
        end,
        replacement: '',
        description: `remove \`${short}\``,
      });
    else if (last?.text === ')')
      edits.push({ operator: 'cxx_remove_void_call', start, end, replacement: '', description: `remove \`${short}\`` });
  }
  return edits;
}

/** `T name ...`, `auto& x = ...`, `const T* p;`: a declaration, whose removal cannot compile. */
function isDeclaration(statement: readonly Token[]): boolean {
  for (let k = 0; k + 1 < statement.length; k++) {
    const a = statement[k] as Token;
    const b = statement[k + 1] as Token;
    if (a.text === '=' || a.text === '(' || a.text === '{' || a.text === '.' || a.text === '->') return false;
    if (b.kind === 'ident' && (a.kind === 'ident' || (a.kind === 'punct' && ['*', '&', '&&', '>'].includes(a.text))))
      return !(a.kind === 'ident' && KEYWORDS_BEFORE_UNARY.has(a.text));
  }
  return false;
}

/** `return E::a;` becomes `return E::b;` with b the next enumerator of E (the first after the last). */
function enumReturn(statement: readonly Token[], enums: ReadonlyMap<string, readonly string[]>): Edit | null {
  if (statement.length !== 5 || statement[2]?.text !== '::') return null;
  const type = statement[1] as Token;
  const value = statement[3] as Token;
  const members = enums.get(type.text);
  if (members === undefined || members.length < 2) return null;
  const at = members.indexOf(value.text);
  if (at < 0) return null;
  const other = members[(at + 1) % members.length] as string;
  return {
    operator: 'cxx_replace_enum_return',
    start: value.start,
    end: value.start + value.text.length,
    replacement: other,
    description: `return ${type.text}::${value.text} -> ${type.text}::${other}`,
  };
}

/** A hash of a mutant's identity and text: results are kept by it. */
export function mutantKey(m: Pick<GeneratedMutant, 'id' | 'text'>): string {
  return createHash('sha256').update(`${m.id}\0${m.text}`).digest('hex').slice(0, 24);
}

export interface MutantCounts {
  generated: number;
  notViable: number;
  killed: number;
  survived: number;
  equivalent: number;
}

/** killed / (generated - not viable - equivalent), as a percentage; 100 when nothing is left to kill. */
export function mutationScore(c: MutantCounts): number {
  const judged = c.generated - c.notViable - c.equivalent;
  return judged <= 0 ? 100 : (100 * c.killed) / judged;
}
