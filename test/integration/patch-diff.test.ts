import { writeFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';

import { describe, expect, it } from 'vitest';

import { Git } from '../../src/adapters/git.js';
import { createLogger } from '../../src/adapters/log.js';
import { gitDiffHunks } from '../../src/series/patch-diff.js';
import { git, tempDir } from '../support/repos.js';

const log = createLogger({ stream: new PassThrough() });

function repo(): { dir: string; git: Git } {
  const dir = tempDir('msp-diff-');
  git(dir, 'init', '--quiet');
  return { dir, git: new Git(dir, log, process.env) };
}

const before = [
  'Title',
  '=====',
  '',
  'Operations',
  '----------',
  '',
  'Text.',
  '',
  'Scripts',
  '-------',
  '',
  'More text.',
  '',
].join('\n');
const after = before.replace('Text.\n\n', 'Text.\n\n{{docs_section_title}}\n{{docs_section_underline}}\n\n');

describe('gitDiffHunks', () => {
  it('writes the hunk header as git diff does, with the function context after the second @@', async () => {
    const { git: g } = repo();
    const hunks = await gitDiffHunks(g, 'docs/x.rst', before, after);
    expect(hunks).toHaveLength(1);
    // The hunk starts below the `----------` line; git takes the nearest line above that starts with a letter.
    expect(hunks[0]?.header).toBe('@@ -6,6 +6,9 @@ Operations');
    expect(hunks[0]?.lines).toEqual([
      ' ',
      ' Text.',
      ' ',
      '+{{docs_section_title}}',
      '+{{docs_section_underline}}',
      '+',
      ' Scripts',
      ' -------',
      ' ',
    ]);
  });

  it("ignores the user's diff settings (prefixes, blank context lines, algorithm, context size)", async () => {
    const { dir, git: g } = repo();
    const plain = await gitDiffHunks(g, 'docs/x.rst', before, after);
    for (const [key, value] of [
      ['diff.noprefix', 'true'],
      ['diff.suppressBlankEmpty', 'true'],
      ['diff.algorithm', 'histogram'],
      ['diff.context', '1'],
      ['diff.interHunkContext', '10'],
      ['color.diff', 'always'],
    ] as const) {
      git(dir, 'config', key, value);
    }
    expect(await gitDiffHunks(g, 'docs/x.rst', before, after)).toEqual(plain);
  });

  it("uses the repository's diff attributes for the function context", async () => {
    const { dir, git: g } = repo();
    const cpp = [
      'namespace a {',
      '',
      'int f(int x) {',
      '  int y = x;',
      '  y += 1;',
      '  y += 2;',
      '  return y;',
      '}',
      '',
      '}',
      '',
    ].join('\n');
    const changed = cpp.replace('  y += 2;\n', '  y += 2;\n  y += 3;\n');
    expect((await gitDiffHunks(g, 'a.cpp', cpp, changed))[0]?.header).toBe('@@ -4,6 +4,7 @@ int f(int x) {');
    // A userdiff driver that knows only namespaces picks another line.
    git(dir, 'config', 'diff.ns.xfuncname', '^namespace .*$');
    writeFileSync(`${dir}/.gitattributes`, '*.cpp diff=ns\n');
    expect((await gitDiffHunks(g, 'a.cpp', cpp, changed))[0]?.header).toBe('@@ -4,6 +4,7 @@ namespace a {');
  });

  it('keeps the missing newline marker and returns no hunks for equal texts', async () => {
    const { git: g } = repo();
    const hunks = await gitDiffHunks(g, 'f.txt', 'a\nb', 'a\nc');
    expect(hunks[0]?.lines).toEqual([' a', '-b', '\\ No newline at end of file', '+c', '\\ No newline at end of file']);
    expect(await gitDiffHunks(g, 'f.txt', 'same\n', 'same\n')).toEqual([]);
  });

  it("leaves the repository's index and files alone", async () => {
    const { dir, git: g } = repo();
    writeFileSync(`${dir}/kept.txt`, 'kept\n');
    git(dir, 'add', 'kept.txt');
    const index = git(dir, 'ls-files', '--stage');
    const status = git(dir, 'status', '--porcelain');
    await gitDiffHunks(g, 'docs/x.rst', before, after);
    expect(git(dir, 'ls-files', '--stage')).toBe(index);
    expect(git(dir, 'status', '--porcelain')).toBe(status);
  });
});
