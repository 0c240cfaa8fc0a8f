import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { Git } from '../../src/adapters/git.js';
import { createLogger } from '../../src/adapters/log.js';
import { probe, runLogged } from '../../src/adapters/process.js';
import { git, tempDir } from '../support/repos.js';

const quiet = createLogger({ stream: { write: () => true } as unknown as NodeJS.WritableStream });
const injected = { PATH: process.env['PATH'], HOME: process.env['HOME'] };
const ECHO = ['-c', 'echo "${MSP_LEAK_CHECK-unset}"'];

afterEach(() => {
  delete process.env['MSP_LEAK_CHECK'];
  delete process.env['GIT_DIR'];
});

// Commands take their environment from Io.env. A variable set only in the tool's own
// process must not reach the programs it runs, or a test's injected PATH proves nothing.
describe('child processes see only the injected environment', () => {
  it('runLogged and probe do not inherit process.env', async () => {
    process.env['MSP_LEAK_CHECK'] = 'leaked';
    const run = await runLogged(quiet, 'sh', ECHO, { cwd: tempDir(), env: injected, keepOutput: true });
    expect(run.output).toBe('unset');
    expect(await probe('sh', ECHO, injected)).toBe('unset');
    expect(await probe('sh', ECHO, { ...injected, MSP_LEAK_CHECK: 'given' })).toBe('given');
  });

  it('probe finds programs on the injected PATH only', async () => {
    expect(await probe('sh', ['-c', 'echo ok'], { PATH: path.join(tempDir(), 'empty') })).toBeNull();
  });

  it('git does not inherit process.env', async () => {
    const repo = tempDir();
    git(repo, 'init', '--quiet');
    // GIT_DIR in the tool's own process would send every git command elsewhere.
    process.env['GIT_DIR'] = path.join(tempDir(), 'elsewhere.git');
    const out = await new Git(repo, quiet, injected).raw(['rev-parse', '--git-dir']);
    expect(out.trim()).toBe('.git');
  });
});
