/** `pr --open` when GitHub's answer is not what the tool expects (issue 23, item 15). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { makeWorld, ONLY_PR_TEXT, type World } from '../support/fork.js';
import { startGitHubStandIn, type GitHubStandIn } from '../support/github-api.js';
import { runCli } from '../support/repos.js';

const TOKEN = 'ghp_answerTOKEN0987654321SECRET';

describe('pr --open: GitHub answers 201 without the expected fields', () => {
  let api: GitHubStandIn;
  let w: World;
  beforeAll(async () => {
    api = await startGitHubStandIn({ token: TOKEN, repository: 'ml-explore/mlx', defaultBranch: 'main' });
    w = await makeWorld({ GH_TOKEN: TOKEN });
  });
  afterAll(() => api.close());

  it('says what came back (HTTP 201, the fields missing) and that the pull request may exist, not "GitHub did not answer"', async () => {
    api.createAnswer = { id: 7, note: 'a proxy rewrote this' };
    const result = await runCli(
      [
        'pr',
        '--push',
        '--fork',
        w.fork,
        '--open',
        '--fork-owner',
        'alice',
        '--api-url',
        api.url,
        '--json',
        ...ONLY_PR_TEXT,
      ],
      { cwd: w.project, env: w.env },
    );
    expect(result.code).toBe(1);
    expect(result.json.error.code).toBe('GITHUB_API_FAILED');
    expect(result.json.error.details.status).toBe(201);
    expect(result.json.error.message).toContain('HTTP 201');
    expect(result.json.error.message).toMatch(/number|html_url|base/);
    expect(result.json.error.message).toContain('a proxy rewrote this');
    expect(result.json.error.hint).not.toContain('did not answer');
    expect(result.json.error.hint).toContain('may have been created');
    expect(api.pulls).toHaveLength(1);
  });
});
