#!/usr/bin/env node
// Times the docs check of `verify` (Sphinx's dummy builder on every .rst page the series
// adds or changes, patched and pinned) on a real MLX repository, after one `apply`.
// Needs the built tool (npm run build) and sphinx-build.
// Usage: node scripts/bench-docs.mjs <mlx repo> [runs]   (or MLX_REPO=<repo>)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'mlx-storage-pr.js');
const repo = process.argv[2] ?? process.env.MLX_REPO;
const runs = Number(process.argv[3] ?? 5);
if (!repo) {
  console.error('usage: node scripts/bench-docs.mjs <mlx repo> [runs]  (or set MLX_REPO)');
  process.exit(2);
}

const { loadContext } = await import(path.join(root, 'dist', 'series', 'context.js'));
const { buildDocsReport } = await import(path.join(root, 'dist', 'readiness', 'docs-build.js'));
const { createLogger } = await import(path.join(root, 'dist', 'adapters', 'log.js'));

const workdir = mkdtempSync(path.join(os.tmpdir(), 'msp-bench-docs-'));
try {
  const applied = spawnSync(process.execPath, [bin, 'apply', '--mlx-repo', repo, '--workdir', workdir], {
    cwd: root,
    encoding: 'utf8',
  });
  if (applied.status !== 0) throw new Error(`apply failed (${applied.status}):\n${applied.stderr}`);
  const env = { PATH: process.env.PATH, SPHINXBUILD: process.env.SPHINXBUILD };
  const times = [];
  let report;
  for (let i = 0; i < runs; i++) {
    const ctx = await loadContext({
      cwd: root,
      env,
      platform: process.platform,
      workdir,
      logger: createLogger({ stream: new PassThrough() }),
    });
    const start = process.hrtime.bigint();
    report = await buildDocsReport(ctx, env);
    times.push(Number(process.hrtime.bigint() - start) / 1e9);
  }
  if (report.sphinx === null) throw new Error(`Sphinx did not run: ${report.reason}`);
  const pages = report.files
    .map((f) => `${f.path} (${f.baseline ?? '-'} pinned, ${f.patched} patched, ${f.newWarnings.length} new)`)
    .join(', ');
  const sorted = [...times].sort((a, b) => a - b);
  console.log(
    `docs check on ${repo}, ${runs} runs, ${os.cpus().length} CPUs, load ${os.loadavg()[0].toFixed(1)}, sphinx-build ${report.sphinx.version}`,
  );
  console.log(`pages: ${pages}`);
  console.log(
    `docs check             median ${sorted[Math.floor(runs / 2)].toFixed(3)} s  min ${sorted[0].toFixed(3)} s  max ${sorted[runs - 1].toFixed(3)} s  target <= 3 s`,
  );
} finally {
  rmSync(workdir, { recursive: true, force: true });
}
