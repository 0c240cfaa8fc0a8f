import type { ApplyPlan } from '../core/plan.js';
import { applySeries, type ApplyData, type ApplySeriesOptions } from '../ops/apply.js';
import { loadContext, type CommandResult, type GlobalOptions } from './context.js';

export type { ApplyData, ApplyStatus } from '../ops/apply.js';

export interface ApplyOptions extends GlobalOptions, ApplySeriesOptions {}

export async function apply(options: ApplyOptions): Promise<CommandResult<ApplyData>> {
  const ctx = await loadContext(options);
  const data = await applySeries(ctx, options);
  const { plan } = await ctx.project();
  return { data, lines: applyLines(data, plan, ctx.source.display, ctx.config.upstream.version) };
}

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
