#!/usr/bin/env node
// Times `test --offline` on a real MLX repository against what a contributor
// would run by hand:
//   1. the tool, cold: a new workdir and an empty ccache; `test --offline`
//      builds and runs the patched tree and the unpatched baseline;
//   2. plain CMake, cold: the same patched tree (applied into another
//      workdir, not timed), an empty ccache of its own, the CMake arguments
//      the tool used; configure, build `tests`, run the test binary;
//   3. the edit loop: change one line of the storage view header template,
//      `apply`, then `test --tests "*storage*"`.
// It prints the ratio of 1 to 2 (goal <= 1.15x) and where the tool's time went.
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

function cli(args, workdir, ccache) {
  const start = process.hrtime.bigint();
  const result = spawnSync(
    process.execPath,
    [bin, ...args, '--project', project, '--workdir', workdir, '--mlx-repo', repo, '--json'],
    {
      cwd: project,
      env: { ...env, CCACHE_DIR: ccache },
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const json = JSON.parse(result.stdout);
  // Exit 8 only means failing cases (the gguf cases fail offline, GGUF is off).
  if (result.status !== 0 && !(result.status === 8 && json.summary))
    throw new Error(
      `${args.join(' ')} failed (${result.status}): ${JSON.stringify(json.error ?? json.summary)}\n${result.stderr.slice(-3000)}`,
    );
  return { seconds, json, stderr: result.stderr };
}

/** Runs a program, inheriting nothing but `env`; returns the seconds it took. Its exit code is ignored when `anyExit`. */
function timed(program, args, options) {
  const start = process.hrtime.bigint();
  const result = spawnSync(program, args, { ...options, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0 && !options.anyExit)
    throw new Error(`${program} ${args.join(' ')} failed (${result.status}):\n${result.stderr.slice(-3000)}`);
  return Number(process.hrtime.bigint() - start) / 1e9;
}

/** The CMake arguments of the tool's configure step, from its log line `Running \`cmake -S <src> -B <build> ...\``. */
function configureArgs(stderr) {
  const line = stderr.split('\n').find((l) => l.startsWith('Running `cmake -S '));
  if (!line) throw new Error('the tool did not configure (no `Running `cmake -S` line)');
  const command = line.slice('Running `'.length, line.lastIndexOf('` in '));
  // The tool quotes an argument only when it needs to; MLX's arguments here need none.
  return command.split(' ').slice(5);
}

const testArgs = ['test', '--offline'];
try {
  const tool = path.join(scratch, 'tool');
  cli(['apply'], tool, path.join(scratch, 'ccache-tool'));
  const cold = cli(testArgs, tool, path.join(scratch, 'ccache-tool'));

  const plain = path.join(scratch, 'plain');
  cli(['apply'], plain, path.join(scratch, 'ccache-plain'));
  const build = path.join(plain, 'build');
  const byHand = { env: { ...env, CCACHE_DIR: path.join(scratch, 'ccache-plain') }, cwd: plain };
  const byHandSeconds =
    timed('cmake', ['-S', path.join(plain, 'mlx'), '-B', build, ...configureArgs(cold.stderr)], byHand) +
    timed('cmake', ['--build', build, '--target', 'tests', '--parallel', String(os.availableParallelism())], byHand) +
    timed(path.join(build, 'tests', 'tests'), [], { ...byHand, cwd: build, anyExit: true });

  const header = path.join(project, 'templates', '{{header_path}}');
  writeFileSync(
    header,
    readFileSync(header, 'utf8').replace('#pragma once\n', '#pragma once\n\n// Edited by the benchmark.\n'),
  );
  const loopStart = process.hrtime.bigint();
  cli(['apply'], tool, path.join(scratch, 'ccache-tool'));
  const loop = cli([...testArgs, '--tests', '*storage*'], tool, path.join(scratch, 'ccache-tool'));
  const loopSeconds = Number(process.hrtime.bigint() - loopStart) / 1e9;

  const ratio = cold.seconds / byHandSeconds;
  const s = (x) => `${x.toFixed(1).padStart(7)} s`;
  console.log(`test --offline on ${repo}, ${os.availableParallelism()} CPUs, each cold build with an empty ccache`);
  console.log(`plain CMake: configure, build tests, run  ${s(byHandSeconds)}`);
  console.log(
    `test --offline (patched and baseline)     ${s(cold.seconds)}  ${ratio.toFixed(3)} x plain CMake (goal <= 1.15)`,
  );
  console.log(
    `  of which: patched build ${cold.json.patched.buildSeconds.toFixed(1)} s (${cold.json.patched.buildSteps} steps), baseline build ${(cold.json.baseline?.buildSeconds ?? 0).toFixed(1)} s, the rest (configure twice, two suite runs, Node) ${(cold.seconds - cold.json.patched.buildSeconds - (cold.json.baseline?.buildSeconds ?? 0)).toFixed(1)} s`,
  );
  console.log(`edit -> apply -> test --tests             ${s(loopSeconds)}  (target <= 60 s)`);
  console.log(
    `suite: ${cold.json.summary.cases} cases, ${cold.json.summary.passed} passed, ${cold.json.summary.failed} failed; loop ran ${loop.json.summary.cases} cases`,
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
