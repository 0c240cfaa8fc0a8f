#!/usr/bin/env node
import { main } from '../dist/cli.js';

// Ctrl-C: the first one lets the command stop its processes, clean up and report;
// a second one stops at once.
const interrupt = new AbortController();
process.on('SIGINT', () => {
  if (interrupt.signal.aborted) process.exit(130);
  process.stderr.write('\nStopping (Ctrl-C again to quit at once)...\n');
  interrupt.abort();
});

const code = await main({
  argv: process.argv.slice(2),
  cwd: process.cwd(),
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  signal: interrupt.signal,
});
process.exitCode = code;
