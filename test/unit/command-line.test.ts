import { describe, expect, it } from 'vitest';

import { CommandLineError, Declarations, parseArguments } from '../../src/core/command-line.js';
import { wrap } from '../../src/core/help-text.js';

function declarations(): Declarations {
  const declared = new Declarations();
  declared
    .option('dry-run', { type: 'boolean', default: false, describe: 'd' })
    .option('draft', { type: 'boolean', default: true, describe: 'd' })
    .option('workdir', { type: 'string', describe: 'w' })
    .option('jobs', { type: 'string', alias: 'j', default: '4', describe: 'j' })
    .option('against', { type: 'string', array: true, describe: 'a' })
    .option('sanitize', { type: 'string', choices: ['asan', 'ubsan'], describe: 's' });
  return declared;
}

const parse = (...argv: string[]) => parseArguments(declarations(), argv);
const failure = (...argv: string[]) => {
  try {
    parse(...argv);
  } catch (error) {
    expect(error).toBeInstanceOf(CommandLineError);
    return (error as Error).message;
  }
  throw new Error(`${argv.join(' ')} parsed`);
};

describe('the command line', () => {
  it('gives defaults, and each option under its own name and camel-cased', () => {
    expect(parse()).toEqual({ '--': [], 'dry-run': false, dryRun: false, draft: true, jobs: '4' });
    expect(parse('--dry-run', '--workdir', 'w')).toMatchObject({ 'dry-run': true, dryRun: true, workdir: 'w' });
  });

  it('reads yes/no options as --x, --no-x, --x=true|false and --x followed by true or false', () => {
    expect(parse('--no-draft').draft).toBe(false);
    expect(parse('--draft=false').draft).toBe(false);
    expect(parse('--dry-run=true').dryRun).toBe(true);
    expect(parse('--dry-run', 'false').dryRun).toBe(false);
    expect(failure('--dry-run=yes')).toBe(
      '--dry-run=yes: --dry-run is a yes/no option: give --dry-run, --no-dry-run, --dry-run=true or --dry-run=false.',
    );
    expect(failure('--no-dry-run=true')).toContain('--dry-run is a yes/no option');
  });

  it('reads values as --x v, --x=v, -j 2, -j2 and -j=2; a negative number is a value; no value is empty', () => {
    for (const argv of [['--jobs', '2'], ['--jobs=2'], ['-j', '2'], ['-j2'], ['-j=2']])
      expect(parse(...argv).jobs).toBe('2');
    expect(parse('--jobs', '-3').jobs).toBe('-3');
    expect(parse('--workdir', '--dry-run')).toMatchObject({ workdir: '', dryRun: true });
    expect(parse('--workdir=').workdir).toBe('');
  });

  it('takes the words after a list option, and repeats of it', () => {
    expect(parse('--against', 'main', 'v1', '--dry-run', '--against', 'v2').against).toEqual(['main', 'v1', 'v2']);
  });

  it('passes what comes after -- through untouched', () => {
    expect(parse('--dry-run', '--', '-DX=ON', '--workdir')).toMatchObject({
      '--': ['-DX=ON', '--workdir'],
      dryRun: true,
    });
  });

  it('refuses unknown options and words, a repeated one-value option and a value not among the choices', () => {
    expect(failure('--bogus', 'value')).toBe('Unknown argument: bogus');
    expect(failure('-x', 'extra')).toBe('Unknown arguments: x, extra');
    expect(failure('--no-workdir')).toBe('Unknown argument: no-workdir');
    expect(failure('--workdir', 'a', '--workdir', 'b')).toBe('--workdir was given 2 times (a, b); give it once.');
    expect(failure('--sanitize', 'msan')).toBe('--sanitize msan: not one of asan, ubsan (did you mean asan?).');
    expect(failure('--sanitize', 'thread')).toBe('--sanitize thread: not one of asan, ubsan.');
  });

  it('runs the checks on the parsed arguments and refuses a missing required option', () => {
    const declared = new Declarations()
      .option('to', { type: 'string', demandOption: true, describe: 't' })
      .check((args: { to: string }) => {
        if (args.to === 'x') throw new Error('not x');
      });
    expect(() => parseArguments(declared, [])).toThrow('Missing required argument: to');
    expect(() => parseArguments(declared, ['--to', 'x'])).toThrow('not x');
    expect(parseArguments(declared, ['--to', 'y']).to).toBe('y');
  });

  it('reads an option that names a variable from the environment when the command line does not give it', () => {
    const declared = new Declarations()
      .option('offline', { type: 'boolean', default: false, env: 'X_OFFLINE', describe: 'o' })
      .option('metal-cpp', { type: 'string', env: 'X_METAL_CPP', describe: 'm' });
    const parseWith = (env: Record<string, string | undefined>, ...argv: string[]) =>
      parseArguments(declared, argv, env);
    expect(parseWith({ X_OFFLINE: '1', X_METAL_CPP: '/m' })).toMatchObject({ offline: true, metalCpp: '/m' });
    expect(parseWith({ X_OFFLINE: 'yes' }).offline).toBe(true);
    // Set to 0, false or nothing is off, as an unset variable is.
    for (const off of ['0', 'false', 'FALSE', '', undefined]) expect(parseWith({ X_OFFLINE: off }).offline).toBe(false);
    // The command line wins both ways.
    expect(parseWith({ X_OFFLINE: '1' }, '--no-offline').offline).toBe(false);
    expect(parseWith({ X_OFFLINE: '0' }, '--offline').offline).toBe(true);
    expect(parseWith({ X_METAL_CPP: '/m' }, '--metal-cpp', '/n').metalCpp).toBe('/n');
    expect(parseWith({ X_METAL_CPP: '' }).metalCpp).toBeUndefined();
  });

  it('collects the words after the command for a command that takes them', () => {
    const declared = new Declarations().positional('commands', { type: 'string', array: true, describe: 'c' });
    expect(parseArguments(declared, ['test', 'apply']).commands).toEqual(['test', 'apply']);
  });
});

describe('help text wrapping', () => {
  it('breaks between words, keeps line breaks, and leaves a word longer than the line whole', () => {
    expect(wrap('one two three four', 9)).toEqual(['one two', 'three', 'four']);
    expect(wrap('a\n\nb', 10)).toEqual(['a', '', 'b']);
    expect(wrap('short -DCMAKE_COMPILE_WARNING_AS_ERROR=ON end', 10, '  ')).toEqual([
      'short',
      '  -DCMAKE_COMPILE_WARNING_AS_ERROR=ON',
      '  end',
    ]);
  });
});
