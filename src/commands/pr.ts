import { UserError } from '../core/errors.js';
import { verifyDepsDir } from '../ops/offline.js';
import { refreshPullRequest, type PrData, type PrOptions } from '../ops/pr.js';
import { loadContext, type CommandResult, type GlobalOptions } from './context.js';

export type { PrData } from '../ops/pr.js';

export interface PrCommandOptions extends GlobalOptions, Omit<PrOptions, 'fork'> {
  push: boolean;
  fork?: string | undefined;
}

export async function pr(options: PrCommandOptions): Promise<CommandResult<PrData>> {
  // Every push is the user's explicit act: the flag, and the fork named.
  if (!options.push)
    throw new UserError('USAGE', 'pr pushes only when asked: add --push (and --fork <url|remote>).', {
      hint: 'For example `mlx-storage-pr pr --push --fork https://github.com/<you>/mlx.git --dry-run` shows what it would do.',
    });
  if (options.fork === undefined)
    throw new UserError(
      'USAGE',
      '--push needs --fork: the URL of your fork, a local path or a remote of the checkout.',
      {
        hint: 'For example --fork https://github.com/<you>/mlx.git. The upstream repository is never a target.',
      },
    );
  verifyDepsDir(options.cwd, options.depsDir);
  const ctx = await loadContext(options);
  const data = await refreshPullRequest(ctx, { ...options, fork: options.fork });
  return { data, lines: prLines(data) };
}

const short = (commit: string | null) => (commit === null ? 'none' : commit.slice(0, 12));

function prLines(data: PrData): string[] {
  const where = `${data.branch} on ${data.remote}`;
  const head = {
    created: `created: ${where} at ${short(data.commit)}`,
    updated: `updated: ${where}, ${short(data.previous)} -> ${short(data.commit)}`,
    unchanged: `unchanged: ${where} is at ${short(data.commit)}, with the same tree, parent and message; nothing pushed`,
    'would-create': `[dry run] would create ${where} at a new commit`,
    'would-update': `[dry run] would update ${where} from ${short(data.previous)}`,
  }[data.status];
  const lines = [head, `  ${data.subject}`, `  author ${data.author}, committer ${data.committer}`];
  if (data.checks === null) lines.push("  verify's checks: not run (--skip-checks)");
  else
    lines.push(
      `  verify's checks: ${data.checks.filter((c) => c.status === 'pass').length} passed${data.skipped.length ? `, left out (--skip): ${data.skipped.join(', ')}` : ''}`,
    );
  if (data.backup) {
    lines.push(
      `${data.status.startsWith('would') ? 'would keep' : 'kept'} the previous tip ${short(data.backup.commit)} on the fork as ${data.backup.ref}; get it back with:`,
      ...data.backup.restore.map((c) => `  ${c}`),
    );
  }
  const pull = data.pullRequest;
  if (pull) {
    const where = pull.url ?? `${pull.repository} from ${pull.head}`;
    const what = {
      created: `pull request created${pull.draft ? ' as a draft' : ''}: ${where}`,
      updated: `pull request updated (${pull.changed.join(', ')}): ${where}`,
      unchanged: `pull request unchanged: ${where}`,
      'would-create': `[dry run] would create a ${pull.draft ? 'draft ' : ''}pull request into ${pull.repository}:${pull.base} from ${pull.head}`,
      'would-update': `[dry run] would update the pull request (${pull.changed.join(', ')}): ${where}`,
    }[pull.status];
    lines.push(what);
  }
  return lines;
}
