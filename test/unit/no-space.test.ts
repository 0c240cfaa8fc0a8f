import { constants } from 'node:os';

import { describe, expect, it } from 'vitest';

import { ExitCode, noSpaceErrorFrom, UserError } from '../../src/core/errors.js';
import { ProcessError } from '../../src/adapters/process-error.js';

/** A full quota (EDQUOT) cannot be made on a test machine without quotas: the errors it gives are built here. */
describe('noSpaceErrorFrom: the one place that tells a full disk or quota', () => {
  const fsError = (code: string, errno: number) =>
    Object.assign(new Error(`${code}: write`), { code, errno, syscall: 'write', path: '/p/templates/x.h' });

  it.each([
    ['ENOSPC from Node', fsError('ENOSPC', -28)],
    ['EDQUOT from Node (which has no name for it)', fsError('Unknown system error', -constants.errno.EDQUOT)],
  ])('%s: NO_SPACE, exit 12, naming the path and the command to run again', (_what, error) => {
    const full = noSpaceErrorFrom(error, { command: 'export' });
    expect(full?.code).toBe('NO_SPACE');
    expect(full?.exitCode).toBe(ExitCode.noSpace);
    expect(full?.message).toContain('/p/templates/x.h');
    expect(full?.hint).toContain('`mlx-storage-pr export`');
  });

  it.each([
    'fatal: write error: No space left on device',
    "fatal: sha1 file '/w/mlx/.git/index.lock' write error. Out of diskspace.",
    'error: unable to write file x: Disk quota exceeded',
  ])('a program that said %j', (said) => {
    const error = new ProcessError(['git', 'checkout'], { exitCode: 128, stderr: `error: something\n${said}` });
    expect(noSpaceErrorFrom(error)?.message).toContain(said);
  });

  it('as the cause of another error, and a NO_SPACE error again with the command', () => {
    const wrapped = new UserError('PROCESS_FAILED', 'git failed', { cause: fsError('ENOSPC', -28) });
    expect(noSpaceErrorFrom(wrapped)?.code).toBe('NO_SPACE');
    const again = noSpaceErrorFrom(noSpaceErrorFrom(wrapped), { command: 'apply' });
    expect(again?.hint).toContain('`mlx-storage-pr apply`');
  });

  it('anything else: null', () => {
    expect(noSpaceErrorFrom(fsError('EACCES', -13))).toBeNull();
    expect(noSpaceErrorFrom(new ProcessError(['git'], { exitCode: 1, stderr: 'fatal: bad object' }))).toBeNull();
    expect(noSpaceErrorFrom(null)).toBeNull();
  });
});
