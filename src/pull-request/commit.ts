import path from 'node:path';

import type { Git } from '../adapters/git.js';
import { UserError } from '../core/errors.js';
import { commitSubject, type CommitContent } from './fork-refs.js';
import { COMMIT_MESSAGE_FILE, findPlaceholders, hasOwnWords } from '../readiness/policy.js';
import { readPrText } from '../readiness/policy-files.js';
import type { Context } from '../series/context.js';

/** The pull request's commit: the user's message and identity on the applied tree. */
export interface UserCommit {
  commit: string;
  content: CommitContent;
  subject: string;
  author: string;
  committer: string;
}

const WRITE_IT =
  'Write it in your own words (pr/README.md says how). MLX forbids tools writing commit messages (AGENTS.md), so mlx-storage-pr never fills it in.';

/** pr/commit-message.txt, refused while it is missing, holds a placeholder or has no words of the user's own. */
export async function readCommitMessage(projectRoot: string): Promise<{ file: string; text: string }> {
  const file = path.join(projectRoot, COMMIT_MESSAGE_FILE);
  const text = await readPrText(file, COMMIT_MESSAGE_FILE);
  if (text === null)
    throw new UserError('PR_TEXT_INCOMPLETE', `${COMMIT_MESSAGE_FILE} is missing.`, {
      hint: `Restore the template from the mlx-storage-pr package (pr/commit-message.txt). ${WRITE_IT}`,
      details: { file: COMMIT_MESSAGE_FILE, placeholders: [] },
    });
  const placeholders = findPlaceholders([{ path: COMMIT_MESSAGE_FILE, text }]);
  if (placeholders.length > 0)
    throw new UserError(
      'PR_TEXT_INCOMPLETE',
      `${COMMIT_MESSAGE_FILE} still has placeholders:\n${placeholders.map((p) => `  ${p.path}:${p.line}: ${p.text}`).join('\n')}`,
      { hint: `Replace each with your own words. ${WRITE_IT}`, details: { file: COMMIT_MESSAGE_FILE, placeholders } },
    );
  if (!hasOwnWords(text) || commitSubject(text) === '')
    throw new UserError('PR_TEXT_INCOMPLETE', `${COMMIT_MESSAGE_FILE} has no text of your own yet.`, {
      hint: WRITE_IT,
      details: { file: COMMIT_MESSAGE_FILE, placeholders: [] },
    });
  return { file, text };
}

/** What the commit needs from the user, checked before anything runs: the message and the identity. */
export interface CommitInputs {
  messageFile: string;
  subject: string;
  author: string;
  committer: string;
}

/**
 * Refuses, before anything is built or pushed, a commit message that is
 * missing or unfinished and a missing identity: author and committer come
 * from the GIT_AUTHOR_ and GIT_COMMITTER_ variables or git's user.name and
 * user.email, never from a guess.
 */
export async function prepareUserCommit(ctx: Context, git: Git): Promise<CommitInputs> {
  const message = await readCommitMessage(ctx.projectRoot);
  const author = await git.identity('author');
  const committer = await git.identity('committer');
  if ('missing' in author || 'missing' in committer) {
    const role = 'missing' in author ? 'author' : 'committer';
    const said = 'missing' in author ? author.missing : 'missing' in committer ? committer.missing : '';
    throw new UserError('IDENTITY_MISSING', `git has no ${role} identity for the commit: ${said}`, {
      hint:
        'Set your name and email: `git config --global user.name "Your Name"` and `git config --global user.email you@example.com`, ' +
        'or set GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, GIT_COMMITTER_NAME and GIT_COMMITTER_EMAIL (as a CI job does).',
      details: { role },
    });
  }
  verifyIdentity('author', author.ident, ctx.env);
  verifyIdentity('committer', committer.ident, ctx.env);
  return {
    messageFile: message.file,
    subject: commitSubject(message.text),
    author: author.ident,
    committer: committer.ident,
  };
}

/** Refuses `Name <email>` with an empty name or e-mail (an unset CI variable gives `Ann Dev <>`). */
function verifyIdentity(role: 'author' | 'committer', ident: string, env: Context['env']): void {
  const parsed = /^(.*?)\s*<(.*)>$/.exec(ident);
  const name = parsed?.[1]?.trim() ?? '';
  const email = parsed?.[2]?.trim() ?? '';
  if (name !== '' && email !== '') return;
  const field = name === '' ? 'name' : 'email';
  const variable = `GIT_${role.toUpperCase()}_${field.toUpperCase()}`;
  const config = `user.${field}`;
  throw new UserError(
    'IDENTITY_MISSING',
    `The ${role} identity of the commit has an empty ${field === 'name' ? 'name' : 'e-mail'} (${ident}); nothing was pushed.`,
    {
      hint: `Set ${variable} to your ${field === 'name' ? 'name' : 'e-mail'}${env[variable] === '' ? ' (it is set, but empty)' : ''}, or unset it and set git's ${config} (\`git config --global ${config} ...\`).`,
      details: { role },
    },
  );
}

/**
 * Makes the commit the pull request carries: parent the pinned commit, tree
 * the applied tree, message pr/commit-message.txt exactly as written, author
 * and committer the user. Never apply's own commit, whose identity and date
 * are the tool's. Writes only a commit object; no ref moves.
 */
export async function makeUserCommit(
  git: Git,
  inputs: CommitInputs,
  tree: string,
  parent: string,
): Promise<UserCommit> {
  const commit = await git.commitTreeAsUser(tree, parent, inputs.messageFile);
  return {
    commit,
    content: await git.commitContent(commit),
    subject: inputs.subject,
    author: inputs.author,
    committer: inputs.committer,
  };
}
