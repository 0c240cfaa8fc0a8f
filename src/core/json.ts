import path from 'node:path';

import type { z } from 'zod';

import { isUserError, UserError } from './errors.js';

/**
 * The value of a JSON text the tool wrote itself (a saved result, the bump
 * state, the lock), or null when the text is not JSON or not of `schema`:
 * anything else in such a file means it cannot be used.
 */
export function parseSaved<T>(text: string, schema: z.ZodType<T, z.ZodTypeDef, unknown>): T | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** A JSON copy of `value` with every string (keys too) passed through `map`: no value of it can leak into another. */
export function mapJsonStrings(value: unknown, map: (text: string) => string): unknown {
  if (typeof value === 'string') return map(value);
  if (Array.isArray(value)) return value.map((v) => mapJsonStrings(v, map));
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined && typeof v !== 'function')
        .map(([k, v]) => [map(k), mapJsonStrings(v, map)]),
    );
  return value;
}

/** What an internal error's report says to do. */
export const INTERNAL_HINT = 'This is a bug in mlx-storage-pr; please report it with the output above.';

/**
 * The one `--json` shape of every failure, usage, expected and internal alike:
 * `{ok: false, command, error: {code, message, hint, details}}`; `command` is
 * null when the command line named none.
 */
export function failureReport(command: string | null, error: unknown): object {
  if (isUserError(error))
    return {
      ok: false,
      command,
      error: { code: error.code, message: error.message, hint: error.hint ?? null, details: error.details ?? null },
    };
  const err = error instanceof Error ? error : new Error(String(error));
  return {
    ok: false,
    command,
    error: {
      code: 'INTERNAL',
      message: err.message,
      hint: INTERNAL_HINT,
      details: { name: err.name, stack: err.stack ?? null },
    },
  };
}

/**
 * Parses the JSON text of a project file. A syntax error is CONFIG_INVALID,
 * naming the file's line and column (JSON.parse gives a character position at best).
 */
export function parseJsonFile(text: string, file: string): unknown {
  // Some editors on Windows save UTF-8 with a byte-order mark; it is no part of the JSON.
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    const where = locateJsonError(text);
    throw new UserError('CONFIG_INVALID', `${file}:${where.line}:${where.column}: invalid JSON: ${where.message}.`, {
      hint: `Fix the JSON syntax at line ${where.line}, column ${where.column} of ${path.basename(file)}.`,
      details: { file, line: where.line, column: where.column },
    });
  }
}

/** Where a JSON text first breaks the grammar: 1-based line and column, and what was expected. */
export interface JsonSyntaxError {
  offset: number;
  line: number;
  column: number;
  message: string;
}

class Stop extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Finds the first syntax error in `text` (call it after JSON.parse failed).
 * JSON.parse's own messages differ between Node versions and often give no
 * position at all, so this small scanner follows RFC 8259 itself.
 */
export function locateJsonError(text: string): JsonSyntaxError {
  let i = 0;
  const describe = (at: number) => (at >= text.length ? 'the end of the file' : JSON.stringify(text[at]));
  const fail = (message: string, at = i): never => {
    throw new Stop(at, message);
  };
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i++;
  };
  const literal = (word: string) => {
    const start = i;
    const found = /^[A-Za-z0-9_]*/.exec(text.slice(i))?.[0] ?? '';
    if (found !== word)
      fail(`unexpected ${JSON.stringify(found)} (expected a value such as ${word}, a number or a "string")`, start);
    i += word.length;
  };
  const string = () => {
    i++; // opening quote
    for (;;) {
      if (i >= text.length) fail('unexpected end of the file inside a string (missing closing ")');
      const ch = text[i] as string;
      if (ch === '"') {
        i++;
        return;
      }
      if (ch.charCodeAt(0) < 0x20) fail(`line break or control character inside a string (missing closing "?)`);
      if (ch === '\\') {
        const next = text[i + 1];
        if (next === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) fail('invalid \\u escape in a string');
          i += 6;
        } else if (next !== undefined && '"\\/bfnrt'.includes(next)) i += 2;
        else fail(`invalid escape \\${next ?? ''} in a string`);
        continue;
      }
      i++;
    }
  };
  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!match || match[0] === '-') fail(`unexpected ${describe(i)} (expected a number)`);
    i += (match as RegExpExecArray)[0].length;
  };
  const value = (): void => {
    ws();
    const ch = text[i];
    if (ch === undefined) return fail('unexpected end of the file (expected a value)');
    if (ch === '{') return object();
    if (ch === '[') return array();
    if (ch === '"') return string();
    if (ch === '-' || (ch >= '0' && ch <= '9')) return number();
    if (ch === 't') return literal('true');
    if (ch === 'f') return literal('false');
    if (ch === 'n') return literal('null');
    if (ch === "'") return fail('strings and property names need double quotes');
    return fail(`unexpected ${describe(i)} (expected a value)`);
  };
  const object = () => {
    i++;
    ws();
    if (text[i] === '}') {
      i++;
      return;
    }
    for (;;) {
      ws();
      if (text[i] === "'") fail('strings and property names need double quotes');
      if (text[i] !== '"') fail(`unexpected ${describe(i)} (expected a property name in double quotes)`);
      string();
      ws();
      if (text[i] !== ':') fail(`unexpected ${describe(i)} (expected ':' after the property name)`);
      i++;
      value();
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      if (text[i] !== ',') fail(`unexpected ${describe(i)} (expected ',' or '}' after a property value)`);
      i++;
      ws();
      if (text[i] === '}') fail("trailing comma before '}': JSON allows none");
    }
  };
  const array = () => {
    i++;
    ws();
    if (text[i] === ']') {
      i++;
      return;
    }
    for (;;) {
      value();
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      if (text[i] !== ',') fail(`unexpected ${describe(i)} (expected ',' or ']' after an array element)`);
      i++;
      ws();
      if (text[i] === ']') fail("trailing comma before ']': JSON allows none");
    }
  };

  let offset = text.length;
  let message = 'no syntax error found';
  try {
    if (text.charCodeAt(0) === 0xfeff) i = 1;
    value();
    ws();
    if (i < text.length) fail(`unexpected ${describe(i)} after the end of the JSON value`);
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    offset = error.offset;
    message = error.message;
  }
  const before = text.slice(0, offset).split('\n');
  return { offset, line: before.length, column: (before.at(-1) ?? '').length + 1, message };
}
