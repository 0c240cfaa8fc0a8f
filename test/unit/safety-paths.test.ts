/** Paths a case-insensitive or trailing-dot-insensitive file system takes for .git; text that is not UTF-8. */
import { describe, expect, it } from 'vitest';

import { UserError } from '../../src/core/errors.js';
import { isDotGit, verifyInsideCheckout } from '../../src/core/paths.js';
import { decodeUtf8 } from '../../src/core/text.js';
import { parsePatchFiles } from '../../src/series/series-file.js';

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (error instanceof UserError) return `${error.code}: ${error.message}`;
    throw error;
  }
  return 'no error';
}

describe('verifyInsideCheckout refuses every spelling of .git a file system takes for it', () => {
  it.each([
    ['upper case (APFS, NTFS)', '.GIT/config'],
    ['mixed case', '.Git/config'],
    ['mixed case, deeper', 'mlx/.gIt/hooks/pre-commit'],
    ['a trailing dot (NTFS)', '.git./x'],
    ['trailing dots and spaces (NTFS)', '.git. . /x'],
    ['a trailing space (NTFS)', 'mlx/.git /x'],
    ['an alternate data stream (NTFS)', '.git::$INDEX_ALLOCATION/x'],
    ['a named stream (NTFS)', '.git:stream'],
    ['the 8.3 short name (NTFS)', 'GIT~1/config'],
    ['the 8.3 short name, lower case, trailing dot', 'mlx/git~1./config'],
    ['a zero-width joiner inside (HFS+)', '.g\u200Dit/config'],
    ['a byte-order mark in front (HFS+)', '\uFEFF.git/config'],
    ['a direction mark at the end, upper case (HFS+)', '.GIT\u200E/config'],
    ['a backslash as the separator', 'mlx\\.Git\\config'],
    ['dots only beyond ..', '.../x'],
    ['.. with a trailing space (NTFS)', 'mlx/.. /x'],
  ])('%s: %j', (_what, p) => {
    expect(codeOf(() => verifyInsideCheckout(p, 'o'))).toMatch(/^PATH_ESCAPES_CHECKOUT/);
  });

  it.each([
    '.gitignore',
    'mlx/.github/workflows/x.yml',
    '.git-blame-ignore-revs',
    'a/git~2/x',
    'a/.gitx',
    'git/x',
    '.g/x',
  ])('keeps %j', (p) => {
    expect(verifyInsideCheckout(p, 'o')).toBe(p);
  });

  it('says the path names .git', () => {
    expect(codeOf(() => verifyInsideCheckout('.Git/config', 'patches/0001.patch'))).toContain('.git');
  });

  it('isDotGit is the component test', () => {
    expect(['.git', '.GIT', '.git.', '.git ', 'git~1', 'GIT~1 .', '.git::$DATA'].every(isDotGit)).toBe(true);
    expect(['.gitignore', '.git-x', 'git', 'git~10', '.gi'].some(isDotGit)).toBe(false);
  });
});

describe('a patch that renames from or to .git', () => {
  it('is refused for the old path too', () => {
    const patch = 'diff --git a/.GIT/config b/x\nsimilarity index 100%\nrename from .GIT/config\nrename to x\n';
    expect(codeOf(() => parsePatchFiles(patch, 'p'))).toMatch(/^PATH_ESCAPES_CHECKOUT/);
  });
});

describe('a patch that makes a symbolic link or a submodule', () => {
  it.each([
    [
      'a new link',
      'diff --git a/l b/l\nnew file mode 120000\nindex 0000000..1234567\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc\n\\ No newline at end of file\n',
    ],
    ['a file made a link', 'diff --git a/l b/l\nold mode 100644\nnew mode 120000\n'],
    ['a link changed', 'diff --git a/l b/l\nindex 1234567..89abcde 120000\n--- a/l\n+++ b/l\n@@ -1 +1 @@\n-x\n+/etc\n'],
    [
      'a submodule',
      'diff --git a/m b/m\nnew file mode 160000\nindex 0000000..1234567\n--- /dev/null\n+++ b/m\n@@ -0,0 +1 @@\n+Subproject commit 1234567890123456789012345678901234567890\n',
    ],
  ])('%s is refused (exit 7), naming the file', (_what, patch) => {
    const said = codeOf(() => parsePatchFiles(patch, 'patches/0001-x.patch'));
    expect(said).toMatch(/^SERIES_INVALID/);
    expect(said).toContain('patches/0001-x.patch');
  });
});

describe('decodeUtf8', () => {
  const bytes = (...b: number[]) => Uint8Array.from(b);
  it('gives UTF-8 text as it is, a byte-order mark kept', () => {
    expect(decodeUtf8(Buffer.from('\uFEFFa é € 𝄞\n'))).toEqual({ text: '\uFEFFa é € 𝄞\n' });
  });
  it.each([
    ['Latin-1 é', [0x61, 0x0a, 0x62, 0xe9, 0x0a], 3, 2],
    ['a lone continuation byte', [0x80], 0, 1],
    ['an overlong slash', [0x41, 0xc0, 0xaf], 1, 1],
    ['a surrogate', [0x41, 0x42, 0xed, 0xa0, 0x80], 2, 1],
    ['a truncated sequence at the end', [0x61, 0xe2, 0x82], 1, 1],
    ['a sequence cut by ASCII', [0xe2, 0x41, 0x82], 0, 1],
    ['beyond U+10FFFF', [0x0a, 0x0a, 0xf4, 0x90, 0x80, 0x80], 2, 3],
    ['0xff', [0x61, 0x62, 0x63, 0xff], 3, 1],
  ])('%s: the offset of the first bad byte and its line', (_what, input, offset, line) => {
    expect(decodeUtf8(bytes(...input))).toEqual({ offset, line });
  });
});
