import { cpSync } from 'node:fs';
import path from 'node:path';

import { editConfig, FIXTURES, git, tempDir } from './repos.js';

/** A real git repository made from fixtures/format/upstream (MLX's .clang-format and pre-commit pins), with one commit. */
export function makeFormatUpstream(): { dir: string; sha: string } {
  const dir = tempDir('msp-fmt-upstream-');
  cpSync(path.join(FIXTURES, 'format', 'upstream'), dir, { recursive: true });
  git(dir, 'init', '--quiet', '--initial-branch=main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '--quiet', '-m', 'format fixture upstream');
  return { dir, sha: git(dir, 'rev-parse', 'HEAD').trim() };
}

/** A copy of fixtures/format/project (mis-formatted templates and patches) pinned to `sha`. */
export function makeFormatProject(sha: string): string {
  const dir = tempDir('msp-fmt-project-');
  cpSync(path.join(FIXTURES, 'format', 'project'), dir, { recursive: true });
  editConfig(dir, (config) => {
    (config['upstream'] as Record<string, unknown>)['commit'] = sha;
  });
  return dir;
}
