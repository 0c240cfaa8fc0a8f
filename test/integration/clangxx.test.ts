import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { createLogger } from '../../src/adapters/log.js';
import { findMetalToolchain } from '../../src/readiness/metal-toolchain.js';
import { laneToolchain, makeMetalProject, makeMetalUpstream, skipName } from '../support/check-metal-fixtures.js';
import { runCli, tempDir } from '../support/repos.js';

const quiet = createLogger({ stream: { write: () => true } as unknown as NodeJS.WritableStream });
const lane = await laneToolchain();
const PATH = process.env['PATH'];

/** An executable script standing in for a compiler. */
function script(body: string): string {
  const file = path.join(tempDir('msp-clangxx-'), 'clang++');
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

async function lookup(clangxx: string) {
  return findMetalToolchain({ env: { PATH, CLANGXX: clangxx }, log: quiet, platform: 'linux', required: true });
}

// A working clang >= 19 on PATH proves that a failed CLANGXX does not fall back to it.
describe.skipIf(lane.toolchain === null)(skipName('CLANGXX with a working clang on PATH', [lane.reason]), () => {
  it('uses CLANGXX when it works', async () => {
    const found = await lookup(lane.toolchain?.command ?? 'clang++');
    expect(found.toolchain?.command).toBe(lane.toolchain?.command);
  });

  it('a CLANGXX that does not exist is an error naming it, not a fallback', async () => {
    const missing = path.join(tempDir(), 'no-such-clang++');
    const found = await lookup(missing);
    expect(found.toolchain).toBeNull();
    expect(found.checks[0]).toMatchObject({ id: 'metal-clang', status: 'fail' });
    expect(found.checks[0]?.detail).toBe(`CLANGXX=${missing}: no such file`);
    expect(found.checks[0]?.fix).toContain('CLANGXX');
  });

  it('a CLANGXX that cannot run is an error naming it and the reason', async () => {
    const broken = script('echo "cannot execute: bad ELF" >&2; exit 126');
    const found = await lookup(broken);
    expect(found.toolchain).toBeNull();
    expect(found.checks[0]?.detail).toBe(
      `CLANGXX=${broken}: cannot run \`${broken} --version\` (exit 126: cannot execute: bad ELF)`,
    );
  });

  it('a CLANGXX that is too old says its version', async () => {
    const old = script('echo "Debian clang version 14.0.6"; echo "Target: x86_64-pc-linux-gnu"');
    const found = await lookup(old);
    expect(found.toolchain).toBeNull();
    expect(found.checks[0]?.detail).toBe(`CLANGXX=${old}: clang 14.0.6 is older than 19`);
  });

  it('check-metal stops with TOOL_MISSING naming CLANGXX', async () => {
    const upstream = makeMetalUpstream('http://127.0.0.1:9/metal-cpp_26.zip');
    const project = makeMetalProject(upstream.sha);
    const missing = path.join(tempDir(), 'no-such-clang++');
    const result = await runCli(['check-metal', '--json'], { cwd: project, env: { CLANGXX: missing } });
    expect(result.code).toBe(9);
    expect(result.json.error.code).toBe('TOOL_MISSING');
    expect(result.json.error.message).toContain(`CLANGXX=${missing}: no such file`);
    expect(result.json.error.hint).toContain('CLANGXX');
  });
});
