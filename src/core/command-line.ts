import { closestName, editDistance } from './closest.js';
import { isUserError } from './errors.js';

/**
 * The command line: the options a command declares (`Argv`, built the way
 * the commands read best: `.option(...).example(...)`), and the parser that
 * reads argv against them. Names are kebab-case on the command line; the
 * parsed arguments carry each under that name and camel-cased (`dry-run`,
 * `dryRun`). Help text is in help-text.ts, loaded only for --help.
 *
 * What the parser takes: `--name value`, `--name=value`, `-j 2`, `-j2`;
 * yes/no options as `--name`, `--no-name`, `--name=true|false` (or a
 * separate `true`/`false` after them); an option that takes several values
 * also takes the words after it (`--against main v0.32.0`) and may repeat.
 * Everything after `--` is passed through as it is (`'--'`).
 */

/** The tool's name, as --help and the examples (`$0`) show it. */
export const TOOL = 'mlx-storage-pr';

export interface OptionDeclaration {
  type: 'boolean' | 'string';
  describe: string;
  default?: boolean | string;
  /** Takes several values: repeated, or the words after it. */
  array?: boolean;
  choices?: readonly string[];
  /** A one-letter name (`-j`). */
  alias?: string;
  /** What --help shows for its value (`<dir>`); default: the choices, or `value`. */
  placeholder?: string;
  demandOption?: boolean;
  /**
   * An environment variable read when the command line does not give the
   * option (set once for every command); empty counts as unset, and for a
   * yes/no option `0` and `false` are no.
   */
  env?: string;
}

type CamelCase<S extends string> = S extends `${infer Head}-${infer Tail}`
  ? `${Head}${Capitalize<CamelCase<Tail>>}`
  : S;
type ChoiceOf<D> = D extends { choices: readonly (infer C)[] } ? C : string;
type ValueOf<D extends OptionDeclaration> = D extends { array: true }
  ? ChoiceOf<D>[]
  : D extends { type: 'boolean' }
    ? boolean
    : ChoiceOf<D>;
type AlwaysGiven<D> = D extends { default: boolean | string } ? true : D extends { demandOption: true } ? true : false;
type WithOption<K extends string, D extends OptionDeclaration> =
  AlwaysGiven<D> extends true
    ? { [P in K | CamelCase<K>]: ValueOf<D> }
    : { [P in K | CamelCase<K>]?: ValueOf<D> | undefined };

/** The options of a command as it declares them; `T` is what the parsed arguments hold. */
export interface Argv<T = object> {
  option<K extends string, const D extends OptionDeclaration>(key: K, declaration: D): Argv<T & WithOption<K, D>>;
  /** The words after the command (one declaration, which takes them all). */
  positional<K extends string, const D extends OptionDeclaration>(key: K, declaration: D): Argv<T & WithOption<K, D>>;
  /** One --help example: the command (`$0` is the tool's name) and what it does. */
  example(command: string, description: string): Argv<T>;
  epilog(text: string): Argv<T>;
  /** A check of the parsed arguments; what it throws is a usage error with its message. */
  check(test: (args: T) => unknown): Argv<T>;
}

/** A usage error found while reading the command line. */
export class CommandLineError extends Error {
  override name = 'CommandLineError';
}

/** What a command declares, as `Argv` collects it. */
export class Declarations implements Argv {
  readonly options = new Map<string, OptionDeclaration>();
  positionalArgument: { name: string; declaration: OptionDeclaration } | null = null;
  readonly examples: Array<{ command: string; description: string }> = [];
  readonly epilogs: string[] = [];
  readonly checks: Array<(args: never) => unknown> = [];

  option(key: string, declaration: OptionDeclaration): this {
    this.options.set(key, declaration);
    return this;
  }
  positional(key: string, declaration: OptionDeclaration): this {
    this.positionalArgument = { name: key, declaration };
    return this;
  }
  example(command: string, description: string): this {
    this.examples.push({ command, description });
    return this;
  }
  epilog(text: string): this {
    this.epilogs.push(text);
    return this;
  }
  check(test: (args: never) => unknown): this {
    this.checks.push(test);
    return this;
  }
}

export function camelCase(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_, letter: string) => letter.toUpperCase());
}

/** A word that is a value, not an option: anything not starting with `-`, `-` itself, a negative number. */
function isValue(word: string | undefined): boolean {
  return word !== undefined && (!word.startsWith('-') || word === '-' || /^-\d/.test(word));
}

/**
 * Reads `argv` (the words after the command) against `declared`. Returns the
 * arguments by kebab-case and camel-case name, `'--'` with what came after
 * `--`; throws a CommandLineError naming the first problem.
 */
export function parseArguments(
  declared: Declarations,
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
): Record<string, unknown> {
  const dashdash = argv.indexOf('--');
  const { given, unknown, near, positionals } = readWords(declared, dashdash < 0 ? argv : argv.slice(0, dashdash));
  const positional = declared.positionalArgument;
  if (positional === null) unknown.push(...positionals);
  if (unknown.length > 0)
    throw new CommandLineError(
      `Unknown argument${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}` +
        (near.size > 0 ? `. Did you mean ${[...near].join(' or ')}?` : ''),
    );

  const args: Record<string, unknown> = { '--': dashdash < 0 ? [] : argv.slice(dashdash + 1) };
  if (positional !== null) given.set(positional.name, positionals);
  for (const [name, declaration] of [
    ...declared.options,
    ...(positional ? [[positional.name, positional.declaration] as const] : []),
  ]) {
    const values = given.get(name) ?? fromEnvironment(declaration, env);
    if (values === undefined) {
      if (declaration.demandOption) throw new CommandLineError(`Missing required argument: ${name}`);
      if (declaration.default !== undefined) setArgument(args, name, declaration.default);
      continue;
    }
    verifyValues(name, declaration, values);
    setArgument(args, name, declaration.array ? values : values[0]);
  }
  for (const check of declared.checks) {
    try {
      check(args as never);
    } catch (error) {
      // An expected error keeps its code and hint; anything else a check throws is a usage error.
      if (isUserError(error)) throw error;
      throw new CommandLineError((error as Error).message);
    }
  }
  return args;
}

/** The value of the option's environment variable, as the command line would give it; none when unset or empty. */
function fromEnvironment(
  declaration: OptionDeclaration,
  env: Readonly<Record<string, string | undefined>>,
): Array<string | boolean> | undefined {
  const value = environmentValue(declaration.type, declaration.env === undefined ? undefined : env[declaration.env]);
  return value === undefined ? undefined : [value];
}

/** A variable's value as an option of `type` takes it: none when unset or empty; for yes/no, `0` and `false` are no. */
export function environmentValue(
  type: OptionDeclaration['type'],
  value: string | undefined,
): string | boolean | undefined {
  if (value === undefined || value === '') return undefined;
  return type === 'boolean' ? !['0', 'false'].includes(value.toLowerCase()) : value;
}

/** An argument under its kebab-case and its camel-case name. */
function setArgument(args: Record<string, unknown>, name: string, value: unknown): void {
  args[name] = value;
  args[camelCase(name)] = value;
}

/** Refuses a value given more than once for an option that takes one, and a value not among the choices. */
function verifyValues(name: string, declaration: OptionDeclaration, values: Array<string | boolean>): void {
  if (!declaration.array && values.length > 1)
    throw new CommandLineError(`--${name} was given ${values.length} times (${values.join(', ')}); give it once.`);
  for (const value of values) {
    if (declaration.choices && !declaration.choices.includes(String(value))) {
      const near = closestName(String(value), declaration.choices);
      const guess = near !== null && editDistance(String(value), near) <= 2 ? ` (did you mean ${near}?)` : '';
      throw new CommandLineError(`--${name} ${String(value)}: not one of ${declaration.choices.join(', ')}${guess}.`);
    }
  }
}

/**
 * The words before `--`: the values given per declared option (in order),
 * the unknown options, and the words that are no option's value.
 */
function readWords(
  declared: Declarations,
  words: readonly string[],
): {
  given: Map<string, Array<string | boolean>>;
  unknown: string[];
  near: Set<string>;
  positionals: string[];
} {
  const given = new Map<string, Array<string | boolean>>();
  const unknown: string[] = [];
  /** Near declared names of unknown long options (`--dryrun`: `--dry-run`), as a suggestion. */
  const near = new Set<string>();
  const positionals: string[] = [];
  const give = (name: string, value: string | boolean) => given.set(name, [...(given.get(name) ?? []), value]);
  const byAlias = new Map([...declared.options].flatMap(([name, d]) => (d.alias ? [[d.alias, name] as const] : [])));

  for (let i = 0; i < words.length; i++) {
    const word = words[i] as string;
    if (isValue(word)) {
      positionals.push(word);
      continue;
    }
    const long = word.startsWith('--');
    const body = long ? word.slice(2) : word.slice(1);
    const equals = body.indexOf('=');
    let name = equals < 0 ? body : body.slice(0, equals);
    let inline: string | undefined = equals < 0 ? undefined : body.slice(equals + 1);
    if (!long) {
      // `-j2` and `-j=2` as well as `-j 2`.
      const letter = name.slice(0, 1);
      if (inline === undefined && name.length > 1) inline = name.slice(1);
      name = byAlias.get(letter) ?? letter;
      if (!byAlias.has(letter)) {
        unknown.push(body);
        continue;
      }
    }
    let declaration = declared.options.get(name);
    let negated = false;
    if (declaration === undefined && long && name.startsWith('no-')) {
      const positive = declared.options.get(name.slice(3));
      if (positive?.type === 'boolean') {
        declaration = positive;
        name = name.slice(3);
        negated = true;
      }
    }
    if (declaration === undefined) {
      unknown.push(name);
      const closest = long ? closestName(name, declared.options.keys()) : null;
      if (closest !== null && editDistance(name.toLowerCase(), closest) <= 2) near.add(`--${closest}`);
      // Its value, if it has one, is not a word of its own.
      if (long && inline === undefined && isValue(words[i + 1])) i++;
      continue;
    }
    if (declaration.type === 'boolean') {
      if (inline !== undefined && (negated || (inline !== 'true' && inline !== 'false')))
        throw new CommandLineError(
          `${word}: --${name} is a yes/no option: give --${name}, --no-${name}, --${name}=true or --${name}=false.`,
        );
      let value = inline === undefined ? true : inline === 'true';
      const next = words[i + 1];
      if (inline === undefined && (next === 'true' || next === 'false')) {
        value = next === 'true';
        i++;
      }
      give(name, negated ? !value : value);
      continue;
    }
    if (inline !== undefined) give(name, inline);
    else if (declaration.array) {
      if (!isValue(words[i + 1])) given.set(name, given.get(name) ?? []);
      while (isValue(words[i + 1])) give(name, words[++i] as string);
    } else if (isValue(words[i + 1])) give(name, words[++i] as string);
    else give(name, '');
  }
  return { given, unknown, near, positionals };
}
