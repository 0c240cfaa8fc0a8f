import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { git, REPO_ROOT, runCli, tempDir } from '../support/repos.js';
import { describeName, mlxRepo } from '../support/mlx.js';

const { repo } = mlxRepo();
const pin = (
  JSON.parse(readFileSync(path.join(REPO_ROOT, 'mlx-storage-pr.config.json'), 'utf8')) as {
    upstream: { commit: string };
  }
).upstream.commit;

/** init from `from` on `base` in `repo`, then apply: the checkout's tree and `from`'s tree. */
async function roundTrip(source: string, base: string, from: string): Promise<{ applied: string; expected: string }> {
  const project = path.join(tempDir('msp-e2e-init-'), 'series');
  const made = await runCli(['init', '--project', project, '--from', from, '--pin', base, '--mlx-repo', source], {
    cwd: REPO_ROOT,
  });
  expect(made.code, made.stderr).toBe(0);
  const workdir = tempDir('msp-e2e-');
  const applied = await runCli(['apply', '--project', project, '--mlx-repo', source, '--workdir', workdir], {
    cwd: project,
  });
  expect(applied.code, applied.stderr).toBe(0);
  return {
    applied: git(path.join(workdir, 'mlx'), 'rev-parse', 'HEAD^{tree}').trim(),
    expected: git(source, 'rev-parse', `${from}^{tree}`).trim(),
  };
}

describe.skipIf(repo === null)(describeName('init on the real MLX'), () => {
  it('init --pin <pin>~5 --from <pin>: apply reproduces the pin tree byte for byte', async () => {
    const { applied, expected } = await roundTrip(repo as string, `${pin}~5`, pin);
    expect(applied).toBe(expected);
  }, 300_000);

  it("init of a branch made of the example series' commits reproduces that branch's tree", async () => {
    const example = path.join(REPO_ROOT, 'examples', 'hypot');
    // The example's patches, one commit per patch, on a branch of a clone of MLX.
    const clone = tempDir('msp-e2e-clone-');
    git(clone, 'clone', '--quiet', '--shared', '--no-checkout', repo as string, '.');
    git(clone, 'checkout', '--quiet', '-b', 'example', pin);
    const series = readFileSync(path.join(example, 'patches', 'series'), 'utf8');
    for (const name of series.split('\n').filter((l) => l && !l.startsWith('#'))) {
      git(clone, 'apply', '--index', path.join(example, 'patches', name));
      git(clone, 'commit', '--quiet', '-m', name);
    }
    const { applied, expected } = await roundTrip(clone, pin, 'example');
    expect(applied).toBe(expected);
  }, 300_000);
});
