import { describe, expect, it } from 'vitest';

import { failureReport } from '../../src/core/json.js';
import { UserError } from '../../src/core/errors.js';
import { makeProject, makeUpstream, runCli, tempDir } from '../support/repos.js';

/** The one shape of every --json failure: `{ok: false, command, error: {code, message, hint, details}}`. */
function expectFailureShape(json: unknown, command: string | null, code: string): void {
  const report = json as Record<string, unknown>;
  expect(Object.keys(report).sort()).toEqual(['command', 'error', 'ok']);
  expect(report['ok']).toBe(false);
  expect(report['command']).toBe(command);
  const error = report['error'] as Record<string, unknown>;
  expect(Object.keys(error).sort()).toEqual(['code', 'details', 'hint', 'message']);
  expect(error['code']).toBe(code);
  expect(typeof error['message']).toBe('string');
  expect(error['hint'] === null || typeof error['hint'] === 'string').toBe(true);
}

describe('one --json failure shape', () => {
  it('a usage error names its command, or null when none was named', async () => {
    const cwd = tempDir();
    const typo = await runCli(['apply', '--no-such-option', '--json'], { cwd });
    expect(typo.code).toBe(2);
    expectFailureShape(typo.json, 'apply', 'USAGE');
    expect((typo.json as { error: { hint: unknown } }).error.hint).toEqual(expect.any(String));
    const none = await runCli(['--json'], { cwd });
    expect(none.code).toBe(2);
    expectFailureShape(none.json, null, 'USAGE');
    const unknown = await runCli(['no-such-command', '--json'], { cwd });
    expectFailureShape(unknown.json, null, 'USAGE');
  });

  it('an expected error names its command', async () => {
    const upstream = makeUpstream();
    const project = makeProject(upstream.sha);
    const missing = `${tempDir()}/no-such-repo`;
    const result = await runCli(['apply', '--mlx-repo', missing, '--workdir', `${tempDir()}/w`, '--json'], {
      cwd: project,
    });
    expect(result.code).toBe(5);
    expectFailureShape(result.json, 'apply', (result.json as { error: { code: string } }).error.code);
  });

  it('an internal error has the same shape: code INTERNAL, a hint to report it, the stack in details', () => {
    const report = failureReport('status', new TypeError('x is undefined'));
    expectFailureShape(report, 'status', 'INTERNAL');
    expect((report as { error: { hint: unknown } }).error.hint).toMatch(/please report/);
    const details = (report as { error: { details: Record<string, unknown> } }).error.details;
    expect(details['name']).toBe('TypeError');
    expect(String(details['stack'])).toContain('x is undefined');
    const expected = failureReport('apply', new UserError('USAGE', 'bad', { hint: 'fix it' }));
    expectFailureShape(expected, 'apply', 'USAGE');
  });
});
