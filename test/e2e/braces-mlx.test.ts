import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { git, REPO_ROOT, runCli, tempDir } from '../support/repos.js';
import { describeName, mlxRepo } from '../support/mlx.js';

const { repo } = mlxRepo();
const pin = (
  JSON.parse(readFileSync(path.join(REPO_ROOT, 'mlx-storage-pr.config.json'), 'utf8')) as {
    upstream: { commit: string };
  }
).upstream.commit;
/** The release before the pin, for the bump. */
const OLDER = 'v0.32.1';

// MLX's own `{{...}}` braces (here pad()'s widths in tests/ops_tests.cpp) are text, never placeholders:
// a patch next to them goes through apply, format --fix, export and bump unchanged where nobody edited it.
const CONTEXT = '  CHECK_EQ(pad(x, {{1, 1}, {1, 2}, {3, 1}}).shape(), Shape{3, 5, 7});\n';
const ADDED_BADLY = '  CHECK_EQ(pad(x,   {{0, 0}, {0, 0}, {1, 1}}).shape(),Shape{1, 2, 5});\n';
const ADDED = '  CHECK_EQ(pad(x, {{0, 0}, {0, 0}, {1, 1}}).shape(), Shape{1, 2, 5});\n';
const EDITED = '  CHECK_EQ(pad(x, {{0, 0}, {1, 0}, {1, 1}}).shape(), Shape{1, 3, 5});\n';
const FILE = 'tests/ops_tests.cpp';

describe.skipIf(repo === null)(describeName("a patch next to MLX's {{...}} braces on the real MLX"), () => {
  let clone: string;
  let project: string;
  const patchFile = () => path.join(project, 'patches', '0001-tests-ops_tests.cpp.patch');
  const patch = () => readFileSync(patchFile(), 'utf8');
  const cli = (args: string[], workdir: string) =>
    runCli([...args, '--mlx-repo', clone, '--workdir', workdir, '--json'], { cwd: project });
  let workdir: string;
  const checkoutFile = () => path.join(workdir, 'mlx', FILE);

  beforeAll(async () => {
    // A contributor's branch: one mis-formatted line added under a line with braces.
    clone = tempDir('msp-e2e-braces-clone-');
    git(clone, 'clone', '--quiet', '--shared', '--no-checkout', repo as string, '.');
    git(clone, 'checkout', '--quiet', '-b', 'braces', pin);
    const text = readFileSync(path.join(clone, FILE), 'utf8');
    expect(text).toContain(CONTEXT);
    writeFileSync(path.join(clone, FILE), text.replace(CONTEXT, CONTEXT + ADDED_BADLY));
    git(clone, 'commit', '--quiet', '-am', 'pad: one more shape');
    project = path.join(tempDir('msp-e2e-braces-'), 'series');
    const made = await runCli(['init', '--project', project, '--from', 'braces', '--pin', pin, '--mlx-repo', clone], {
      cwd: REPO_ROOT,
    });
    expect(made.code, made.stderr).toBe(0);
    workdir = tempDir('msp-e2e-braces-work-');
    const applied = await cli(['apply'], workdir);
    expect(applied.code, applied.stderr).toBe(0);
  }, 300_000);

  it('apply, format --fix, export, and bump to an older real commit keep the braces as text', async () => {
    expect(readFileSync(checkoutFile(), 'utf8')).toContain(CONTEXT + ADDED_BADLY);

    const fixed = await cli(['format', '--fix'], workdir);
    expect(fixed.code, fixed.stderr).toBe(0);
    expect(patch()).toContain(` ${CONTEXT}+${ADDED}`);
    expect(readFileSync(checkoutFile(), 'utf8')).toContain(CONTEXT + ADDED);
    expect((await cli(['format'], workdir)).code).toBe(0);

    // An edit in the checkout goes back into the patch; only the edited line changes.
    const before = patch();
    const text = readFileSync(checkoutFile(), 'utf8');
    writeFileSync(checkoutFile(), text.replace(ADDED, EDITED));
    const exported = await cli(['export'], workdir);
    expect(exported.code, exported.stderr).toBe(0);
    expect(patch()).toContain(` ${CONTEXT}+${EDITED}`);
    const changed = (a: string, b: string) => {
      const [x, y] = [a.split('\n'), b.split('\n')];
      return x.filter((line, i) => line !== y[i]);
    };
    expect(changed(patch(), before).filter((l) => !l.startsWith('index '))).toEqual([`+${EDITED.trimEnd()}`]);
    const fresh = tempDir('msp-e2e-braces-fresh-');
    expect((await cli(['apply'], fresh)).code).toBe(0);
    expect(git(path.join(fresh, 'mlx'), 'rev-parse', 'HEAD^{tree}')).toBe(
      git(path.join(workdir, 'mlx'), 'rev-parse', 'HEAD^{tree}'),
    );

    const moved = await cli(['bump', '--to', OLDER, '--allow-older'], workdir);
    expect(moved.code, moved.stderr).toBe(0);
    expect(moved.json).toMatchObject({ status: 'bumped', relation: 'older' });
    expect(patch()).toContain(` ${CONTEXT}+${EDITED}`);
    const older = tempDir('msp-e2e-braces-older-');
    expect((await cli(['apply'], older)).code).toBe(0);
    expect(readFileSync(path.join(older, 'mlx', FILE), 'utf8')).toContain(CONTEXT + EDITED);
  }, 600_000);
});
