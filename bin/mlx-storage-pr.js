#!/usr/bin/env node
import { main } from '../dist/cli.js';

const code = await main({
  argv: process.argv.slice(2),
  cwd: process.cwd(),
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
});
process.exitCode = code;
