import { cpSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { createLogger } from '../../src/adapters/log.js';
import { findMetalToolchain, type ClangToolchain } from '../../src/ops/metal-toolchain.js';
import { editConfig, FIXTURES, git, tempDir } from './repos.js';

const quiet = createLogger({ stream: { write: () => true } as unknown as NodeJS.WritableStream });

/** clang >= 19 with libc++ >= 19 on this machine, or the reason lane tests skip. */
export async function laneToolchain(): Promise<{ toolchain: ClangToolchain; reason: null } | { toolchain: null; reason: string }> {
  const { toolchain, checks } = await findMetalToolchain({ env: process.env, log: quiet });
  if (toolchain) return { toolchain, reason: null };
  return { toolchain: null, reason: `skipped: ${checks.filter((c) => c.status !== 'pass').map((c) => c.detail).join('; ')}` };
}

/** Apple's metal-cpp named by METAL_CPP_DIR, or the reason real-lane tests skip. */
export function metalCppDir(): { dir: string; reason: null } | { dir: null; reason: string } {
  const dir = process.env['METAL_CPP_DIR'];
  if (!dir) return { dir: null, reason: "skipped: METAL_CPP_DIR is not set (point it at Apple's metal-cpp 26 folder)" };
  return { dir, reason: null };
}

export function skipName(name: string, reasons: Array<string | null>): string {
  const reason = reasons.find((r) => r !== null) ?? null;
  if (reason) console.warn(`${name}: ${reason}`);
  return reason ? `${name} (${reason})` : name;
}

/**
 * fixtures/upstream plus a root CMakeLists.txt naming where metal-cpp comes
 * from, committed into a real git repository.
 */
export function makeMetalUpstream(metalCppUrl: string): { dir: string; sha: string } {
  const dir = tempDir('msp-metal-upstream-');
  cpSync(path.join(FIXTURES, 'upstream'), dir, { recursive: true });
  writeFileSync(path.join(dir, 'CMakeLists.txt'), `if(MLX_BUILD_METAL)\n  set(METAL_CPP_URL\n      ${metalCppUrl})\n  FetchContent_Declare(metal_cpp URL \${METAL_CPP_URL})\nendif()\n`);
  git(dir, 'init', '--quiet', '--initial-branch=main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '--quiet', '-m', 'metal fixture upstream');
  return { dir, sha: git(dir, 'rev-parse', 'HEAD').trim() };
}

/** A copy of fixtures/metal/project (metal-cpp calls in source_path and metal_test_file) pinned to `sha`. */
export function makeMetalProject(sha: string): string {
  const dir = tempDir('msp-metal-project-');
  cpSync(path.join(FIXTURES, 'metal', 'project'), dir, { recursive: true });
  editConfig(dir, (config) => {
    (config['upstream'] as Record<string, unknown>)['commit'] = sha;
  });
  return dir;
}
