import { TOOL, type Declarations, type OptionDeclaration } from './command-line.js';

/**
 * --help text: usage, description, a two-column list of the commands or
 * options, examples (each description a `#` comment on its own line above
 * the command, so the command can be copied whole), then the epilog. Text is
 * wrapped at `width` between words only; a word longer than a line keeps its
 * own line.
 */

export interface HelpSection {
  /** First line, e.g. `mlx-storage-pr apply`. */
  usage: string;
  describe: string;
  /** `[name, description]` rows under "Commands:" (the top level only). */
  commands?: ReadonlyArray<readonly [string, string]>;
  declared: Declarations;
}

/** Wraps `text` to `width`, keeping its own line breaks; lines after the first start with `indent`. */
export function wrap(text: string, width: number, indent = ''): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split('\n')) {
    let line = '';
    for (const word of paragraph.split(/ +/).filter(Boolean)) {
      const prefix = lines.length > 0 && line === '' ? indent : '';
      if (line === '') line = prefix + word;
      else if (line.length + 1 + word.length <= width) line += ` ${word}`;
      else {
        lines.push(line);
        line = indent + word;
      }
    }
    lines.push(line);
  }
  return lines;
}

/** Rows of `left` and wrapped `right` text, the right column starting at the same place in every row. */
function columns(rows: ReadonlyArray<readonly [string, string]>, width: number, left = leftWidth(rows)): string[] {
  return rows.flatMap(([l, r]) =>
    wrap(r, Math.max(width - left, 20)).map((line, i) => (i === 0 ? `  ${l}`.padEnd(left) : ' '.repeat(left)) + line),
  );
}

const BUILT_IN: ReadonlyArray<readonly [string, OptionDeclaration]> = [
  ['help', { type: 'boolean', alias: 'h', describe: 'Show help' }],
  ['version', { type: 'boolean', alias: 'v', describe: 'Show version number' }],
];

function leftWidth(rows: ReadonlyArray<readonly [string, string]>): number {
  return Math.max(...rows.map(([l]) => l.length)) + 4;
}

/** The list of commands, one row each, as --help and a bare run show it. */
export function commandList(rows: ReadonlyArray<readonly [string, string]>, width: number): string[] {
  return columns(rows, width);
}

/** `--name <value>`: the option's names and, unless it is yes/no, what its value is. */
function optionLabel(name: string, d: OptionDeclaration): string {
  const names = d.alias ? `-${d.alias}, --${name}` : `--${name}`;
  if (d.type === 'boolean') return names;
  const value = d.placeholder ?? (d.choices && shortChoices(d.choices) ? d.choices.join('|') : 'value');
  return `${names} <${value}>${d.array ? '...' : ''}`;
}

/** Choices short enough to be the placeholder (`<asan|ubsan>`); longer lists go into the description. */
function shortChoices(choices: readonly string[]): boolean {
  return choices.join('|').length <= 20;
}

/** The description with the choices that are not in the placeholder, the default (`[default: 4]`) and the variable. */
function optionText(d: OptionDeclaration): string {
  const choices = d.choices && !d.placeholder && !shortChoices(d.choices) ? ` [choices: ${d.choices.join(', ')}]` : '';
  const fallback =
    d.type === 'string' && typeof d.default === 'string' && d.default !== '' ? ` [default: ${d.default}]` : '';
  const env = d.env === undefined ? '' : ` [env: ${d.env}]`;
  return `${d.describe}${choices}${fallback}${env}`;
}

/**
 * The command's own options first, then the options every command takes (the
 * first `globalCount` declared) with the built-in --help and --version.
 */
export function helpText(section: HelpSection, width: number, globalCount: number): string {
  const { declared } = section;
  const out: string[] = [section.usage, '', ...wrap(section.describe, width), ''];
  if (section.commands) out.push('Commands:', ...columns(section.commands, width), '');
  const positional = declared.positionalArgument;
  if (positional) out.push('Positionals:', ...columns([[positional.name, positional.declaration.describe]], width), '');
  const options = [...declared.options];
  const own = options.slice(globalCount);
  const global = [...options.slice(0, globalCount), ...BUILT_IN];
  const aliased = [...own, ...global].some(([, d]) => d.alias);
  const rows = (listed: ReadonlyArray<readonly [string, OptionDeclaration]>) =>
    listed.map(([name, d]) => [`${aliased && !d.alias ? '    ' : ''}${optionLabel(name, d)}`, optionText(d)] as const);
  // One left column for both lists, so that they line up.
  const left = leftWidth([...rows(own), ...rows(global)]);
  if (own.length > 0) out.push('Options:', ...columns(rows(own), width, left), '', 'Global options:');
  else out.push('Options:');
  out.push(...columns(rows(global), width, left), '');
  if (declared.examples.length > 0) {
    out.push('Examples:');
    for (const { command, description } of declared.examples) {
      out.push(...wrap(`# ${description}`, width - 2, '  ').map((line) => `  ${line}`));
      out.push(...wrap(command.replaceAll('$0', TOOL), width - 2, '  ').map((line) => `  ${line}`));
    }
    out.push('');
  }
  for (const epilog of declared.epilogs) out.push(...wrap(epilog, width), '');
  while (out.at(-1) === '') out.pop();
  return out.join('\n');
}
