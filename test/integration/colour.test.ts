/* eslint-disable no-control-regex -- the assertions read terminal escape codes */
import { PassThrough } from 'node:stream';

import { describe, expect, it } from 'vitest';

import { main } from '../../src/cli.js';
import { paint, useColour } from '../../src/core/colour.js';
import { createLogger } from '../../src/adapters/log.js';
import { tempDir } from '../support/repos.js';

const ESC = '\u001b[';

/** Runs the CLI in this process with stderr (and stdout) a terminal or not. */
async function run(argv: string[], options: { tty: boolean; env?: Record<string, string> }) {
  const stdout = Object.assign(new PassThrough(), { isTTY: options.tty });
  const stderr = Object.assign(new PassThrough(), { isTTY: options.tty });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  stdout.on('data', (c: Buffer) => out.push(c));
  stderr.on('data', (c: Buffer) => err.push(c));
  const code = await main({ argv, cwd: tempDir(), env: { PATH: process.env['PATH'], ...options.env }, stdout, stderr });
  return { code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() };
}

describe('colour on a terminal, honouring NO_COLOR and FORCE_COLOR', () => {
  it('error: is coloured on a terminal and plain in a pipe', async () => {
    const tty = await run(['apply', '--bogus'], { tty: true });
    expect(tty.code).toBe(2);
    expect(tty.stderr).toContain(`${ESC}`);
    expect(tty.stderr.replace(/\u001b\[\d+m/g, '')).toMatch(/^error: Unknown argument: bogus/);
    const pipe = await run(['apply', '--bogus'], { tty: false });
    expect(pipe.stderr).not.toContain(ESC);
  });

  it('NO_COLOR turns it off on a terminal; FORCE_COLOR turns it on in a pipe, FORCE_COLOR=0 off', async () => {
    expect((await run(['apply', '--bogus'], { tty: true, env: { NO_COLOR: '1' } })).stderr).not.toContain(ESC);
    expect((await run(['apply', '--bogus'], { tty: false, env: { FORCE_COLOR: '1' } })).stderr).toContain(ESC);
    expect((await run(['apply', '--bogus'], { tty: true, env: { FORCE_COLOR: '0' } })).stderr).not.toContain(ESC);
  });

  it('--json output is never coloured, even with FORCE_COLOR', async () => {
    const forced = await run(['apply', '--bogus', '--json'], { tty: true, env: { FORCE_COLOR: '1' } });
    expect(forced.stdout).not.toContain(ESC);
    expect(JSON.parse(forced.stdout)).toMatchObject({ ok: false, command: 'apply' });
  });

  it('FAIL, error: and warning: are the words coloured; other text is left alone', () => {
    expect(paint('FAIL  mlx/a.cpp\nok    mlx/b.cpp', true)).toMatch(
      /^\u001b\[\d+mFAIL\u001b\[\d+m {2}mlx\/a.cpp\nok {4}mlx\/b.cpp$/,
    );
    expect(paint('FAIL  mlx/a.cpp', false)).toBe('FAIL  mlx/a.cpp');
    expect(useColour({}, true)).toBe(true);
    expect(useColour({ NO_COLOR: '' }, true)).toBe(true);
    expect(useColour({ TERM: 'dumb' }, true)).toBe(false);
  });

  it('a warning on a terminal is coloured', () => {
    const stream = Object.assign(new PassThrough(), { isTTY: true });
    let text = '';
    stream.on('data', (c: Buffer) => (text += c.toString()));
    createLogger({ stream, env: {} }).warn('careful');
    expect(text).toMatch(/^\u001b\[\d+mwarning:\u001b\[\d+m careful\n$/);
  });
});
