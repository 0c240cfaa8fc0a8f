/** `pr --push` and the commit's identity (issue 23, item 6). */
import { describe, expect, it } from 'vitest';

import { IDENTITY, makeWorld, ONLY_PR_TEXT } from '../support/fork.js';
import { git, runCli } from '../support/repos.js';

describe('pr --push: the identity of the commit', () => {
  it('an empty author or committer name or e-mail is refused (1, IDENTITY_MISSING) and nothing is pushed', async () => {
    const w = await makeWorld();
    const before = w.forkRefs();
    for (const name of Object.keys(IDENTITY)) {
      const result = await runCli(['pr', '--push', '--fork', w.fork, '--json', ...ONLY_PR_TEXT], {
        cwd: w.project,
        env: { ...w.env, [name]: '' },
      });
      expect(result.code, `${name}: ${result.stdout}`).toBe(1);
      expect(result.json.error.code, name).toBe('IDENTITY_MISSING');
      expect(result.json.error.message, name).toMatch(/empty/i);
      expect(result.json.error.hint, name).toContain(name);
    }
    expect(w.forkRefs()).toEqual(before);
  });

  it("fixing the author's or committer's name or e-mail later refreshes the branch (updated), dates alone do not", async () => {
    const w = await makeWorld();
    const first = await w.pr(...ONLY_PR_TEXT);
    expect(first.code, first.stderr).toBe(0);
    const fixes: Array<Record<string, string>> = [
      { GIT_AUTHOR_EMAIL: 'ada@lovelace.example' },
      { GIT_COMMITTER_EMAIL: 'ada@lovelace.example' },
      { GIT_AUTHOR_NAME: 'Ada King' },
      { GIT_COMMITTER_NAME: 'Ada King' },
    ];
    let env = { ...w.env };
    for (const fix of fixes) {
      env = { ...env, ...fix };
      const result = await runCli(['pr', '--push', '--fork', w.fork, '--json', ...ONLY_PR_TEXT], {
        cwd: w.project,
        env,
      });
      expect(result.code, result.stderr).toBe(0);
      expect(result.json.status, JSON.stringify(fix)).toBe('updated');
    }
    const raw = git(w.fork, 'cat-file', 'commit', 'refs/heads/mlx-storage-pr');
    expect(raw).toMatch(/^author Ada King <ada@lovelace\.example> /m);
    expect(raw).toMatch(/^committer Ada King <ada@lovelace\.example> /m);
    const again = await runCli(['pr', '--push', '--fork', w.fork, '--json', ...ONLY_PR_TEXT], { cwd: w.project, env });
    expect(again.json.status).toBe('unchanged');
  });
});
