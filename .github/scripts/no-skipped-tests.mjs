#!/usr/bin/env node
// Fails when a test in <folder> did not run: vitest passes a `describe.skipIf`
// or `it.skip` quietly, so an end-to-end test that lost what it needs (MLX's
// history, clang, metal-cpp, Sphinx) would pass unnoticed.
//
//   node .github/scripts/no-skipped-tests.mjs <vitest JSON report> <folder>
//
// Exit 0 when every test under <folder> passed or failed (vitest's own exit
// code reports failures), 1 when one skipped or none ran, 2 on bad arguments.
import fs from 'node:fs';
import path from 'node:path';

const [reportFile, folder] = process.argv.slice(2);
if (!reportFile || !folder) {
  process.stderr.write('usage: node .github/scripts/no-skipped-tests.mjs <vitest JSON report> <folder>\n');
  process.exit(2);
}
const report = JSON.parse(fs.readFileSync(reportFile, 'utf8'));
const prefix = `${path.resolve(folder)}${path.sep}`;
const tests = (report.testResults ?? [])
  .filter((file) => path.resolve(file.name).startsWith(prefix))
  .flatMap((file) =>
    (file.assertionResults ?? []).map((t) => ({ file: path.relative(process.cwd(), file.name), ...t })),
  );
const notRun = tests.filter((t) => t.status !== 'passed' && t.status !== 'failed');
for (const t of notRun) process.stdout.write(`::error file=${t.file}::${t.status}: ${t.fullName}\n`);
if (tests.length === 0) process.stdout.write(`::error::no test under ${folder} ran\n`);
process.stdout.write(`${tests.length - notRun.length} of ${tests.length} test(s) under ${folder} ran\n`);
process.exit(notRun.length > 0 || tests.length === 0 ? 1 : 0);
