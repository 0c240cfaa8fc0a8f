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
function columns(rows: ReadonlyArray<readonly [string, string]>, width: number): string[] {
  const left = Math.max(...rows.map(([l]) => l.length)) + 4;
  return rows.flatMap(([l, r]) =>
    wrap(r, Math.max(width - left, 20)).map((line, i) => (i === 0 ? `  ${l}`.padEnd(left) : ' '.repeat(left)) + line),
  );
}

const BUILT_IN: ReadonlyArray<readonly [string, OptionDeclaration]> = [
  ['version', { type: 'boolean', describe: 'Show version number' }],
  ['help', { type: 'boolean', describe: 'Show help' }],
];

/** Where the built-in --version and --help go: after the options every command takes (the first `globalCount`). */
export function helpText(section: HelpSection, width: number, globalCount: number): string {
  const { declared } = section;
  const out: string[] = [section.usage, '', ...wrap(section.describe, width), ''];
  if (section.commands) out.push('Commands:', ...columns(section.commands, width), '');
  const positional = declared.positionalArgument;
  if (positional) out.push('Positionals:', ...columns([[positional.name, positional.declaration.describe]], width), '');
  const options = [...declared.options];
  const listed = [...options.slice(0, globalCount), ...BUILT_IN, ...options.slice(globalCount)];
  const aliased = listed.some(([, d]) => d.alias);
  const label = (name: string, d: OptionDeclaration) =>
    d.alias ? `-${d.alias}, --${name}` : `${aliased ? '    ' : ''}--${name}`;
  out.push(
    'Options:',
    ...columns(
      listed.map(([name, d]) => [label(name, d), d.describe] as const),
      width,
    ),
    '',
  );
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
