import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { git, onPath, REPO_ROOT, tempDir } from '../support/repos.js';

const SCRIPT = path.join(REPO_ROOT, 'scripts', 'lint-workflows.mjs');
const hasShellcheck = onPath('shellcheck');
const shellcheckReason = 'skipped: shellcheck is not installed (sudo apt-get install shellcheck)';
if (!hasShellcheck) console.warn(`lint-workflows shellcheck cases: ${shellcheckReason}`);

/**
 * Runs the linter as its own process. Asynchronously: a linter run takes
 * seconds, and a test worker blocked that long misses its own messages to
 * vitest ("Timeout calling onTaskUpdate").
 */
const lint = (
  root: string,
  options: { args?: string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number | null; out: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [SCRIPT, ...(options.args ?? []), root], {
      env: options.env ?? process.env,
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });

// Line 9 is `echo $FOO`: unquoted, shellcheck SC2086.
const WORKFLOW = `on: push
permissions:
  contents: read
jobs:
  build:
    runs-on: macos-26
    steps:
      - run: |
          echo $FOO
`;

/** A git repository holding one workflow, and .github/actionlint.yaml when `labels` is given. */
function project(labels?: string[]): string {
  const dir = tempDir('msp-lint-');
  git(dir, 'init', '--quiet');
  mkdirSync(path.join(dir, '.github', 'workflows'), { recursive: true });
  writeFileSync(path.join(dir, '.github', 'workflows', 'build.yml'), WORKFLOW);
  if (labels)
    writeFileSync(
      path.join(dir, '.github', 'actionlint.yaml'),
      `self-hosted-runner:\n  labels:\n${labels.map((l) => `    - ${l}\n`).join('')}`,
    );
  return dir;
}

describe('scripts/lint-workflows.mjs', () => {
  it('reports a runner label actionlint does not know', async () => {
    const result = await lint(project());
    expect(result.code).toBe(1);
    expect(result.out).toContain('.github/workflows/build.yml:6:14: label "macos-26" is unknown');
  });

  it('reads the labels .github/actionlint.yaml declares', async () => {
    const result = await lint(project(['macos-26']));
    expect(result.out).not.toContain('label "macos-26" is unknown');
    expect(result.out).toMatch(/^0 actionlint and \d+ shellcheck finding\(s\)|^ok: /m);
  });

  it.skipIf(!hasShellcheck)(
    hasShellcheck
      ? 'reports shellcheck findings at their line in the workflow'
      : `reports shellcheck findings (${shellcheckReason})`,
    async () => {
      const result = await lint(project(['macos-26']));
      expect(result.code).toBe(1);
      expect(result.out).toContain(
        '.github/workflows/build.yml:9:6: shellcheck SC2086 (info) in build step 1: Double quote to prevent globbing and word splitting.',
      );
    },
  );

  it.skipIf(!hasShellcheck)(
    hasShellcheck
      ? "reports shellcheck findings in the workflows' helper scripts (.github/scripts/*.sh)"
      : `reports shellcheck findings in .github/scripts (${shellcheckReason})`,
    async () => {
      const dir = project(['macos-26']);
      mkdirSync(path.join(dir, '.github', 'scripts'));
      writeFileSync(path.join(dir, '.github', 'scripts', 'helper.sh'), '#!/usr/bin/env bash\necho $FOO\n');
      const result = await lint(dir);
      expect(result.code).toBe(1);
      expect(result.out).toContain('.github/scripts/helper.sh:2:6: shellcheck SC2086 (info)');
    },
  );

  it('fails with --require-shellcheck when shellcheck is missing, and says what was not checked', async () => {
    const env = { PATH: '/nonexistent' };
    const lenient = await lint(project(['macos-26']), { env });
    expect(lenient.code).toBe(0);
    expect(lenient.out).toContain('shellcheck not found: run: blocks not checked');
    const strict = await lint(project(['macos-26']), { env, args: ['--require-shellcheck'] });
    expect(strict.code).toBe(1);
  });

  it("passes on this repository's workflows", async () => {
    const result = await lint(REPO_ROOT, hasShellcheck ? { args: ['--require-shellcheck'] } : {});
    expect(result.out).toMatch(
      /^ok: .github\/workflows\/ci\.yml, .github\/workflows\/drift\.yml, .github\/workflows\/refresh-pr\.yml: actionlint 1\.7\.7/m,
    );
    expect(result.code).toBe(0);
  });
});
