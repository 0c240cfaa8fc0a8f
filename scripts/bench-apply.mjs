#!/usr/bin/env node
// Times `apply` on a real MLX repository, Node start-up included:
// cold (new workdir: fetch, checkout, apply) and no-op (second run), against
// a baseline of plain git doing the least a cold apply must do:
// `git init` + `git fetch --depth 1 <repo> <pinned>` + `git checkout`.
// Runs alternate (baseline, cold, no-op) so load on the machine hits all alike.
// Usage: node scripts/bench-apply.mjs <mlx repo> [runs]   (or MLX_REPO=<repo>)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
const pinned = JSON.parse(readFileSync(path.join(root, 'mlx-storage-pr.config.json'), 'utf8')).upstream.commit;
// As the tool does for a local path: file:// makes git honour --depth.
const source = /^[a-z][a-z0-9+.-]*:\/\//i.test(repo) ? repo : `file://${path.resolve(repo)}`;
const RATIO_GUARD = 1.5;

function seconds(fn) {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

function run(command, args, cwd) {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (${result.status}):\n${result.stderr}`);
  return result.stdout;
}

function timeApply(workdir) {
  let status;
  const s = seconds(() => {
    const output = run(process.execPath, [bin, 'apply', '--mlx-repo', repo, '--workdir', workdir, '--json'], root);
    status = JSON.parse(output).status;
  });
  return { seconds: s, status };
}

function timeGit(dir) {
  const checkout = path.join(dir, 'mlx');
  return seconds(() => {
    run('git', ['init', '--quiet', checkout], dir);
    run('git', ['fetch', '--quiet', '--no-tags', '--depth', '1', source, pinned], checkout);
    run('git', ['checkout', '--quiet', '--detach', pinned], checkout);
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const baseline = [];
const cold = [];
const noop = [];
for (let i = 0; i < runs; i++) {
  const gitDir = mkdtempSync(path.join(os.tmpdir(), 'msp-bench-git-'));
  const workdir = mkdtempSync(path.join(os.tmpdir(), 'msp-bench-'));
  try {
    baseline.push(timeGit(gitDir));
    const first = timeApply(workdir);
    if (first.status !== 'applied') throw new Error(`cold run reported ${first.status}`);
    cold.push(first.seconds);
    const second = timeApply(workdir);
    if (second.status !== 'already-applied') throw new Error(`second run reported ${second.status}`);
    noop.push(second.seconds);
  } finally {
    rmSync(gitDir, { recursive: true, force: true });
    rmSync(workdir, { recursive: true, force: true });
  }
}
const row = (name, xs, target) =>
  `${name.padEnd(26)} median ${median(xs).toFixed(3)} s  min ${Math.min(...xs).toFixed(3)} s  max ${Math.max(...xs).toFixed(3)} s${target ? `  target ${target}` : ''}`;
const ratio = median(cold) / median(baseline);
console.log(`apply on ${repo}, ${runs} runs each (alternating), ${os.cpus().length} CPUs`);
console.log(row('git init+fetch+checkout', baseline));
console.log(row('cold apply (new workdir)', cold, `<= ${RATIO_GUARD}x git`));
console.log(row('re-apply (no-op)', noop, '<= 0.5 s'));
console.log(
  `cold apply / git: ${ratio.toFixed(2)}x (target <= ${RATIO_GUARD.toFixed(2)}x)${ratio <= RATIO_GUARD ? '' : '  ABOVE TARGET'}`,
);
