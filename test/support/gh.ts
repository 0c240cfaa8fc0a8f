import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { tempDir } from './repos.js';

/** A folder holding a `gh` that prints `token` for `gh auth token` (exit 1, as gh does, when null), and logs its arguments. */
export function fakeGh(token: string | null): { bin: string; calls: () => string[] } {
  const bin = tempDir('msp-gh-');
  const log = path.join(bin, 'calls.txt');
  writeFileSync(
    path.join(bin, 'gh'),
    [
      '#!/bin/sh',
      `echo "$*" >> '${log}'`,
      token === null
        ? 'echo "no oauth token found for github.com" >&2; exit 1'
        : `if [ "$1 $2" = "auth token" ]; then echo '${token}'; exit 0; fi; exit 2`,
      '',
    ].join('\n'),
  );
  chmodSync(path.join(bin, 'gh'), 0o755);
  writeFileSync(log, '');
  return { bin, calls: () => readFileSync(log, 'utf8').split('\n').filter(Boolean) };
}

export const withGh = (bin: string) => ({ PATH: `${bin}${path.delimiter}${process.env['PATH'] ?? ''}` });
