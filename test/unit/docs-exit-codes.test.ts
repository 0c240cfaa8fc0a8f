import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { ExitCode } from '../../src/core/errors.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The codes in the first column of the Markdown table headed `| code | meaning |`. */
function documentedCodes(file: string): number[] {
  const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
  const start = lines.findIndex((l) => /^\|\s*code\s*\|\s*meaning\s*\|/.test(l));
  expect(start, `${file} has a "| code | meaning |" table`).toBeGreaterThanOrEqual(0);
  const codes: number[] = [];
  for (const line of lines.slice(start + 2)) {
    const cell = /^\|\s*([^|]*?)\s*\|/.exec(line);
    if (!cell) break;
    codes.push(Number(cell[1]));
  }
  return codes;
}

const inCode = Object.values(ExitCode).sort((a, b) => a - b);

describe('the exit code tables', () => {
  it('docs/exit-codes.md lists exactly the exit codes of src/core/errors.ts, in order', () => {
    expect(documentedCodes('docs/exit-codes.md')).toEqual(inCode);
  });

  it("README.md's short table lists the same codes", () => {
    expect(documentedCodes('README.md')).toEqual(inCode);
  });
});
