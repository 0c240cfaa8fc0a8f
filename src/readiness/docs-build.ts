import path from 'node:path';

import { buildDummy, findSphinx, type Sphinx } from '../adapters/sphinx.js';
import type { ReportItem } from '../core/report-items.js';
import {
  docsReportItem,
  docsRoot,
  isDocsFile,
  locateWarnings,
  newWarnings,
  parseSphinxWarnings,
  patchedLineOrigins,
  sphinxConfig,
  templateLineOrigins,
  type DocsFile,
  type DocsReport,
  type LineOrigin,
} from './docs-pages.js';
import { isUserError } from '../core/errors.js';
import { fromLines, toLines } from '../core/patch.js';
import { patchedPaths, planSteps } from '../series/plan.js';
import { contentsAt, requirePinnedCheckout } from '../series/checkout.js';
import type { Context } from '../series/context.js';

type Env = Readonly<Record<string, string | undefined>>;

/** One page as the series leaves it, its pinned original, and where each of its lines comes from. */
interface Page {
  path: string;
  origins: string[];
  patched: string;
  pinned: string | null;
  lineOrigins: LineOrigin[];
}

/**
 * Builds every `.rst` page the series adds or changes with Sphinx's dummy
 * builder, once as the series leaves it and once as MLX has it at the pinned
 * commit, and reports the warnings that are new, each with the line of
 * templates/ or patches/ it comes from. Pages are built alone with a minimal
 * configuration (see `sphinxConfig`), so warnings that come from that (a
 * label defined on another page) are in both builds and cancel out.
 */
export async function buildDocsReport(ctx: Context, env: Env): Promise<DocsReport> {
  const { inputs, plan } = await ctx.project();
  const added = plan.files.filter((f) => isDocsFile(f.path));
  const changed = [...new Set(plan.patches.flatMap((p) => p.files.map((f) => f.path)).filter(isDocsFile))];
  if (added.length === 0 && changed.length === 0) return { sphinx: null, reason: null, files: [] };

  // Python starts slowly: look for Sphinx while git reads the pinned files.
  const lookupPromise = findSphinx(env, ctx.log);
  // Not a fallback: the promise is awaited below; this only keeps an early rejection from counting as unhandled meanwhile.
  lookupPromise.catch(() => undefined);
  const pinnedCommit = ctx.config.upstream.commit;
  const git = await requirePinnedCheckout(ctx, { hint: ': the docs check reads the pinned pages from the checkout.' });
  const pinnedContent = await contentsAt(git, pinnedCommit, patchedPaths(plan));
  const steps = planSteps(plan, inputs, pinnedContent);

  const pages: Page[] = added.map((f) => ({
    path: f.path,
    origins: [`templates/${f.template}`],
    patched: f.content,
    pinned: null,
    lineOrigins: templateLineOrigins(f.template, toLines(f.content).lines.length),
  }));
  for (const file of changed) {
    const fileSteps = steps.filter((s) => s.path === file);
    const last = fileSteps[fileSteps.length - 1];
    if (last === undefined) continue;
    const pinned = pinnedContent.get(file) ?? null;
    pages.push({
      path: file,
      origins: [...new Set(fileSteps.map((s) => `patches/${s.patch}`))],
      patched: fromLines({ lines: last.post.rendered, eofNewline: last.post.eofNewline }),
      pinned,
      lineOrigins: patchedLineOrigins(file, toLines(pinned ?? '').lines.length, fileSteps),
    });
  }

  pages.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const lookup = await lookupPromise;
  const sphinx = lookup.tool;
  if (sphinx === null) {
    return {
      sphinx: null,
      reason: lookup.reason,
      files: pages.map((p) => ({
        path: p.path,
        origins: p.origins,
        baseline: null,
        patched: null,
        newWarnings: [],
        failure: null,
      })),
    };
  }
  const confFiles = (await git.raw(['ls-tree', '-r', '--name-only', pinnedCommit]))
    .split('\n')
    .filter((f) => path.posix.basename(f) === 'conf.py');
  const files = await Promise.all(pages.map((page) => buildPage(sphinx, page, confFiles, { env, ctx })));
  return { sphinx, reason: null, files };
}

async function buildPage(
  sphinx: Sphinx,
  page: Page,
  confFiles: readonly string[],
  { env, ctx }: { env: Env; ctx: Context },
): Promise<DocsFile> {
  const root = docsRoot(page.path, confFiles);
  const rel = root ? page.path.slice(root.length + 1) : page.path;
  const conf = sphinxConfig(rel.replace(/\.rst$/, ''));
  const build = async (content: string) => {
    const run = await buildDummy(sphinx, { conf, files: [{ path: rel, content }] }, { env, log: ctx.log });
    const failure =
      run.exitCode === 0
        ? null
        : `sphinx-build exited with ${run.exitCode ?? 'no exit code (it did not start)'}: ${run.tail}`;
    return { failure, warnings: parseSphinxWarnings(run.warnings, run.srcdir, root) };
  };
  const [patched, baseline] = await Promise.all([
    build(page.patched),
    page.pinned === null ? null : build(page.pinned),
  ]);
  const result = {
    path: page.path,
    origins: page.origins,
    baseline: baseline ? baseline.warnings.length : null,
    patched: patched.warnings.length,
  };
  const failure = patched.failure ?? baseline?.failure ?? null;
  if (failure !== null) return { ...result, newWarnings: [], failure };
  const fromSeries = (w: { file: string | null; line: number | null }) =>
    w.file === page.path && w.line !== null && page.lineOrigins[w.line - 1]?.kind === 'series';
  const found = newWarnings(baseline?.warnings ?? [], patched.warnings, fromSeries);
  return { ...result, newWarnings: locateWarnings(found, page.path, page.lineOrigins), failure: null };
}

/** The `docs` line of `verify`: required, and "not checked" (never "pass") without Sphinx. */
export async function docsItem(ctx: Context, env: Env): Promise<ReportItem> {
  try {
    return docsReportItem(await buildDocsReport(ctx, env));
  } catch (error) {
    if (!isUserError(error)) throw error;
    return {
      id: 'docs',
      title: 'Docs build (Sphinx)',
      status: 'not-checked',
      detail: error.message,
      ...(error.hint ? { fix: error.hint } : {}),
      required: true,
    };
  }
}
