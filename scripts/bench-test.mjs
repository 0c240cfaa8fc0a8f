#!/usr/bin/env node
// Times `test --offline` on a real MLX repository:
//   1. cold build: new workdir, empty ccache;
//   2. fresh build folder with a warm ccache (new workdir, same ccache);
//   3. the edit loop: change one line of the storage view header template,
//      `apply`, then `test --tests "*storage*"`.
// Each is printed with its ratio to the cold build. The baseline build is left
// out (--no-baseline): it is cached per pinned commit and is not part of the loop.
// Times are wall clock for the whole command, Node start-up included.
// Usage: node scripts/bench-test.mjs <mlx repo>   (or MLX_REPO=<repo>)
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const bin = path.join(root, 'bin', 'mlx-storage-pr.js');
const repo = process.argv[2] ?? process.env.MLX_REPO;
if (!repo) {
  console.error('usage: node scripts/bench-test.mjs <mlx repo>  (or set MLX_REPO)');
  process.exit(2);
}

const scratch = mkdtempSync(path.join(os.tmpdir(), 'msp-bench-test-'));
const project = path.join(scratch, 'project');
for (const item of ['mlx-storage-pr.config.json', 'templates', 'patches'])
  cpSync(path.join(root, item), path.join(project, item), { recursive: true });
const env = {
  ...process.env,
  CCACHE_DIR: path.join(scratch, 'ccache'),
  MLX_STORAGE_PR_CACHE: path.join(scratch, 'cache'),
};

function cli(args, workdir) {
  const start = process.hrtime.bigint();
  const result = spawnSync(
    process.execPath,
    [bin, ...args, '--project', project, '--workdir', workdir, '--mlx-repo', repo, '--json'],
    {
      cwd: project,
      env,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const json = JSON.parse(result.stdout);
  // Exit 8 only means failing cases: without a baseline the gguf cases count (GGUF is off offline).
  if (result.status !== 0 && !(result.status === 8 && json.summary))
    throw new Error(
      `${args.join(' ')} failed (${result.status}): ${JSON.stringify(json.error ?? json.summary)}\n${result.stderr.slice(-3000)}`,
    );
  return { seconds, json };
}

const testArgs = ['test', '--offline', '--no-baseline'];
try {
  const cold = path.join(scratch, 'cold');
  cli(['apply'], cold);
  const first = cli(testArgs, cold);
  const warm = path.join(scratch, 'warm');
  cli(['apply'], warm);
  const second = cli(testArgs, warm);

  const header = path.join(project, 'templates', '{{header_path}}');
  writeFileSync(
    header,
    readFileSync(header, 'utf8').replace('#pragma once\n', '#pragma once\n\n// Edited by the benchmark.\n'),
  );
  const loopStart = process.hrtime.bigint();
  cli(['apply'], warm);
  const loop = cli([...testArgs, '--tests', '*storage*'], warm);
  const loopSeconds = Number(process.hrtime.bigint() - loopStart) / 1e9;

  const row = (name, s, target) =>
    `${name.padEnd(34)} ${s.toFixed(1).padStart(7)} s  ${(s / first.seconds).toFixed(3)} x cold${target ? `  target <= ${target} s` : ''}`;
  console.log(`test --offline on ${repo}, ${os.cpus().length} CPUs`);
  console.log(row('cold build + full suite', first.seconds));
  console.log(row('fresh folder, warm ccache + suite', second.seconds, 90));
  console.log(row('edit -> apply -> test --tests', loopSeconds, 60));
  console.log(
    `build steps: cold ${first.json.patched.buildSteps}, warm ${second.json.patched.buildSteps}, loop ${loop.json.patched.buildSteps} (Ninja's count; the loop recompiles only what includes the edited header)`,
  );
  console.log(
    `suite: ${first.json.summary.cases} cases, ${first.json.summary.passed} passed, ${first.json.summary.failed} failed; loop ran ${loop.json.summary.cases} cases`,
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
