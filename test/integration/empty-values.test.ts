import { describe, expect, it } from 'vitest';

import { runCli, tempDir } from '../support/repos.js';

describe('an option that needs a value, given none', () => {
  for (const command of ['test', 'check']) {
    it(`${command} --tests with no filter is a usage error (2) before anything runs`, async () => {
      const cwd = tempDir();
      const extra = command === 'check' ? ['--against', 'main', '--build'] : [];
      for (const argv of [
        [command, ...extra, '--tests', '--json'],
        [command, ...extra, '--tests=', '--json'],
      ]) {
        const result = await runCli([...argv, '--workdir', tempDir()], { cwd });
        expect(result.code, result.stderr).toBe(2);
        expect(result.json.error).toMatchObject({ code: 'USAGE' });
        expect(result.json.error.message).toContain('--tests needs a doctest filter');
      }
    });
  }

  it('a check of the options that fails is a usage error (2) with its message, not a stack trace', async () => {
    const result = await runCli(['test', '--no-suite', '--json', '--workdir', tempDir()], { cwd: tempDir() });
    expect(result.code).toBe(2);
    expect(result.json.error.message).toContain('--no-suite needs --metal-twin');
  });
});
