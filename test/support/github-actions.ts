/**
 * A small model of how GitHub Actions reads a workflow, for the workflow tests: the expression language (the
 * operators, literals, context paths and functions the workflows use), the implicit `success()` of an `if:`, a
 * job's and a step's status functions, matrix expansion with `include`/`exclude`, and the branch and path filters
 * of a push trigger. Anything outside that subset throws, so no assertion passes on an expression this did not
 * evaluate.
 */

export type Value = null | boolean | number | string | Value[] | { [key: string]: Value };
export type Context = Record<string, unknown>;

/** The status the status functions see: of the steps before (a step's `if:`) or of the needed jobs (a job's). */
export interface Status {
  /** The run was cancelled. */
  cancelled?: boolean;
  /** A step before this one failed, or (for a job) a needed job failed. */
  failed?: boolean;
  /** For a job: a needed job was skipped or cancelled (then `success()` is false, as on GitHub). */
  notAllSucceeded?: boolean;
}

type Token =
  | { kind: 'num'; value: number }
  | { kind: 'str'; value: string }
  | { kind: 'id'; value: string }
  | { kind: 'op'; value: string };

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const rest = text.slice(i);
    const space = /^\s+/.exec(rest);
    if (space) {
      i += space[0].length;
      continue;
    }
    const str = /^'((?:[^']|'')*)'/.exec(rest);
    if (str) {
      tokens.push({ kind: 'str', value: (str[1] as string).replace(/''/g, "'") });
      i += str[0].length;
      continue;
    }
    const num = /^-?(?:0x[0-9a-f]+|\d+(?:\.\d+)?(?:e[+-]?\d+)?)/i.exec(rest);
    if (num && !/^[A-Za-z_]/.test(rest)) {
      tokens.push({ kind: 'num', value: Number(num[0]) });
      i += num[0].length;
      continue;
    }
    const id = /^[A-Za-z_][\w-]*/.exec(rest);
    if (id) {
      tokens.push({ kind: 'id', value: id[0] });
      i += id[0].length;
      continue;
    }
    const op = /^(==|!=|<=|>=|&&|\|\||[!<>()[\].,])/.exec(rest);
    if (op) {
      tokens.push({ kind: 'op', value: op[0] });
      i += op[0].length;
      continue;
    }
    throw new Error(`cannot evaluate: ${text} (at ${rest})`);
  }
  return tokens;
}

/** GitHub's truthiness: false, 0, -0, NaN, '' and null are falsy. */
export function truthy(v: Value): boolean {
  return !(v === null || v === false || v === '' || v === 0 || (typeof v === 'number' && Number.isNaN(v)));
}

function toNumber(v: Value): number {
  if (v === null) return 0;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return v.trim() === '' ? 0 : Number(v);
  return NaN;
}

/** `==` as GitHub compares: strings case-insensitively, other mixed types as numbers, objects by identity. */
function equal(a: Value, b: Value): boolean {
  if (typeof a === 'string' && typeof b === 'string') return a.toLowerCase() === b.toLowerCase();
  if (typeof a === 'object' || typeof b === 'object') return a === b;
  if (typeof a === typeof b) return a === b;
  return toNumber(a) === toNumber(b);
}

export function asString(v: Value): string {
  if (v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

function toValue(v: unknown): Value {
  return v === undefined ? null : (v as Value);
}

class Parser {
  private at = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly context: Context,
    private readonly status: Status,
    private readonly source: string,
  ) {}

  parse(): Value {
    const value = this.or();
    if (this.at !== this.tokens.length) this.fail();
    return value;
  }

  private fail(): never {
    throw new Error(`cannot evaluate: ${this.source}`);
  }
  private peek(value: string): boolean {
    const t = this.tokens[this.at];
    return t?.kind === 'op' && t.value === value;
  }
  private take(value: string): void {
    if (!this.peek(value)) this.fail();
    this.at += 1;
  }

  private or(): Value {
    let left = this.and();
    while (this.peek('||')) {
      this.at += 1;
      const right = this.and();
      left = truthy(left) ? left : right;
    }
    return left;
  }
  private and(): Value {
    let left = this.compare();
    while (this.peek('&&')) {
      this.at += 1;
      const right = this.compare();
      left = truthy(left) ? right : left;
    }
    return left;
  }
  private compare(): Value {
    const left = this.unary();
    for (const op of ['==', '!=', '<=', '>=', '<', '>']) {
      if (!this.peek(op)) continue;
      this.at += 1;
      const right = this.unary();
      if (op === '==') return equal(left, right);
      if (op === '!=') return !equal(left, right);
      const [a, b] = [toNumber(left), toNumber(right)];
      return op === '<' ? a < b : op === '>' ? a > b : op === '<=' ? a <= b : a >= b;
    }
    return left;
  }
  private unary(): Value {
    if (this.peek('!')) {
      this.at += 1;
      return !truthy(this.unary());
    }
    return this.postfix(this.primary());
  }
  private primary(): Value {
    const t = this.tokens[this.at];
    if (t === undefined) this.fail();
    this.at += 1;
    if (t.kind === 'num' || t.kind === 'str') return t.value;
    if (t.kind === 'op') {
      if (t.value !== '(') this.fail();
      const inner = this.or();
      this.take(')');
      return inner;
    }
    if (t.value === 'true') return true;
    if (t.value === 'false') return false;
    if (t.value === 'null') return null;
    if (this.peek('(')) {
      this.at += 1;
      const args: Value[] = [];
      while (!this.peek(')')) {
        args.push(this.or());
        if (!this.peek(')')) this.take(',');
      }
      this.take(')');
      return this.call(t.value, args);
    }
    return toValue(this.context[t.value]);
  }
  private postfix(value: Value): Value {
    for (;;) {
      let key: string;
      if (this.peek('.')) {
        this.at += 1;
        const t = this.tokens[this.at];
        if (t?.kind !== 'id') this.fail();
        this.at += 1;
        key = t.value;
      } else if (this.peek('[')) {
        this.at += 1;
        key = asString(this.or());
        this.take(']');
      } else return value;
      if (value === null || typeof value !== 'object' || Array.isArray(value)) value = null;
      else {
        // Property names are case-insensitive.
        const found = Object.keys(value).find((k) => k.toLowerCase() === key.toLowerCase());
        value = found === undefined ? null : toValue(value[found]);
      }
    }
  }
  private call(name: string, args: Value[]): Value {
    const s = (i: number) => asString(args[i] ?? null).toLowerCase();
    switch (name.toLowerCase()) {
      case 'success':
        return !this.status.cancelled && !this.status.failed && !this.status.notAllSucceeded;
      case 'failure':
        return !this.status.cancelled && this.status.failed === true;
      case 'cancelled':
        return this.status.cancelled === true;
      case 'always':
        return true;
      case 'startswith':
        return s(0).startsWith(s(1));
      case 'endswith':
        return s(0).endsWith(s(1));
      case 'contains': {
        const hay = args[0] ?? null;
        if (Array.isArray(hay)) return hay.some((v) => equal(v, args[1] ?? null));
        return s(0).includes(s(1));
      }
      case 'format':
        return asString(args[0] ?? null).replace(/\{(\d+)\}/g, (_, n: string) => asString(args[Number(n) + 1] ?? null));
      case 'case': {
        // case(pred1, value1, pred2, value2, ..., default)
        for (let i = 0; i + 1 < args.length; i += 2) if (truthy(args[i] ?? null)) return args[i + 1] ?? null;
        return args[args.length - 1] ?? null;
      }
      case 'hashfiles':
        return `<hashFiles ${args.map(asString).join(' ')}>`;
      default:
        this.fail();
    }
  }
}

const STATUS_FUNCTION = /\b(success|failure|cancelled|always)\s*\(/i;

/** The value of one expression, with or without `${{ }}` around it. */
export function evaluate(expression: string, context: Context, status: Status = {}): Value {
  const trimmed = expression.trim();
  const inner = /^\$\{\{([\s\S]*)\}\}$/.exec(trimmed)?.[1] ?? trimmed;
  return new Parser(tokenize(inner), context, status, expression).parse();
}

/** A string with `${{ }}` parts, as GitHub interpolates it; a non-string value is returned unchanged. */
export function interpolate(text: unknown, context: Context, status: Status = {}): Value {
  if (typeof text !== 'string') return toValue(text);
  const whole = /^\s*\$\{\{([\s\S]*?)\}\}\s*$/.exec(text);
  if (whole && !text.slice(text.indexOf('}}') + 2).includes('${{')) return evaluate(text, context, status);
  return text.replace(/\$\{\{([\s\S]*?)\}\}/g, (_, inner: string) => asString(evaluate(inner, context, status)));
}

/** Whether an `if:` lets its step or job run: without a status function it means `success() && (...)`. */
export function runs(condition: unknown, context: Context, status: Status = {}): boolean {
  if (condition === undefined || condition === null)
    return !status.cancelled && !status.failed && !status.notAllSucceeded;
  if (typeof condition === 'boolean') return condition && !status.cancelled && !status.failed;
  if (typeof condition !== 'string') throw new Error(`not a condition: ${JSON.stringify(condition)}`);
  const text = condition;
  const inner = /^\s*\$\{\{([\s\S]*)\}\}\s*$/.exec(text)?.[1] ?? text;
  const expression = STATUS_FUNCTION.test(inner) ? inner : `success() && (${inner})`;
  return truthy(evaluate(expression, context, status));
}

/** The legs of a `strategy.matrix`, as GitHub expands it (product, then exclude, then include). */
export function expandMatrix(matrix: Record<string, unknown> | undefined): Array<Record<string, Value>> {
  if (matrix === undefined) return [{}];
  const {
    include = [],
    exclude = [],
    ...axes
  } = matrix as {
    include?: Array<Record<string, Value>>;
    exclude?: Array<Record<string, Value>>;
  } & Record<string, Value[]>;
  let legs: Array<Record<string, Value>> = [{}];
  for (const [key, values] of Object.entries(axes))
    legs = legs.flatMap((leg) => values.map((v) => ({ ...leg, [key]: v })));
  if (Object.keys(axes).length === 0) legs = [];
  const matches = (leg: Record<string, Value>, part: Record<string, Value>) =>
    Object.entries(part).every(([k, v]) => equal(leg[k] ?? null, v));
  legs = legs.filter((leg) => !exclude.some((e) => matches(leg, e)));
  const originals = legs.map((leg) => ({ ...leg }));
  for (const entry of include) {
    let added = false;
    legs.forEach((leg, i) => {
      const original = originals[i] as Record<string, Value>;
      // Added only where it overwrites none of the leg's original values (added ones may be overwritten).
      if (Object.entries(entry).every(([k, v]) => !(k in original) || equal(original[k] ?? null, v))) {
        Object.assign(leg, entry);
        added = true;
      }
    });
    if (!added) {
      legs.push({ ...entry });
      originals.push({ ...entry });
    }
  }
  return legs;
}

/** A GitHub filter pattern as a regular expression: `**` any characters, `*` any but `/`, `?` one character. */
function pattern(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i += 1) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      re += '.*';
      i += 1;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '.';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

/** Whether any (non-`!`) pattern matches, with later `!` patterns excluding again, as GitHub reads a list. */
function filterMatches(patterns: string[], value: string): boolean {
  let matched = false;
  for (const p of patterns) {
    if (p.startsWith('!')) {
      if (pattern(p.slice(1)).test(value)) matched = false;
    } else if (pattern(p).test(value)) matched = true;
  }
  return matched;
}

/** Whether a push of `files` to `branch` starts the workflow, by its `on.push` branch and path filters. */
export function pushTriggers(on: Record<string, unknown>, branch: string, files: string[]): boolean {
  if (!('push' in on)) return false;
  const push = (on['push'] ?? {}) as {
    branches?: string[];
    'branches-ignore'?: string[];
    paths?: string[];
    'paths-ignore'?: string[];
  };
  if (push.branches && !filterMatches(push.branches, branch)) return false;
  if (push['branches-ignore'] && filterMatches(push['branches-ignore'], branch)) return false;
  const ignore = push['paths-ignore'];
  if (ignore && files.every((f) => filterMatches(ignore, f))) return false;
  if (push.paths && !files.some((f) => filterMatches(push.paths as string[], f))) return false;
  return true;
}
