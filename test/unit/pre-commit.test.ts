import { describe, expect, it } from 'vitest';

import { hookFiles, preCommitHooks } from '../../src/readiness/pre-commit.js';

describe("MLX's pre-commit hooks", () => {
  const text = [
    'repos:',
    '-   repo: https://github.com/pre-commit/mirrors-clang-format',
    '    rev: v21.1.8',
    '    hooks:',
    '    -   id: clang-format',
    "        files: '\\.(h|cpp)$'",
    '    # -   id: commented-out',
    '- repo: https://github.com/pycqa/isort',
    '  rev: 7.0.0  # the pinned release',
    '  hooks:',
    '    - id: isort',
    '      args: [--profile=black, "--line-length=88"]',
    '      exclude: ^python/mlx/_vendor/',
    '-   repo: https://github.com/psf/black-pre-commit-mirror',
    '    rev: 26.1.0',
    '    hooks:',
    '    -   id: black',
    '        args:',
    '            - --quiet',
    '-   repo: https://example.com/other',
    '    rev: v1.0',
    '    hooks:',
    '    -   id: some-linter',
  ].join('\n');

  it('reads each hook with its repository, version without the v, files, exclude and args; comments are skipped', () => {
    expect(preCommitHooks(text)).toEqual([
      {
        id: 'clang-format',
        repo: 'https://github.com/pre-commit/mirrors-clang-format',
        rev: '21.1.8',
        files: '\\.(h|cpp)$',
        exclude: null,
        args: [],
      },
      {
        id: 'isort',
        repo: 'https://github.com/pycqa/isort',
        rev: '7.0.0',
        files: null,
        exclude: '^python/mlx/_vendor/',
        args: ['--profile=black', '--line-length=88'],
      },
      {
        id: 'black',
        repo: 'https://github.com/psf/black-pre-commit-mirror',
        rev: '26.1.0',
        files: null,
        exclude: null,
        args: ['--quiet'],
      },
      { id: 'some-linter', repo: 'https://example.com/other', rev: '1.0', files: null, exclude: null, args: [] },
    ]);
  });

  it('applies a hook to the files of its types that its files pattern matches and its exclude does not', () => {
    const [clang, isort, black, other] = preCommitHooks(text);
    const files = [
      'mlx/a.h',
      'mlx/a.cc',
      'mlx/k.metal',
      'python/mlx/x.py',
      'python/mlx/_vendor/y.py',
      'CMakeLists.txt',
    ];
    // MLX's files pattern narrows clang-format's own types (which take .cc) to .h and .cpp.
    expect(hookFiles(clang!, files)).toEqual(['mlx/a.h']);
    expect(hookFiles(isort!, files)).toEqual(['python/mlx/x.py']);
    expect(hookFiles(black!, files)).toEqual(['python/mlx/x.py', 'python/mlx/_vendor/y.py']);
    expect(hookFiles(other!, files)).toBeNull();
  });
});
