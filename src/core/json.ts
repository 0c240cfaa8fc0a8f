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
  const scanner = new JsonScanner(text);
  let offset = text.length;
  let message = 'no syntax error found';
  try {
    scanner.document();
  } catch (error) {
    if (!(error instanceof Stop)) throw error;
    offset = error.offset;
    message = error.message;
  }
  const before = text.slice(0, offset).split('\n');
  return { offset, line: before.length, column: (before.at(-1) ?? '').length + 1, message };
}

/** Reads JSON text from the start and throws `Stop` at the first thing RFC 8259 does not allow. */
class JsonScanner {
  private i = 0;

  constructor(private readonly text: string) {}

  document(): void {
    if (this.text.charCodeAt(0) === 0xfeff) this.i = 1;
    this.value();
    this.ws();
    if (this.i < this.text.length) this.fail(`unexpected ${this.describe(this.i)} after the end of the JSON value`);
  }

  private describe(at: number): string {
    return at >= this.text.length ? 'the end of the file' : JSON.stringify(this.text[at]);
  }

  private fail(message: string, at = this.i): never {
    throw new Stop(at, message);
  }

  private ws(): void {
    while (this.i < this.text.length && ' \t\n\r'.includes(this.text[this.i] as string)) this.i++;
  }

  private literal(word: string): void {
    const start = this.i;
    const found = /^[A-Za-z0-9_]*/.exec(this.text.slice(this.i))?.[0] ?? '';
    if (found !== word)
      this.fail(
        `unexpected ${JSON.stringify(found)} (expected a value such as ${word}, a number or a "string")`,
        start,
      );
    this.i += word.length;
  }

  private string(): void {
    const text = this.text;
    this.i++; // opening quote
    for (;;) {
      if (this.i >= text.length) this.fail('unexpected end of the file inside a string (missing closing ")');
      const ch = text[this.i] as string;
      if (ch === '"') {
        this.i++;
        return;
      }
      if (ch.charCodeAt(0) < 0x20) this.fail(`line break or control character inside a string (missing closing "?)`);
      if (ch === '\\') {
        const next = text[this.i + 1];
        if (next === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(this.i + 2, this.i + 6))) this.fail('invalid \\u escape in a string');
          this.i += 6;
        } else if (next !== undefined && '"\\/bfnrt'.includes(next)) this.i += 2;
        else this.fail(`invalid escape \\${next ?? ''} in a string`);
        continue;
      }
      this.i++;
    }
  }

  private number(): void {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.i));
    if (!match || match[0] === '-') this.fail(`unexpected ${this.describe(this.i)} (expected a number)`);
    this.i += match[0].length;
  }

  private value(): void {
    this.ws();
    const ch = this.text[this.i];
    if (ch === undefined) return this.fail('unexpected end of the file (expected a value)');
    if (ch === '{') return this.object();
    if (ch === '[') return this.array();
    if (ch === '"') return this.string();
    if (ch === '-' || (ch >= '0' && ch <= '9')) return this.number();
    if (ch === 't') return this.literal('true');
    if (ch === 'f') return this.literal('false');
    if (ch === 'n') return this.literal('null');
    if (ch === "'") return this.fail('strings and property names need double quotes');
    return this.fail(`unexpected ${this.describe(this.i)} (expected a value)`);
  }

  private object(): void {
    const text = this.text;
    this.i++;
    this.ws();
    if (text[this.i] === '}') {
      this.i++;
      return;
    }
    for (;;) {
      this.ws();
      if (text[this.i] === "'") this.fail('strings and property names need double quotes');
      if (text[this.i] !== '"')
        this.fail(`unexpected ${this.describe(this.i)} (expected a property name in double quotes)`);
      this.string();
      this.ws();
      if (text[this.i] !== ':') this.fail(`unexpected ${this.describe(this.i)} (expected ':' after the property name)`);
      this.i++;
      this.value();
      this.ws();
      if (text[this.i] === '}') {
        this.i++;
        return;
      }
      if (text[this.i] !== ',')
        this.fail(`unexpected ${this.describe(this.i)} (expected ',' or '}' after a property value)`);
      this.i++;
      this.ws();
      if (text[this.i] === '}') this.fail("trailing comma before '}': JSON allows none");
    }
  }

  private array(): void {
    const text = this.text;
    this.i++;
    this.ws();
    if (text[this.i] === ']') {
      this.i++;
      return;
    }
    for (;;) {
      this.value();
      this.ws();
      if (text[this.i] === ']') {
        this.i++;
        return;
      }
      if (text[this.i] !== ',')
        this.fail(`unexpected ${this.describe(this.i)} (expected ',' or ']' after an array element)`);
      this.i++;
      this.ws();
      if (text[this.i] === ']') this.fail("trailing comma before ']': JSON allows none");
    }
  }
}
