#!/usr/bin/env node
// Times `apply` on a real MLX repository, Node start-up included:
// cold (new workdir: fetch, checkout, apply) and no-op (second run).
// Usage: node scripts/bench-apply.mjs <mlx repo> [runs]   (or MLX_REPO=<repo>)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'mlx-storage-pr.js');
const repo = process.argv[2] ?? process.env.MLX_REPO;
const runs = Number(process.argv[3] ?? 5);
if (!repo) {
  console.error('usage: node scripts/bench-apply.mjs <mlx repo> [runs]  (or set MLX_REPO)');
  process.exit(2);
}

function timeApply(workdir) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, [bin, 'apply', '--mlx-repo', repo, '--workdir', workdir, '--json'], { cwd: root, encoding: 'utf8' });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (result.status !== 0) throw new Error(`apply failed (${result.status}):\n${result.stderr}`);
  return { seconds, status: JSON.parse(result.stdout).status };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const cold = [];
const noop = [];
for (let i = 0; i < runs; i++) {
  const workdir = mkdtempSync(path.join(os.tmpdir(), 'msp-bench-'));
  try {
    const first = timeApply(workdir);
    if (first.status !== 'applied') throw new Error(`cold run reported ${first.status}`);
    cold.push(first.seconds);
    const second = timeApply(workdir);
    if (second.status !== 'already-applied') throw new Error(`second run reported ${second.status}`);
    noop.push(second.seconds);
  } finally {
    rmSync(workdir, { recursive: true, force: true });
  }
}
const row = (name, xs, target) => `${name.padEnd(22)} median ${median(xs).toFixed(3)} s  min ${Math.min(...xs).toFixed(3)} s  max ${Math.max(...xs).toFixed(3)} s  target <= ${target} s`;
console.log(`apply on ${repo}, ${runs} runs, ${os.cpus().length} CPUs`);
console.log(row('cold (new workdir)', cold, 3));
console.log(row('re-apply (no-op)', noop, 0.5));
