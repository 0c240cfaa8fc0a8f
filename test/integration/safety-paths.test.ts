/**
 * Paths a case-insensitive or trailing-dot-insensitive file system takes for
 * .git: `apply` refuses them as a bad series (exit 7) before it fetches or
 * touches the checkout (issue 37).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { makeExportProject, makeExportUpstream } from '../support/export-fixtures.js';
import { runCli, snapshot } from '../support/repos.js';

/** A patch that creates `file`. */
const creating = (file: string) =>
  [
    `diff --git a/${file} b/${file}`,
    'new file mode 100644',
    '--- /dev/null',
    `+++ b/${file}`,
    '@@ -0,0 +1 @@',
    '+x',
    '',
  ].join('\n');

function withPatch(project: string, file: string): void {
  writeFileSync(path.join(project, 'patches', '0004-dotgit.patch'), creating(file));
  const series = path.join(project, 'patches', 'series');
  writeFileSync(series, `${readFileSync(series, 'utf8')}0004-dotgit.patch\n`);
}

describe('apply and a series that writes into .git under another spelling', () => {
  it.each(['.GIT/config', '.Git/config', '.git./x', 'mlx/.git /x', 'GIT~1/config', '.git::$INDEX_ALLOCATION/x'])(
    'a cold apply of a patch creating %j exits 7 and makes no checkout',
    async (file) => {
      const upstream = makeExportUpstream();
      const project = makeExportProject(upstream.sha);
      withPatch(project, file);
      const result = await runCli(['apply', '--json', '--mlx-repo', upstream.dir], { cwd: project, env: {} });
      expect(result.code, result.stdout).toBe(7);
      expect(result.json.error.code).toBe('PATH_ESCAPES_CHECKOUT');
      expect(result.json.error.message).toContain('patches/0004-dotgit.patch');
      expect(existsSync(path.join(project, '.work', 'mlx'))).toBe(false);
    },
  );

  it('an apply onto an existing checkout changes nothing; a template at .Git/hooks is refused the same way', async () => {
    const upstream = makeExportUpstream();
    const project = makeExportProject(upstream.sha);
    const cli = (...args: string[]) =>
      runCli([...args, '--json', '--mlx-repo', upstream.dir], { cwd: project, env: {} });
    expect((await cli('apply')).code).toBe(0);
    const checkout = path.join(project, '.work', 'mlx');
    const before = snapshot(checkout);
    withPatch(project, 'mlx/.GIT/hooks/post-checkout');
    const patched = await cli('apply');
    expect(patched.code, patched.stdout).toBe(7);
    expect(patched.json.error.code).toBe('PATH_ESCAPES_CHECKOUT');
    expect(snapshot(checkout)).toBe(before);

    writeFileSync(
      path.join(project, 'patches', 'series'),
      readFileSync(path.join(project, 'patches', 'series'), 'utf8').replace('0004-dotgit.patch\n', ''),
    );
    mkdirSync(path.join(project, 'templates', '.Git', 'hooks'), { recursive: true });
    writeFileSync(path.join(project, 'templates', '.Git', 'hooks', 'post-checkout'), '#!/bin/sh\n');
    const templated = await cli('apply');
    expect(templated.code, templated.stdout).toBe(7);
    expect(templated.json.error.code).toBe('PATH_ESCAPES_CHECKOUT');
    expect(templated.json.error.message).toContain('templates/.Git/hooks/post-checkout');
    expect(snapshot(checkout)).toBe(before);
  });
});
