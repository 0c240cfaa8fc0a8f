import type { CheckoutState } from '../series/head-state.js';
import { checkoutStatus, type StatusData } from '../series/status-report.js';
import { loadContext } from '../series/context.js';
import { environmentSettings, METAL_CPP_ENV, OFFLINE_ENV } from './options.js';
import { defineCommand } from './spec.js';

export const statusCommand = defineCommand({
  name: 'status',
  describe: 'Show the pinned and actual commits, what is applied, what differs and uncommitted files',
  builder: (y) => y.example('$0 status --json', 'machine-readable state'),
  run: async (o) => {
    const settings = environmentSettings(o.env);
    const data = { ...(await checkoutStatus(await loadContext(o))), settings };
    if (data.state === 'no-checkout')
      return {
        data,
        lines: [`No checkout in ${data.checkout}. Run \`mlx-storage-pr apply\`.`, ...settingLines(settings)],
      };
    return {
      data,
      lines: [...statusLines(data, o.workdir ? ` --workdir ${o.workdir}` : ''), ...settingLines(settings)],
    };
  },
});

const stateText: Record<CheckoutState, string> = {
  'no-checkout': 'no checkout',
  'no-files':
    'not applied: the pinned commit is fetched but no files are checked out yet (an interrupted first apply): run `mlx-storage-pr apply`',
  'not-applied': 'not applied (clean pinned commit)',
  applied: 'applied and current',
  outdated: 'applied, but templates/ or patches/ changed since: run `mlx-storage-pr apply`',
  'foreign-head': 'HEAD is not an applied series: run `mlx-storage-pr reset` (saves your work)',
  'missing-pinned-commit': 'the checkout lacks the pinned commit: run `mlx-storage-pr apply`',
  unmerged: 'unresolved merge conflicts in the checkout: resolve each file (then `git add` it) or `git reset --merge`',
  unknown: 'could not be read',
};

function statusLines(data: StatusData, workdirFlag: string): string[] {
  const lines = [
    `checkout: ${data.checkout}`,
    `pinned:   ${data.pinned} (MLX ${data.pinnedVersion})`,
    `source:   ${data.source.location}${data.source.origin === 'apply' ? ' (remembered from apply)' : ''}`,
    `head:     ${data.head ?? '(none)'}${data.branch ? ` on ${data.branch}` : ''}`,
    `base:     ${data.base ?? '(none)'}${data.base !== null && data.base !== data.pinned ? '  <- not the pinned commit' : ''}`,
    `series:   ${stateText[data.state]}`,
  ];
  if (data.differs.length) lines.push('differs from the rendered series:', ...data.differs.map((p) => `  ${p}`));
  if (data.unmerged.length) lines.push('unmerged:', ...data.unmerged.map((p) => `  ${p}`));
  if (data.dirty.length) lines.push('uncommitted changes:', ...data.dirty.map((e) => `  ${e.code} ${e.path}`));
  if (data.conflicts.length)
    lines.push('conflicts:', ...data.conflicts.map((c) => `  ${c.patch}: ${c.file}: ${c.reason}`));
  if (data.bump) {
    const b = data.bump;
    lines.push(
      `bump:     in progress from ${b.from.commit.slice(0, 12)} (MLX ${b.from.version}) to ${b.to.commit.slice(0, 12)} (MLX ${b.to.version}, ${b.ref})`,
      `          resolve the conflicts in ${b.worktree}, run \`mlx-storage-pr export${workdirFlag}\`, then \`mlx-storage-pr bump --continue${workdirFlag}\` (or \`bump --abort\`)`,
      ...b.conflicts.map((c) => `          patches/${c.patch}: ${c.file}: ${c.count} conflict(s)`),
    );
  }
  return lines;
}

/** The settings the environment makes for every command, when it makes any. */
function settingLines(settings: ReturnType<typeof environmentSettings>): string[] {
  return [
    ...(settings.offline ? [`offline:  on (${OFFLINE_ENV})`] : []),
    ...(settings.metalCpp === null ? [] : [`metal-cpp: ${settings.metalCpp} (${METAL_CPP_ENV})`]),
  ];
}
