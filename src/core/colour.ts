import { styleText } from 'node:util';

/**
 * Colour for people at a terminal: `FAIL` and `error:` in red, `warning:` in
 * yellow. Colour is used on a terminal only, as no-color.org and Node itself
 * read the environment: a non-empty NO_COLOR turns it off, FORCE_COLOR turns it
 * on (also in a pipe) unless it is `0` or `false`, TERM=dumb turns it off.
 */
export function useColour(env: Readonly<Record<string, string | undefined>>, isTTY: boolean | undefined): boolean {
  const force = env['FORCE_COLOR'];
  if (force !== undefined) return force !== '0' && force !== 'false';
  if (env['NO_COLOR'] !== undefined && env['NO_COLOR'] !== '') return false;
  return isTTY === true && env['TERM'] !== 'dumb';
}

const WORDS = /(^|\n)(FAIL|error:|warning:)(?=\s|$)/g;

/** `text` with `FAIL`, `error:` and `warning:` at the start of a line coloured, when `colour` says so. */
export function paint(text: string, colour: boolean): string {
  if (!colour) return text;
  return text.replace(
    WORDS,
    (_, start: string, word: string) =>
      start + styleText(word === 'warning:' ? 'yellow' : 'red', word, { validateStream: false }),
  );
}
