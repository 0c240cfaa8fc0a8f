import { describe, expect, it } from 'vitest';

import { branchFor, orderByFirstChange, patchName, schemaReference, unsupportedChange } from '../../src/upkeep/init.js';

const change = (path: string, oldMode = '100644', newMode = '100644', binary = false) => ({
  path,
  oldMode,
  newMode,
  binary,
});

describe('init planning', () => {
  it("names the branch after a branch's or tag's short name, and mlx-<12 hex> for a commit or an unusable name", () => {
    const id = '0123456789abcdef0123456789abcdef01234567';
    expect(branchFor('refs/heads/fix/cpu-sort', id)).toBe('fix/cpu-sort');
    expect(branchFor('refs/tags/v1-fix', id)).toBe('v1-fix');
    expect(branchFor('refs/remotes/origin/my-fix', id)).toBe('my-fix');
    expect(branchFor('', id)).toBe('mlx-0123456789ab');
    expect(branchFor('refs/heads/a..b', id)).toBe('mlx-0123456789ab');
    expect(branchFor('refs/heads/naïve', id)).toBe('mlx-0123456789ab');
    // Names the config would refuse (git's rules for a branch): the new project must load.
    for (const bad of ['refs/remotes/origin/HEAD', 'refs/heads/.hidden', 'refs/tags/v1.', 'refs/heads/a/x.lock/b'])
      expect(branchFor(bad, id), bad).toBe('mlx-0123456789ab');
  });

  it('orders files by their first change in the range; a renamed file counts from its old path', () => {
    const commits = [
      [change('b.cpp'), change('old.h')],
      [change('a.cpp'), change('b.cpp')],
    ];
    const final = [
      { path: 'a.cpp', from: 'a.cpp' },
      { path: 'b.cpp', from: 'b.cpp' },
      { path: 'new.h', from: 'old.h' },
    ];
    expect(orderByFirstChange(final, commits).map((c) => c.path)).toEqual(['b.cpp', 'new.h', 'a.cpp']);
  });

  it('numbers patch names from 0001 and keeps only safe characters of the path', () => {
    expect(patchName(0, 'mlx/backend/cpu/unary.cpp')).toBe('0001-mlx-backend-cpu-unary.cpp.patch');
    expect(patchName(11, '.github/a b.yml')).toBe('0012-github-a-b.yml.patch');
  });

  it('refuses binary files, symbolic links and submodules, and nothing else', () => {
    expect(unsupportedChange(change('a', '100644', '100755'))).toBeNull();
    expect(unsupportedChange(change('a', '000000', '100644'))).toBeNull();
    expect(unsupportedChange(change('a', '100644', '100644', true))).toMatch(/binary/);
    expect(unsupportedChange(change('a', '000000', '120000'))).toMatch(/symbolic link/);
    expect(unsupportedChange(change('a', '160000', '000000'))).toMatch(/submodule/);
  });

  it("points $schema at the package's schema only from a neighbouring folder", () => {
    expect(schemaReference('/work/pkg/examples/x', '/work/pkg')).toBe('../../schema/config.schema.json');
    expect(schemaReference('/home/me/change', '/home/me/node_modules/mlx-storage-pr')).toBe(
      '../node_modules/mlx-storage-pr/schema/config.schema.json',
    );
    expect(schemaReference('/home/me/change', '/home/me/.npm/_npx/abc/node_modules/mlx-storage-pr')).toBeNull();
  });
});
