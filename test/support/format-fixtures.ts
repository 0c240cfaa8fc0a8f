import { makeProject, makeUpstream } from './repos.js';

/** A real git repository made from fixtures/format/upstream (a .clang-format that formats as MLX's does, and the pre-commit pins), with one commit. */
export function makeFormatUpstream(): { dir: string; sha: string } {
  return makeUpstream('format/upstream');
}

/** A copy of fixtures/format/project (mis-formatted templates and patches) pinned to `sha`. */
export function makeFormatProject(sha: string): string {
  return makeProject(sha, 'format/project');
}
