#!/usr/bin/env node
// Times `apply` on a real MLX repository, Node start-up included:
// cold (new workdir: fetch, checkout, apply) and no-op (second run), against
// a baseline of plain git doing the least a cold apply must do:
// `git init` + `git fetch --depth 1 <repo> <pinned>` + `git checkout`.
// Runs alternate (baseline, cold, no-op) so load on the machine hits all alike.
// The tool's own cost is measured per cold run: its wall time minus the time git's
// own trace (GIT_TRACE2_EVENT) gives the init, fetch and checkout it ran, which
// plain git has to do as well. Everything else (Node, loading the tool, reading
// the series, the git plumbing that builds the applied commit) is the tool's cost.
// Checkout times swing a lot on a busy disk; this pairing keeps that out of it.
// Usage: node scripts/bench-apply.mjs <mlx repo> [runs]   (or MLX_REPO=<repo>)
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
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

function timeApply(workdir, trace) {
  let status;
  const env = trace ? { ...process.env, GIT_TRACE2_EVENT: trace } : process.env;
  const s = seconds(() => {
    const result = spawnSync(process.execPath, [bin, 'apply', '--mlx-repo', repo, '--workdir', workdir, '--json'], {
      cwd: root,
      encoding: 'utf8',
      env,
    });
    if (result.status !== 0) throw new Error(`apply failed (${result.status}):\n${result.stderr}`);
    status = JSON.parse(result.stdout).status;
  });
  return { seconds: s, status };
}

// Seconds the first top-level git process of each name in `names` ran, from a trace2 event file.
// Only the first: a second checkout (or fetch) would be work plain git does not do.
function gitSeconds(trace, names) {
  const top = new Map();
  const counted = new Set();
  let total = 0;
  for (const line of readFileSync(trace, 'utf8').split('\n')) {
    if (!line) continue;
    const event = JSON.parse(line);
    if (event.sid.includes('/')) continue; // a process git started itself: inside its parent's time
    if (event.event === 'cmd_name' && names.includes(event.name) && !counted.has(event.name)) {
      counted.add(event.name);
      top.set(event.sid, event.name);
    }
    if (event.event === 'exit' && top.has(event.sid)) total += event.t_abs;
  }
  return total;
}

function timeGit(dir, fetchOptions = []) {
  const checkout = path.join(dir, 'mlx');
  return seconds(() => {
    run('git', ['init', '--quiet', checkout], dir);
    run('git', ['fetch', '--quiet', '--no-tags', '--depth', '1', ...fetchOptions, source, pinned], checkout);
    run('git', ['checkout', '--quiet', '--detach', pinned], checkout);
  });
}
// What apply's own fetch does for a repository on this machine (see Git.fetchCommit):
// the same git work without the tool, so `cold apply / same git` is the tool's own cost.
const localFetch = source.startsWith('file://') ? ['--upload-pack=git -c pack.window=0 upload-pack'] : [];

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const baseline = [];
const sameGit = [];
const cold = [];
const noop = [];
const own = [];
const nodeStart = [];
for (let i = 0; i < runs; i++) {
  const gitDir = mkdtempSync(path.join(os.tmpdir(), 'msp-bench-git-'));
  const sameDir = mkdtempSync(path.join(os.tmpdir(), 'msp-bench-git-'));
  const workdir = mkdtempSync(path.join(os.tmpdir(), 'msp-bench-'));
  try {
    baseline.push(timeGit(gitDir));
    sameGit.push(timeGit(sameDir, localFetch));
    const trace = path.join(gitDir, 'trace2.json');
    const first = timeApply(workdir, trace);
    if (first.status !== 'applied') throw new Error(`cold run reported ${first.status}`);
    cold.push(first.seconds);
    if (existsSync(trace)) own.push(first.seconds - gitSeconds(trace, ['init', 'fetch', 'checkout']));
    // Node's own start, right after: the part of the own cost that is the machine's, not the tool's.
    nodeStart.push(seconds(() => run(process.execPath, ['-e', '0'], root)));
    const second = timeApply(workdir);
    if (second.status !== 'already-applied') throw new Error(`second run reported ${second.status}`);
    noop.push(second.seconds);
  } finally {
    rmSync(gitDir, { recursive: true, force: true });
    rmSync(sameDir, { recursive: true, force: true });
    rmSync(workdir, { recursive: true, force: true });
  }
}
const row = (name, xs, target) =>
  `${name.padEnd(26)} median ${median(xs).toFixed(3)} s  min ${Math.min(...xs).toFixed(3)} s  max ${Math.max(...xs).toFixed(3)} s${target ? `  target ${target}` : ''}`;
const ratio = median(cold) / median(baseline);
console.log(`apply on ${repo}, ${runs} runs each (alternating), ${os.cpus().length} CPUs`);
console.log(row('git init+fetch+checkout', baseline));
if (localFetch.length) console.log(row("  same, with apply's fetch", sameGit));
console.log(row('cold apply (new workdir)', cold, '<= 1.3x git'));
console.log(row('re-apply (no-op)', noop, '<= 0.5 s'));
console.log(`cold apply / git: ${ratio.toFixed(2)}x (target <= 1.30x)${ratio <= 1.3 ? '' : '  ABOVE TARGET'}`);
if (localFetch.length)
  console.log(
    `cold apply / same git: ${(median(cold) / median(sameGit)).toFixed(2)}x (difference of the medians: ${(median(cold) - median(sameGit)).toFixed(3)} s)`,
  );
if (own.length)
  console.log(
    `${row("the tool's own cost", own, '<= 0.12 s')}  (cold apply minus its git init, fetch and checkout, per run)`,
  );
console.log(row('node -e 0, after each cold run', nodeStart));
