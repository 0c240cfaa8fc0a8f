/** Results of one doctest run, read from its XML reporter output. */

import { z } from 'zod';

import { editDistance } from '../core/closest.js';
import { comparePaths } from '../core/paths.js';

export type CaseStatus = 'passed' | 'failed' | 'skipped' | 'crashed';

export interface Failure {
  file: string;
  line: number;
  message: string;
}

export interface CaseResult {
  name: string;
  file: string;
  line: number;
  status: CaseStatus;
  assertions: { passed: number; failed: number };
  failures: Failure[];
}

export interface DoctestRun {
  cases: CaseResult[];
  /** False when the XML ended early (the binary died mid-run). */
  complete: boolean;
  /** The case that was running when the output ended, if any. */
  interrupted: string | null;
}

/** A run as the baseline saves it (saved-results.ts reads it back through this). */
export const DoctestRunSchema: z.ZodType<DoctestRun, z.ZodTypeDef, unknown> = z.object({
  cases: z.array(
    z.object({
      name: z.string(),
      file: z.string(),
      line: z.number(),
      status: z.enum(['passed', 'failed', 'skipped', 'crashed']),
      assertions: z.object({ passed: z.number(), failed: z.number() }),
      failures: z.array(z.object({ file: z.string(), line: z.number(), message: z.string() })),
    }),
  ),
  complete: z.boolean(),
  interrupted: z.string().nullable(),
});

interface Token {
  kind: 'open' | 'close' | 'self' | 'text';
  name: string;
  attrs: Record<string, string>;
  text: string;
}

function unescape(text: string): string {
  return text
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_m, n: string) => String.fromCodePoint(Number(n)))
    .replace(/&amp;/g, '&');
}

/** A tolerant tokenizer: doctest's XML is flat and escaped, and may be cut off by a crash. */
function* tokens(xml: string): Generator<Token> {
  const re =
    /<(\/?)([A-Za-z_][\w.-]*)((?:\s+[\w:.-]+="[^"]*")*)\s*(\/?)>|<\?[^>]*\?>|<!--[\s\S]*?-->|<!\[CDATA\[([\s\S]*?)\]\]>|([^<]+)/g;
  for (const m of xml.matchAll(re)) {
    if (m[6] !== undefined) {
      yield { kind: 'text', name: '', attrs: {}, text: unescape(m[6]) };
    } else if (m[5] !== undefined) {
      yield { kind: 'text', name: '', attrs: {}, text: m[5] };
    } else if (m[2] !== undefined) {
      const attrs: Record<string, string> = {};
      for (const a of (m[3] ?? '').matchAll(/([\w:.-]+)="([^"]*)"/g)) attrs[a[1] as string] = unescape(a[2] as string);
      yield { kind: m[1] ? 'close' : m[4] ? 'self' : 'open', name: m[2], attrs, text: '' };
    }
  }
}

/** Parses `--reporters=xml` output, including output cut off by a crash. */
export function parseDoctestXml(xml: string): DoctestRun {
  const cases: CaseResult[] = [];
  let current: CaseResult | null = null;
  let open: OpenElements = { expression: null, exception: null, message: null };
  let complete = false;

  for (const t of tokens(xml)) {
    if (t.kind === 'open' && t.name === 'TestCase') {
      current = {
        name: t.attrs['name'] ?? '',
        file: t.attrs['filename'] ?? '',
        line: Number(t.attrs['line'] ?? 0),
        status: t.attrs['skipped'] === 'true' ? 'skipped' : 'passed',
        assertions: { passed: 0, failed: 0 },
        failures: [],
      };
    } else if (t.kind === 'close' && t.name === 'TestCase' && current) {
      cases.push(current);
      current = null;
    } else if (!current) {
      if (t.name === 'OverallResultsTestCases') complete = true;
    } else {
      open = readCaseToken(current, open, t);
    }
  }
  if (current) {
    // The binary died inside this case.
    current.status = 'crashed';
    cases.push(current);
  }
  return { cases, complete, interrupted: current?.name ?? null };
}

/** The elements of a test case being read: a failed expression, an exception, a message. */
interface OpenElements {
  expression: {
    file: string;
    line: number;
    type: string;
    original: string;
    expanded: string;
    inOriginal: boolean;
    inExpanded: boolean;
  } | null;
  exception: { crash: boolean; text: string } | null;
  message: { file: string; line: number; type: string; text: string } | null;
}

/**
 * Reads one token inside the test case `current`: adds its failures, its
 * assertion counts and its status to it. Returns the elements open after it.
 */
function readCaseToken(current: CaseResult, open: OpenElements, t: Token): OpenElements {
  const { expression, exception, message } = open;
  if (t.kind === 'open' && t.name === 'Expression') {
    return {
      ...open,
      expression: {
        file: t.attrs['filename'] ?? current.file,
        line: Number(t.attrs['line'] ?? 0),
        type: t.attrs['type'] ?? 'CHECK',
        original: '',
        expanded: '',
        inOriginal: false,
        inExpanded: false,
      },
    };
  } else if (expression && t.kind === 'open' && (t.name === 'Original' || t.name === 'Expanded')) {
    expression.inOriginal = t.name === 'Original';
    expression.inExpanded = t.name === 'Expanded';
  } else if (expression && t.kind === 'text') {
    if (expression.inOriginal) expression.original += t.text;
    if (expression.inExpanded) expression.expanded += t.text;
  } else if (expression && t.kind === 'close' && (t.name === 'Original' || t.name === 'Expanded')) {
    expression.inOriginal = false;
    expression.inExpanded = false;
  } else if (expression && t.kind === 'close' && t.name === 'Expression') {
    const expanded = expression.expanded.trim();
    const original = expression.original.trim();
    current.failures.push({
      file: expression.file,
      line: expression.line,
      message: `${expression.type}( ${original} )${expanded && expanded !== original ? ` with values ${expanded}` : ''}`,
    });
    return { ...open, expression: null };
  } else if (t.kind === 'open' && t.name === 'Exception') {
    return { ...open, exception: { crash: t.attrs['crash'] === 'true', text: '' } };
  } else if (exception && t.kind === 'text') {
    exception.text += t.text;
  } else if (exception && t.kind === 'close' && t.name === 'Exception') {
    const text = exception.text.trim();
    if (!text.startsWith('exception thrown in subcase')) {
      current.failures.push({
        file: current.file,
        line: current.line,
        message: `${exception.crash ? 'crash' : 'exception'}: ${text}`,
      });
    }
    if (exception.crash) current.status = 'crashed';
    return { ...open, exception: null };
  } else if (t.kind === 'open' && t.name === 'Message') {
    return {
      ...open,
      message: {
        file: t.attrs['filename'] ?? current.file,
        line: Number(t.attrs['line'] ?? 0),
        type: t.attrs['type'] ?? '',
        text: '',
      },
    };
  } else if (message && t.kind === 'text') {
    message.text += t.text;
  } else if (message && t.kind === 'close' && t.name === 'Message') {
    if (/ERROR/.test(message.type))
      current.failures.push({
        file: message.file,
        line: message.line,
        message: `${message.type}: ${message.text.trim()}`,
      });
    return { ...open, message: null };
  } else if (t.name === 'OverallResultsAsserts' && (t.kind === 'self' || t.kind === 'open')) {
    current.assertions = { passed: Number(t.attrs['successes'] ?? 0), failed: Number(t.attrs['failures'] ?? 0) };
    if (current.status !== 'crashed' && current.status !== 'skipped' && t.attrs['test_case_success'] === 'false')
      current.status = 'failed';
  }
  return open;
}

/**
 * A test case name as a doctest filter that matches it. doctest reads only `\,`
 * and `\\` as escapes; `*` and `?` stay wildcards (they match themselves too),
 * so a name holding them may also match a few other names.
 */
export function doctestFilterEscape(name: string): string {
  return name.replace(/([\\,])/g, '\\$1');
}

/** Test case names from `--list-test-cases --reporters=xml`. */
export function parseDoctestList(xml: string): string[] {
  const names: string[] = [];
  for (const t of tokens(xml))
    if (t.name === 'TestCase' && t.kind !== 'close' && t.attrs['name'] !== undefined) names.push(t.attrs['name']);
  return names;
}

/** Lower-case words of a name or filter; camel case splits (`MetalStorageView` -> metal, storage, view). */
function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 2);
}

/**
 * Case names close to a `--tests` filter that matched none: names sharing
 * its words, exactly (2 points), as part of a word (1.5) or with a typo (1).
 * Words every name has (such as "test") say nothing and are left out. Ties go
 * in code-unit order, the same in every locale.
 */
export function closeCaseNames(filter: string, names: readonly string[], max = 5): string[] {
  const split = names.map((name) => ({ name, words: words(name) }));
  const wanted = [...new Set(words(filter.replace(/[*?]/g, ' ')))].filter(
    (w) => !split.every((n) => n.words.includes(w)),
  );
  if (wanted.length === 0) return [];
  const scored = split.map(({ name, words: have }) => {
    let score = 0;
    for (const w of wanted) {
      if (have.includes(w)) score += 2;
      else if (have.some((h) => h.includes(w) || (h.length >= 3 && w.includes(h)))) score += 1.5;
      else if (have.some((h) => editDistance(h, w) <= Math.max(1, Math.floor(w.length / 4)))) score += 1;
    }
    return { name, score };
  });
  return scored
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || comparePaths(a.name, b.name))
    .slice(0, max)
    .map((s) => s.name);
}
