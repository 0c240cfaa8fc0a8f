import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { createLogger } from '../../src/adapters/log.js';
import { ProcessError } from '../../src/adapters/process-error.js';
import * as processAdapter from '../../src/adapters/process.js';
import { tempDir } from '../support/repos.js';

const quiet = createLogger({ stream: { write: () => true } as unknown as NodeJS.WritableStream });
const env = { PATH: process.env['PATH'] };
const FAILING = ['-c', 'echo said-out; echo said-err >&2; exit 3'];

async function failureOf(promise: Promise<unknown>): Promise<ProcessError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProcessError);
  return error as ProcessError;
}

// One failure contract for every child process: a program that exits non-zero, is stopped or
// does not start is a ProcessError naming the command, its exit code and what it said.
// Only `probe` answers "absent" (null), because its callers ask whether a program is there.
describe('the process runner has one failure contract', () => {
  it('exports only the forms of the contract', () => {
    const functions = Object.entries(processAdapter)
      .filter(([, value]) => typeof value === 'function')
      .map(([name]) => name)
      .sort();
    expect(functions).toEqual(['probe', 'quote', 'run', 'runDirect', 'runLogged', 'runPipe']);
  });

  it('run: a non-zero exit is a ProcessError with the command, exit code, stderr and output', async () => {
    const error = await failureOf(processAdapter.run('sh', FAILING, { env }));
    expect(error.command).toEqual(['sh', ...FAILING]);
    expect(error.exitCode).toBe(3);
    expect(error.stderr.trim()).toBe('said-err');
    expect(error.output).toContain('said-out');
    expect(error.notStarted).toBe(false);
  });

  it('runLogged: a non-zero exit is a ProcessError with the output tail', async () => {
    const error = await failureOf(processAdapter.runLogged(quiet, 'sh', FAILING, { cwd: tempDir(), env }));
    expect(error.exitCode).toBe(3);
    expect(error.stderr).toContain('said-err');
    expect(error.stderr).toContain('said-out');
  });

  it('runDirect (git): a non-zero exit is a ProcessError with its stdout kept', async () => {
    const error = await failureOf(processAdapter.runDirect('sh', FAILING, { cwd: tempDir(), env }));
    expect(error.exitCode).toBe(3);
    expect(error.stderr.trim()).toBe('said-err');
    expect(error.output.trim()).toBe('said-out');
  });

  it('a program that does not start is a ProcessError that says so, in every form', async () => {
    const missing = path.join(tempDir(), 'no-such-program');
    const errors = await Promise.all([
      failureOf(processAdapter.run(missing, [], { env })),
      failureOf(processAdapter.runLogged(quiet, missing, [], { cwd: tempDir(), env })),
      failureOf(processAdapter.runDirect(missing, [], { cwd: tempDir(), env })),
    ]);
    for (const error of errors) {
      expect(error.exitCode).toBeNull();
      expect(error.notStarted).toBe(true);
      expect(error.message).toContain('did not start');
    }
  });

  it('a program stopped by a signal is a ProcessError with the signal', async () => {
    const error = await failureOf(processAdapter.run('sh', ['-c', 'kill -TERM $$'], { env }));
    expect(error.exitCode).toBeNull();
    expect(error.signal).toBe('SIGTERM');
  });

  it('probe is the only form that answers null', async () => {
    expect(await processAdapter.probe('sh', FAILING, env)).toBeNull();
    expect(await processAdapter.probe(path.join(tempDir(), 'none'), [], env)).toBeNull();
    expect(await processAdapter.probe('sh', ['-c', 'echo here'], env)).toBe('here');
  });
});
