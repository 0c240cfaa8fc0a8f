/**
 * A C++ tokenizer for mutation: enough of the lexical grammar to tell code
 * from comments, string and character literals (raw strings too) and
 * preprocessor lines, and to mark the angle brackets of template argument
 * lists. Pure.
 */

export type TokenKind = 'ident' | 'number' | 'string' | 'char' | 'punct' | 'comment' | 'preproc';

export interface Token {
  kind: TokenKind;
  text: string;
  /** Offset of the first character in the source. */
  start: number;
  /** 1-based line and column of the first character. */
  line: number;
  column: number;
  /** Whitespace or a comment comes right before / after the token. */
  spaceBefore: boolean;
  spaceAfter: boolean;
  /** Inside a template argument list (the angle brackets included). */
  inTemplate: boolean;
}

const PUNCTUATORS = [
  '<=>',
  '>>=',
  '<<=',
  '->*',
  '...',
  '->',
  '++',
  '--',
  '<<',
  '>>',
  '<=',
  '>=',
  '==',
  '!=',
  '&&',
  '||',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '&=',
  '|=',
  '^=',
  '::',
  '.*',
  '##',
];

const STRING_PREFIX = /^(?:u8|u|U|L)?R?$/;

/** Splits C++ source into tokens. Whitespace is dropped; comments and preprocessor lines are tokens of their own. */
export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  const position = linePositions(source);
  let i = 0;
  let atLineStart = true;
  const push = (kind: TokenKind, start: number, end: number) => {
    const prev = tokens.at(-1);
    const spaceBefore = start > 0 && (/\s/.test(source[start - 1] as string) || prev?.kind === 'comment');
    if (prev) prev.spaceAfter = prev.spaceAfter || spaceBefore;
    tokens.push({
      kind,
      text: source.slice(start, end),
      start,
      ...position(start),
      spaceBefore,
      spaceAfter: end < source.length && /\s/.test(source[end] as string),
      inTemplate: false,
    });
  };
  while (i < source.length) {
    const c = source[i] as string;
    if (c === '\n') {
      atLineStart = true;
      i++;
      continue;
    }
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const start = i;
    if (c === '#' && atLineStart) {
      i = preprocessorEnd(source, i);
      push('preproc', start, i);
      continue;
    }
    atLineStart = false;
    if (source.startsWith('//', i)) {
      i = lineCommentEnd(source, i);
      push('comment', start, i);
      continue;
    }
    if (source.startsWith('/*', i)) {
      i = blockCommentEnd(source, i);
      push('comment', start, i);
      continue;
    }
    if (/[A-Za-z_$]/.test(c)) {
      while (i < source.length && /[\w$]/.test(source[i] as string)) i++;
      const word = source.slice(start, i);
      if ((source[i] === '"' || source[i] === "'") && STRING_PREFIX.test(word) && word !== '') {
        if (source[i] === '"' && word.endsWith('R')) {
          i = rawStringEnd(source, i);
          push('string', start, i);
        } else {
          i = quotedEnd(source, i);
          push(source[start + word.length] === '"' ? 'string' : 'char', start, i);
        }
        continue;
      }
      push('ident', start, i);
      continue;
    }
    if (/\d/.test(c) || (c === '.' && /\d/.test(source[i + 1] ?? ''))) {
      i = numberEnd(source, i);
      push('number', start, i);
      continue;
    }
    if (c === '"' || c === "'") {
      i = quotedEnd(source, i);
      push(c === '"' ? 'string' : 'char', start, i);
      continue;
    }
    const punct = PUNCTUATORS.find((p) => source.startsWith(p, i)) ?? c;
    i += punct.length;
    push('punct', start, i);
  }
  markTemplateArguments(tokens.filter((t) => t.kind !== 'comment'));
  return tokens;
}

/** A function from an offset in `source` to its 1-based line and column. */
function linePositions(source: string): (offset: number) => { line: number; column: number } {
  const lineStarts = [0];
  for (let i = 0; i < source.length; i++) if (source[i] === '\n') lineStarts.push(i + 1);
  return (offset: number) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((lineStarts[mid] as number) <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - (lineStarts[lo] as number) + 1 };
  };
}

/** The end of a preprocessor line starting at `hash`. */
function preprocessorEnd(source: string, hash: number): number {
  let i = hash;
  // A preprocessor line runs to an unescaped line end, past comments and continuations.
  while (i < source.length && source[i] !== '\n') {
    if (source[i] === '\\' && source[i + 1] === '\n') i += 2;
    else if (source.startsWith('/*', i)) i = blockCommentEnd(source, i);
    else i++;
  }
  return i;
}

/** The end of a `//` comment starting at `open`: the line end, past escaped line ends. */
function lineCommentEnd(source: string, open: number): number {
  let i = open;
  while (i < source.length && source[i] !== '\n') {
    if (source[i] === '\\' && source[i + 1] === '\n') i += 2;
    else i++;
  }
  return i;
}

/** The end of a `/*` comment starting at `open`; an unterminated one runs to the end of the source. */
function blockCommentEnd(source: string, open: number): number {
  const end = source.indexOf('*/', open + 2);
  return end < 0 ? source.length : end + 2;
}

/** The end of a number starting at `first`. */
function numberEnd(source: string, first: number): number {
  // A pp-number: digits, letters, dots, digit separators and signed exponents.
  let i = first + 1;
  while (i < source.length) {
    const d = source[i] as string;
    if (/[eEpP]/.test(d) && /[+-]/.test(source[i + 1] ?? '')) i += 2;
    else if (d === "'" && /[\dA-Za-z]/.test(source[i + 1] ?? '')) i += 2;
    else if (/[\w.]/.test(d)) i++;
    else break;
  }
  return i;
}

/** The end of a quoted literal starting at `open`, with escapes; an unterminated one ends at the line end. */
function quotedEnd(source: string, open: number): number {
  const quote = source[open];
  let i = open + 1;
  while (i < source.length && source[i] !== quote && source[i] !== '\n') i += source[i] === '\\' ? 2 : 1;
  return Math.min(source.length, i + 1);
}

/** The end of a raw string R"delim( ... )delim" whose quote is at `quote`. */
function rawStringEnd(source: string, quote: number): number {
  const paren = source.indexOf('(', quote);
  if (paren < 0) return quotedEnd(source, quote);
  const delimiter = source.slice(quote + 1, paren);
  const end = source.indexOf(`)${delimiter}"`, paren + 1);
  return end < 0 ? source.length : end + delimiter.length + 2;
}

const CASTS = new Set(['static_cast', 'dynamic_cast', 'const_cast', 'reinterpret_cast', 'template']);
/** Tokens that end a template argument list search: a `<` followed by one of these before its `>` compares. */
const NOT_IN_TEMPLATE = new Set([';', '{', '}', '&&', '||', '?', '=', '+=', '-=', 'return']);
/** Tokens that may follow the closing `>` of a template argument list. */
const AFTER_TEMPLATE = new Set(['(', ')', '::', '{', '}', ',', ';', '>', '>>', '&', '&&', '*', '...', '[', ']', '=']);

/**
 * Marks the `<` ... `>` of template argument lists: a `<` after a cast or
 * `template`, or after a name when a matching `>` comes before anything that
 * cannot be inside template arguments, and the token after it can follow
 * one (`(`, `::`, a name, `;`, ...). `>>` closes two lists.
 */
function markTemplateArguments(tokens: Token[]): void {
  for (let i = 0; i < tokens.length; i++) {
    const open = tokens[i] as Token;
    if (open.kind !== 'punct' || open.text !== '<' || open.inTemplate) continue;
    const before = tokens[i - 1];
    if (before === undefined || before.kind !== 'ident' || before.text === 'operator') continue;
    const close = matchingAngle(tokens, i);
    if (close === null) continue;
    const after = tokens[close.index + 1];
    const sure = CASTS.has(before.text) || tokens[i - 2]?.text === 'template';
    if (!sure && after !== undefined && after.kind !== 'ident' && !AFTER_TEMPLATE.has(after.text)) continue;
    for (let k = i; k <= close.index; k++) (tokens[k] as Token).inTemplate = true;
  }
}

function matchingAngle(tokens: readonly Token[], open: number): { index: number } | null {
  let angles = 1;
  let parens = 0;
  for (let k = open + 1; k < tokens.length; k++) {
    const t = tokens[k] as Token;
    if (t.kind === 'preproc') return null;
    if (t.kind !== 'punct' && !(t.kind === 'ident' && t.text === 'return')) continue;
    if (t.text === '(' || t.text === '[') parens++;
    else if (t.text === ')' || t.text === ']') {
      if (--parens < 0) return null;
    } else if (parens > 0) continue;
    else if (NOT_IN_TEMPLATE.has(t.text)) return null;
    else if (t.text === '<') angles++;
    else if (t.text === '>' || t.text === '>>') {
      angles -= t.text.length;
      if (angles <= 0) return { index: k };
    }
  }
  return null;
}
