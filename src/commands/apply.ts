import type { ApplyPlan } from '../series/plan.js';
import { applySeries, type ApplyData } from '../series/apply-series.js';
import { loadContext } from '../series/context.js';
import { defineCommand } from './spec.js';

export const applyCommand = defineCommand({
  name: 'apply',
  describe: 'Fetch MLX at the pinned commit and apply templates/ and patches/',
  builder: (y) =>
    y
      .option('dry-run', { type: 'boolean', default: false, describe: 'Show what would change; write nothing' })
      .option('force', {
        type: 'boolean',
        default: false,
        describe: 'Save uncommitted edits (stash + backup ref) and apply anyway',
      })
      .option('3way', {
        type: 'boolean',
        default: false,
        describe: 'Fall back to a three-way merge when a patch does not apply exactly',
      })
      .example('$0 apply --mlx-repo ~/src/mlx', 'apply using a local MLX clone, no network')
      .example('$0 apply --dry-run --json', 'list what would change as JSON'),
  run: async (o) => {
    const ctx = await loadContext(o);
    const data = await applySeries(ctx, { dryRun: o.dryRun, force: o.force, threeWay: o['3way'] });
    const { plan } = await ctx.project();
    return { data, lines: applyLines(data, plan, ctx.source.display, ctx.config.upstream.version) };
  },
});

function applyLines(data: ApplyData, plan: ApplyPlan, source: string, version: string): string[] {
  switch (data.status) {
    case 'would-clone':
      return [
        `[dry run] Would fetch MLX ${data.pinned.slice(0, 12)} from ${source} into ${data.checkout}`,
        ...planLines(plan),
      ];
    case 'already-applied':
      return [
        'Already applied: the checkout matches templates/ and patches/. Nothing to do.',
        ...(data.localEdits.length ? [`Local edits in the checkout (kept): ${data.localEdits.join(', ')}`] : []),
      ];
    case 'would-apply':
      return [
        `[dry run] Would update ${data.changed.length} file(s) in ${data.checkout}:`,
        ...data.changed.map((p) => `  ${p}`),
      ];
    case 'applied':
      return [
        `Applied ${plan.files.length} template(s) and ${plan.patches.length} patch(es) onto MLX ${version} (${data.pinned.slice(0, 12)}) in ${data.checkout}`,
        ...data.changed.map((p) => `  ${p}`),
      ];
  }
}

function planLines(plan: ApplyPlan): string[] {
  return [
    ...plan.files.map((f) => `  new   ${f.path}`),
    ...plan.patches.map((p) => `  patch ${p.name} (${p.files.map((f) => f.path).join(', ')})`),
  ];
}
