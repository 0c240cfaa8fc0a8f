import path from 'node:path';

import { buildDummy, findSphinx, type Sphinx } from '../adapters/sphinx.js';
import type { ReportItem } from '../core/report-items.js';
import {
  docsReportItem,
  docsRoot,
  isDocsFile,
  LABEL_LOOKAHEAD,
  LABEL_PATTERN,
  labelsPage,
  LABELS_PAGE,
  locateWarnings,
  newWarnings,
  parseSphinxWarnings,
  patchedLineOrigins,
  relocateLabelWarnings,
  rstLabels,
  sphinxConfig,
  templateLineOrigins,
  type DocsFile,
  type DocsReport,
  type LineOrigin,
  type RstLabel,
} from './docs-pages.js';
import type { Git } from '../adapters/git.js';
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

/** The `:ref:` labels of the other pages, as the pinned commit has them and as the series leaves them. */
interface OtherLabels {
  pinned: RstLabel[];
  patched: RstLabel[];
}

/**
 * Builds every `.rst` page the series adds or changes with Sphinx's dummy
 * builder, once as the series leaves it and once as MLX has it at the pinned
 * commit, and reports the warnings that are new, each with the line of
 * templates/ or patches/ it comes from. Pages are built alone with a minimal
 * configuration (see `sphinxConfig`) and a generated page holding the
 * labels of the other pages (see `labelsPage`), so a `:ref:` to another
 * page resolves and only a genuinely new warning counts.
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
  const labels = await otherPagesLabels(git, pinnedCommit, pages, confFiles);
  const files = await Promise.all(
    pages.map((page, i) => buildPage(sphinx, page, confFiles, labels[i] as OtherLabels, { env, ctx })),
  );
  return { sphinx, reason: null, files };
}

/**
 * For each page, the labels the other pages of its docs tree define: at the
 * pinned commit (one `git grep` per docs tree), and as the series leaves
 * them (the pages it adds or changes read from their new text).
 */
async function otherPagesLabels(
  git: Git,
  commit: string,
  pages: readonly Page[],
  confFiles: readonly string[],
): Promise<OtherLabels[]> {
  const roots = [...new Set(pages.map((p) => docsRoot(p.path, confFiles)))];
  const pinnedByRoot = new Map<string, RstLabel[]>();
  await Promise.all(
    roots.map(async (root) => {
      const lines = await git.grepLines(commit, LABEL_PATTERN, [root ? `${root}/*.rst` : '*.rst'], LABEL_LOOKAHEAD);
      const byFile = new Map<string, Array<{ line: number; text: string }>>();
      for (const l of lines) byFile.set(l.path, [...(byFile.get(l.path) ?? []), l]);
      pinnedByRoot.set(
        root,
        [...byFile].flatMap(([file, fileLines]) => rstLabels(file, fileLines)),
      );
    }),
  );
  const seriesPaths = new Set(pages.map((p) => p.path));
  const seriesLabels = pages.flatMap((p) =>
    rstLabels(
      p.path,
      toLines(p.patched).lines.map((text, i) => ({ line: i + 1, text })),
    ),
  );
  return pages.map((page) => {
    const root = docsRoot(page.path, confFiles);
    const inTree = (file: string) => root === '' || file.startsWith(`${root}/`);
    const pinned = (pinnedByRoot.get(root) ?? []).filter((l) => l.path !== page.path);
    return {
      pinned,
      patched: [
        ...pinned.filter((l) => !seriesPaths.has(l.path)),
        ...seriesLabels.filter((l) => l.path !== page.path && inTree(l.path)),
      ],
    };
  });
}

async function buildPage(
  sphinx: Sphinx,
  page: Page,
  confFiles: readonly string[],
  labels: OtherLabels,
  { env, ctx }: { env: Env; ctx: Context },
): Promise<DocsFile> {
  const root = docsRoot(page.path, confFiles);
  const rel = root ? page.path.slice(root.length + 1) : page.path;
  const conf = sphinxConfig(rel.replace(/\.rst$/, ''));
  const labelsPath = root ? `${root}/${LABELS_PAGE}.rst` : `${LABELS_PAGE}.rst`;
  const build = async (content: string, otherLabels: readonly RstLabel[]) => {
    const stub = labelsPage(otherLabels);
    const files = [
      { path: `${LABELS_PAGE}.rst`, content: stub.content },
      { path: rel, content },
    ];
    const run = await buildDummy(sphinx, { conf, files }, { env, log: ctx.log });
    const failure =
      run.exitCode === 0
        ? null
        : `sphinx-build exited with ${run.exitCode ?? 'no exit code (it did not start)'}: ${run.tail}`;
    return {
      failure,
      warnings: relocateLabelWarnings(parseSphinxWarnings(run.warnings, run.srcdir, root), labelsPath, stub),
    };
  };
  const [patched, baseline] = await Promise.all([
    build(page.patched, labels.patched),
    page.pinned === null ? null : build(page.pinned, labels.pinned),
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
