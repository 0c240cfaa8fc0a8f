import { describe, expect, it } from 'vitest';

import { preCommitPins } from '../../src/readiness/format-report.js';
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

  it('reads each hook with its repository, version without the v, files, exclude and args; comments are skipped', async () => {
    expect(await preCommitHooks(text)).toEqual([
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

  it('applies a hook to the files of its types that its files pattern matches and its exclude does not', async () => {
    const [clang, isort, black, other] = await preCommitHooks(text);
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

describe('pre-commit configs in the layouts YAML allows', () => {
  const clang = (extra: Partial<Record<string, unknown>> = {}) => ({
    id: 'clang-format',
    repo: 'https://github.com/pre-commit/mirrors-clang-format',
    rev: '21.1.8',
    files: null,
    exclude: null,
    args: [],
    ...extra,
  });

  it('reads flow style', async () => {
    const text =
      "repos: [{repo: 'https://github.com/pre-commit/mirrors-clang-format', rev: v21.1.8, hooks: [{id: clang-format, files: '\\.(h|cpp)$', args: [-i]}]}]\n";
    expect(await preCommitHooks(text)).toEqual([clang({ files: '\\.(h|cpp)$', args: ['-i'] })]);
  });

  it('reads a block scalar as its text, not as the indicator', async () => {
    const text = [
      'repos:',
      '- repo: https://github.com/pre-commit/mirrors-clang-format',
      '  rev: v21.1.8',
      '  hooks:',
      '  - id: clang-format',
      '    files: |-',
      '      \\.(h|cpp)$',
      '    exclude: >-',
      '      ^mlx/3rdparty/',
    ].join('\n');
    const [hook] = await preCommitHooks(text);
    expect(hook).toEqual(clang({ files: '\\.(h|cpp)$', exclude: '^mlx/3rdparty/' }));
    expect(hookFiles(hook!, ['mlx/a.h', 'mlx/a.cc', 'mlx/3rdparty/p.h'])).toEqual(['mlx/a.h']);
  });

  it('resolves anchors and aliases', async () => {
    const text = [
      'repos:',
      '- repo: https://github.com/pre-commit/mirrors-clang-format',
      '  rev: &llvm v21.1.8',
      '  hooks:',
      '  - &cf {id: clang-format, files: \\.h$}',
      '- repo: https://example.com/llvm-tools',
      '  rev: *llvm',
      '  hooks:',
      '  - *cf',
    ].join('\n');
    expect(await preCommitHooks(text)).toEqual([
      clang({ files: '\\.h$' }),
      clang({ repo: 'https://example.com/llvm-tools', files: '\\.h$' }),
    ]);
  });

  it('reads a (?x) verbose pattern without its whitespace and comments', async () => {
    const text = [
      'repos:',
      '- repo: https://github.com/pre-commit/mirrors-clang-format',
      '  rev: v21.1.8',
      '  hooks:',
      '  - id: clang-format',
      '    exclude: |',
      '      (?x)^(',
      '          mlx/3rdparty/.*  # vendored',
      '        | docs/[ ]src/.*',
      '      )$',
    ].join('\n');
    const [hook] = await preCommitHooks(text);
    expect(hookFiles(hook!, ['mlx/a.h', 'mlx/3rdparty/p.h', 'docs/ src/x.h', 'docs/src/y.h'])).toEqual([
      'mlx/a.h',
      'docs/src/y.h',
    ]);
  });

  it('reads the pinned tool versions through aliases too', async () => {
    const text = [
      'repos:',
      '- repo: https://github.com/pre-commit/mirrors-clang-format',
      '  rev: &v v21.1.8',
      '  hooks: [{id: clang-format}]',
      '- {repo: https://github.com/cheshirekow/cmake-format-precommit, rev: v0.6.13, hooks: [{id: cmake-format}]}',
    ].join('\n');
    expect(preCommitPins(await preCommitHooks(text))).toEqual({ clangFormat: '21.1.8', cmakeFormat: '0.6.13' });
  });

  it('refuses text that is not YAML with a message naming the file', async () => {
    await expect(preCommitHooks('repos: [unclosed')).rejects.toThrow(/\.pre-commit-config\.yaml/);
  });
});
