#!/usr/bin/env node
// Times the Metal twin on a real MLX repository, in a new workdir:
//   1. first twin run: `apply`, then `test --offline --metal-twin --no-suite`
//      (builds libmlx and the twin; fast when ccache already holds MLX's objects);
//   2. the edit loop: change one line of the Metal source template, `apply`,
//      then `test --offline --metal-twin --no-suite` (target <= 15 s on 2 cores);
//   3. verify's mutant check alone: every mutant of mutants.json, with the time
//      per mutant (the first run also builds the mutants' worktree).
// Uses the machine's ccache (CCACHE_DIR as set), so step 1 says how warm it was.
// Times are wall clock for the whole command, Node start-up included.
// Usage: node scripts/bench-twin.mjs <mlx repo>   (or MLX_REPO=<repo>)
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'mlx-storage-pr.js');
const repo = process.argv[2] ?? process.env.MLX_REPO;
if (!repo) {
  console.error('usage: node scripts/bench-twin.mjs <mlx repo>  (or set MLX_REPO)');
  process.exit(2);
}

const scratch = mkdtempSync(path.join(os.tmpdir(), 'msp-bench-twin-'));
const project = path.join(scratch, 'project');
for (const item of ['mlx-storage-pr.config.json', 'templates', 'patches', 'mutants.json'])
  cpSync(path.join(root, item), path.join(project, item), { recursive: true });
const workdir = path.join(scratch, 'work');

function cli(args) {
  const start = process.hrtime.bigint();
  const result = spawnSync(
    process.execPath,
    [bin, ...args, '--project', project, '--workdir', workdir, '--mlx-repo', repo, '--json'],
    { cwd: project, env: process.env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
  );
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const json = JSON.parse(result.stdout);
  if (result.status !== 0)
    throw new Error(`${args.join(' ')} failed (${result.status}): ${JSON.stringify(json.error ?? json.checks)}`);
  return { seconds, json };
}

const twinArgs = ['test', '--offline', '--metal-twin', '--no-suite'];
const onlyMutants = ['format', 'metal-typecheck', 'docs', 'pr-text', 'tests-fail-without-implementation'].flatMap(
  (name) => ['--skip', name],
);
try {
  const applied = cli(['apply']);
  const first = cli(twinArgs);
  const source = path.join(project, 'templates', '{{source_path}}');
  writeFileSync(
    source,
    readFileSync(source, 'utf8').replace('namespace {\n', 'namespace {\n\n// Edited by the benchmark.\n'),
  );
  const loopStart = process.hrtime.bigint();
  cli(['apply']);
  const loop = cli(twinArgs);
  const loopSeconds = Number(process.hrtime.bigint() - loopStart) / 1e9;
  // The mutants are checked against the source as shipped.
  cpSync(path.join(root, 'templates'), path.join(project, 'templates'), { recursive: true });
  cli(['apply']);
  const mutants = cli(['verify', '--offline', ...onlyMutants]);
  const check = mutants.json.checks.find((c) => c.id === 'mutants');

  const s = first.json.twin.summary;
  console.log(`Metal twin on ${repo}, ${os.cpus().length} CPUs`);
  console.log(`apply                               ${applied.seconds.toFixed(1).padStart(7)} s`);
  console.log(
    `first twin run (libmlx + twin)      ${first.seconds.toFixed(1).padStart(7)} s  (${first.json.twin.buildSteps} build steps; ccache: ${process.env.CCACHE_DIR ?? 'default'})`,
  );
  console.log(`edit -> apply -> twin run           ${loopSeconds.toFixed(1).padStart(7)} s  target <= 15 s`);
  console.log(
    `twin: ${s.cases} cases, ${s.passed} passed, ${s.failed} failed, ${s.assertions.passed} assertions passed; loop rebuilt ${loop.json.twin.buildSteps} steps`,
  );
  console.log(`verify (mutants only)               ${mutants.seconds.toFixed(1).padStart(7)} s`);
  console.log(check.detail);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
