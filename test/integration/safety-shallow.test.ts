/** Pushing to a fork that lacks the pinned commit (issue 23, item 14). */
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { makeWorld, ONLY_PR_TEXT } from '../support/fork.js';
import { git, runCli, sh, tempDir } from '../support/repos.js';

describe('pr --push to a fork without the pinned commit', () => {
  it('says the fork has no copy of the pinned commit and prints the commands that sync it (unshallow first)', async () => {
    const w = await makeWorld();
    const empty = path.join(tempDir('msp-empty-fork-'), 'mlx.git');
    git(path.dirname(empty), 'init', '--quiet', '--bare', empty);
    const result = await runCli(['pr', '--push', '--fork', empty, '--json', ...ONLY_PR_TEXT], {
      cwd: w.project,
      env: w.env,
    });
    expect(result.code, result.stdout).toBe(1);
    const error = result.json.error;
    expect(error.code).toBe('PUSH_FAILED');
    expect(error.hint).toContain(`has no copy of the pinned commit ${w.upstream.sha.slice(0, 12)}`);
    expect(error.hint).toContain('fetch --unshallow');
    expect(error.hint).toContain(`push ${empty} ${w.upstream.sha}:refs/heads/`);
    expect(git(empty, 'for-each-ref')).toBe('');

    // The printed commands, run as printed, let the next run push.
    const commands = [...(error.hint as string).matchAll(/`(git -C [^`]+)`/g)].map((m) => m[1] as string);
    expect(commands).toHaveLength(2);
    for (const command of commands) await sh(command, { env: w.env });
    const again = await runCli(['pr', '--push', '--fork', empty, '--json', ...ONLY_PR_TEXT], {
      cwd: w.project,
      env: w.env,
    });
    expect(again.code, again.stdout).toBe(0);
    expect(again.json.status).toBe('created');
  });
});
