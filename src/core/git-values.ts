import { UserError } from './errors.js';

/**
 * Refuses a ref, URL or remote name given as `option` that git would read as
 * an option (`--upload-pack=<command>` runs the command): a usage error
 * before any work. No ref name, remote name or URL starts with '-'.
 */
export function verifyNotOption(
  option: string,
  value: string,
  hint = `Give ${option} a URL, a remote or a path (a folder whose name starts with "-": ./${value}).`,
): void {
  if (!value.startsWith('-')) return;
  throw new UserError('USAGE', `${option} ${value}: a value that starts with "-" would reach git as an option.`, {
    hint,
    details: { option, value },
  });
}

/**
 * Refuses a commit, branch or tag given as `option` that git would read as
 * something else: an option (a leading '-') or a refspec (`+src:dst` makes a
 * fetch write the ref `dst`). No ref name holds ':' or starts with '+'.
 */
export function verifyRevisionOption(option: string, value: string): void {
  const hint = `Give ${option} a commit id, a branch or a tag (no leading '-' or '+', no ':', no spaces).`;
  verifyNotOption(option, value, hint);
  // eslint-disable-next-line no-control-regex
  if (!value.startsWith('+') && !/[:\x00-\x20\x7f]/.test(value)) return;
  throw new UserError(
    'USAGE',
    `${option} ${value} is no commit, branch or tag: git would read it as a refspec (+src:dst).`,
    {
      hint,
      details: { option, value },
    },
  );
}

/**
 * Why `name` is not a branch name, or null when it is one: the rules of
 * `git check-ref-format --branch` for refs/heads/<name>, and the names git
 * would read as something other than a branch here: `HEAD`, a full `refs/...`
 * name, a name that starts with '-' (an option) and `@{...}` forms.
 */
export function branchNameProblem(name: string): string | null {
  if (name === '') return 'it is empty';
  if (name.startsWith('-')) return 'it starts with "-" (git would read it as an option)';
  if (name === 'HEAD' || name === '@') return `"${name}" names the current commit, not a branch`;
  if (name.startsWith('refs/')) return 'it is a full ref name; give the branch name only (without refs/heads/)';
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name)) return 'it holds a space, a control character or one of ~ ^ : ? * [ \\';
  if (name.includes('..')) return 'it holds ".."';
  if (name.includes('@{')) return 'it holds "@{"';
  if (name.startsWith('/') || name.endsWith('/') || name.includes('//')) return 'it has an empty part between "/"';
  if (name.endsWith('.')) return 'it ends with "."';
  for (const part of name.split('/')) {
    if (part.startsWith('.')) return `its part "${part}" starts with "."`;
    if (part.endsWith('.lock')) return `its part "${part}" ends with ".lock"`;
  }
  return null;
}

/** Refuses a branch named on the command line as `option` that is not a branch name (a usage error). */
export function verifyBranchOption(option: string, name: string): void {
  const problem = branchNameProblem(name);
  if (problem === null) return;
  throw new UserError('USAGE', `${option} ${name} is not a valid branch name: ${problem}.`, {
    hint: `For example ${option} my-change (letters, digits, ".", "_", "-" and "/").`,
    details: { option, value: name },
  });
}
