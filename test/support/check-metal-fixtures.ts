import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';

import { createLogger } from '../../src/adapters/log.js';
import { findMetalToolchain, type ClangToolchain } from '../../src/readiness/metal-toolchain.js';
import { makeProject, makeUpstream } from './repos.js';

const quiet = createLogger({ stream: { write: () => true } as unknown as NodeJS.WritableStream });

/** clang >= 19 with libc++ >= 19 on this machine, or the reason lane tests skip. */
export async function laneToolchain(): Promise<
  { toolchain: ClangToolchain; reason: null } | { toolchain: null; reason: string }
> {
  const { toolchain, checks } = await findMetalToolchain({ env: process.env, log: quiet, platform: process.platform });
  if (toolchain) return { toolchain, reason: null };
  return {
    toolchain: null,
    reason: `skipped: ${checks
      .filter((c) => c.status !== 'pass')
      .map((c) => c.detail)
      .join('; ')}`,
  };
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
  return makeUpstream('upstream', (dir) => {
    writeFileSync(
      path.join(dir, 'CMakeLists.txt'),
      `if(MLX_BUILD_METAL)\n  set(METAL_CPP_URL\n      ${metalCppUrl})\n  FetchContent_Declare(metal_cpp URL \${METAL_CPP_URL})\nendif()\n`,
    );
  });
}

/** A copy of fixtures/metal/project (metal-cpp calls in source_path and metal_test_file) pinned to `sha`. */
export function makeMetalProject(sha: string): string {
  return makeProject(sha, 'metal/project');
}

/** A zip archive (stored, not compressed) holding `files`; enough to stand in for a download. */
export function storedZip(files: Record<string, string>): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const [name, text] of Object.entries(files)) {
    const data = Buffer.from(text);
    const fileName = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(fileName.length, 26);
    locals.push(local, fileName, data);
    const entry = Buffer.alloc(46);
    entry.writeUInt32LE(0x02014b50, 0);
    entry.writeUInt16LE(20, 4);
    entry.writeUInt16LE(20, 6);
    entry.writeUInt32LE(crc, 16);
    entry.writeUInt32LE(data.length, 20);
    entry.writeUInt32LE(data.length, 24);
    entry.writeUInt16LE(fileName.length, 28);
    entry.writeUInt32LE(offset, 42);
    central.push(entry, fileName);
    offset += local.length + fileName.length + data.length;
  }
  const centralSize = central.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Object.keys(files).length, 8);
  end.writeUInt16LE(Object.keys(files).length, 10);
  end.writeUInt32LE(centralSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...central, end]);
}
