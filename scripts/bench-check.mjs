#!/usr/bin/env node
// Times `check --against` (no --build) on a real MLX repository with history: cold (a new
// workdir, so the pinned and the checked commits are fetched first) and warm (the commits are
// there; branch and tag names are still looked up), one commit at a time (--jobs 1) and all at
// once (--jobs <CPUs>). Node start-up included. Needs the built tool (npm run build).
// Usage: node scripts/bench-check.mjs <mlx repo> [runs] [ref...]   (or MLX_REPO=<repo>)
// Without refs: the commits about 3 and 12 months before the pinned one (first-parent line).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'mlx-storage-pr.js');
const repo = process.argv[2] ?? process.env.MLX_REPO;
const runs = Number(process.argv[3] ?? 5);
if (!repo || !(runs >= 1)) {
  console.error('usage: node scripts/bench-check.mjs <mlx repo> [runs] [ref...]  (or set MLX_REPO)');
  process.exit(2);
}
const pin = JSON.parse(readFileSync(path.join(root, 'mlx-storage-pr.config.json'), 'utf8')).upstream.commit;
const git = (...args) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim();
const before = (days) =>
  git(
    'log',
    '-1',
    '--first-parent',
    `--before=${Number(git('log', '-1', '--format=%ct', pin)) - days * 86400}`,
    '--format=%H',
    pin,
  );
const refs = process.argv.length > 4 ? process.argv.slice(4) : [before(91), before(365)];

function check(workdir, jobs) {
  const start = process.hrtime.bigint();
  const result = spawnSync(
    process.execPath,
    [bin, 'check', '--mlx-repo', repo, '--workdir', workdir, '--jobs', String(jobs), '--json', '--against', ...refs],
    { cwd: root, encoding: 'utf8' },
  );
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (result.status !== 0 && result.status !== 4) throw new Error(`check failed (${result.status}):\n${result.stderr}`);
  return { seconds, report: JSON.parse(result.stdout) };
}

const cpus = os.availableParallelism();
const times = {
  'cold, --jobs 1': [],
  [`cold, --jobs ${cpus}`]: [],
  'warm, --jobs 1': [],
  [`warm, --jobs ${cpus}`]: [],
};
let report;
for (let i = 0; i < runs; i++) {
  for (const jobs of [1, cpus]) {
    const workdir = mkdtempSync(path.join(os.tmpdir(), 'msp-bench-check-'));
    try {
      times[`cold, --jobs ${jobs}`].push(check(workdir, jobs).seconds);
      const warm = check(workdir, jobs);
      times[`warm, --jobs ${jobs}`].push(warm.seconds);
      report = warm.report;
    } finally {
      rmSync(workdir, { recursive: true, force: true });
    }
  }
}
console.log(`check --against on ${repo}, ${runs} runs, ${cpus} CPUs, load ${os.loadavg()[0].toFixed(1)}`);
for (const r of report.refs)
  console.log(
    `  ${r.ref.slice(0, 12)} (${r.date.slice(0, 10)}): ${r.status}: ${[...r.templates, ...r.patches].map((s) => `${s.name} ${s.status}`).join(', ')}`,
  );
for (const [name, list] of Object.entries(times)) {
  const sorted = [...list].sort((a, b) => a - b);
  console.log(
    `${name.padEnd(22)} median ${sorted[Math.floor(sorted.length / 2)].toFixed(3)} s  min ${sorted[0].toFixed(3)} s  max ${sorted[sorted.length - 1].toFixed(3)} s`,
  );
}
