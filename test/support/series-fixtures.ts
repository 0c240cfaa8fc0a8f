import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { git, makeUpstream } from './repos.js';

/** Replaces `find` (which must occur) in a file of `dir`. */
export function edit(dir: string, file: string, find: string, replace: string): void {
  const full = path.join(dir, file);
  const text = readFileSync(full, 'utf8');
  if (!text.includes(find)) throw new Error(`${file} has no ${JSON.stringify(find)}`);
  writeFileSync(full, text.replace(find, replace));
}

/** Commits everything in `dir` on the current branch. */
export function commitAll(dir: string, message: string): string {
  git(dir, 'add', '-A');
  git(dir, 'commit', '--quiet', '-m', message);
  return git(dir, 'rev-parse', 'HEAD').trim();
}

/**
 * fixtures/series/upstream as a repository (the pin on `main`) with the four
 * series of fixtures/series as branches, each made of ordinary commits:
 * `new-op` (an op, its test next to MLX's `{{...}}` braces, a docs line),
 * `docs-only` (a `:ref:` to a label on another page), `empty` (the pin
 * itself) and `cpu-two-changes` (two commits on one CPU backend file).
 */
export function seriesUpstream(): { dir: string; pin: string } {
  const { dir, sha: pin } = makeUpstream('series/upstream');
  git(dir, 'branch', 'empty');

  git(dir, 'checkout', '--quiet', '-b', 'new-op', pin);
  edit(
    dir,
    'mlx/ops.h',
    'float maximum(float a, float b);\n',
    'float maximum(float a, float b);\n\n/** The smaller of two values. */\nfloat minimum(float a, float b);\n',
  );
  edit(
    dir,
    'mlx/ops.cpp',
    '  return a < b ? b : a;\n}\n',
    '  return a < b ? b : a;\n}\n\nfloat minimum(float a, float b) {\n  return b < a ? b : a;\n}\n',
  );
  commitAll(dir, 'Add minimum');
  edit(
    dir,
    'tests/ops_tests.cpp',
    '  CHECK_EQ(maximum(pairs[1][0], pairs[1][1]), pairs[1][2]);\n}\n',
    '  CHECK_EQ(maximum(pairs[1][0], pairs[1][1]), pairs[1][2]);\n}\n\nTEST_CASE("test minimum") {\n  float pairs[][3] = {{{1, 0, 0}}};\n  CHECK_EQ(minimum(pairs[0][0], pairs[0][1]), pairs[0][2]);\n}\n',
  );
  edit(dir, 'docs/src/python/ops.rst', '   maximum\n', '   maximum\n   minimum\n');
  commitAll(dir, 'Test and document minimum');

  git(dir, 'checkout', '--quiet', '-b', 'docs-only', pin);
  edit(
    dir,
    'docs/src/dev/extensions.rst',
    'Write an operation in C++ and bind it.\n',
    'Write an operation in C++ and bind it. The built-in ones are listed in\n:ref:`ops`.\n',
  );
  commitAll(dir, 'Link the list of operations');

  git(dir, 'checkout', '--quiet', '-b', 'cpu-two-changes', pin);
  edit(dir, 'mlx/backend/cpu/unary.cpp', '    out[i] = -in[i];\n', '    out[i] = 0.0f - in[i];\n');
  commitAll(dir, 'negate: subtract from zero');
  edit(
    dir,
    'mlx/backend/cpu/unary.cpp',
    '    out[i] = 1.0f / in[i];\n',
    '    out[i] = in[i] == 0.0f ? 0.0f : 1.0f / in[i];\n',
  );
  commitAll(dir, 'reciprocal: zero stays zero');

  git(dir, 'checkout', '--quiet', 'main');
  return { dir, pin };
}
