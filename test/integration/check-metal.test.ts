import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { compile } from '../../src/adapters/clang.js';
import { createLogger } from '../../src/adapters/log.js';
import {
  laneToolchain,
  makeMetalProject,
  makeMetalUpstream,
  metalCppDir,
  skipName,
  storedZip,
} from '../support/check-metal-fixtures.js';
import { FIXTURES, REPO_ROOT, runCli } from '../support/repos.js';

const lane = await laneToolchain();
const metalCpp = metalCppDir();
const quiet = createLogger({ stream: { write: () => true } as unknown as NodeJS.WritableStream });
const SHIM_FLAGS = [
  '-std=c++20',
  '-stdlib=libc++',
  '-fsyntax-only',
  '-fblocks',
  '-isystem',
  path.join(REPO_ROOT, 'shims', 'include'),
];

describe.skipIf(lane.toolchain === null)(skipName('shim headers with clang >= 19 and libc++', [lane.reason]), () => {
  const clang = lane.toolchain?.command ?? 'clang++';
  const run = (file: string, extra: string[] = []) =>
    compile(clang, [...SHIM_FLAGS, ...extra, path.join(FIXTURES, 'metal', file)], {
      cwd: REPO_ROOT,
      env: process.env,
      log: quiet,
    });

  it('type-checks a TU that includes only shim headers', async () => {
    const result = await run('shims_only.cpp');
    expect(result.output).toBe('');
    expect(result.exitCode).toBe(0);
  });

  it('rejects misuse of shimmed APIs, for exactly the annotated reasons', async () => {
    const plain = await run('shims_misuse.cpp');
    expect(plain.exitCode).not.toBe(0);
    expect(plain.output).toContain("no matching function for call to 'dispatch_async'");
    const verified = await run('shims_misuse.cpp', ['-Xclang', '-verify', '-Xclang', '-verify-ignore-unexpected=note']);
    expect(verified.output).toBe('');
    expect(verified.exitCode).toBe(0);
  });
});

describe('check-metal without its tools', () => {
  it('names the install command when no clang >= 19 with libc++ is found', async () => {
    const upstream = makeMetalUpstream('http://127.0.0.1:9/metal-cpp_26.zip');
    const project = makeMetalProject(upstream.sha);
    const result = await runCli(['check-metal', '--json'], { cwd: project, env: { PATH: '/nonexistent' } });
    expect(result.code).toBe(9);
    expect(result.json.error.code).toBe('TOOL_MISSING');
    expect(result.json.error.hint).toContain(
      process.platform === 'darwin'
        ? 'xcode-select --install'
        : 'sudo apt-get install clang-19 libc++-19-dev libc++abi-19-dev',
    );
  });
});

describe.skipIf(lane.toolchain === null)(
  skipName('check-metal getting metal-cpp and the checkout', [lane.reason]),
  () => {
    it('says to pass --metal-cpp when the download fails or the folder is wrong', async () => {
      const upstream = makeMetalUpstream('http://127.0.0.1:9/metal-cpp_26.zip');
      const project = makeMetalProject(upstream.sha);
      expect((await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project })).code).toBe(0);

      const download = await runCli(['check-metal', '--json'], { cwd: project });
      expect(download.code).toBe(9);
      expect(download.json.error.message).toContain('Cannot get metal-cpp from http://127.0.0.1:9/metal-cpp_26.zip');
      expect(download.json.error.hint).toContain('--metal-cpp <dir|zip>');

      const wrong = await runCli(['check-metal', '--metal-cpp', FIXTURES, '--json'], { cwd: project });
      expect(wrong.code).toBe(9);
      expect(wrong.json.error.message).toContain('holds no Metal/Metal.hpp');
    });

    it('downloads the archive MLX CMake names once, and caches it in the workdir', async () => {
      const zip = storedZip({
        'metal-cpp/Metal/Metal.hpp': '#pragma once\nnamespace MTL { class Device; }\n',
        'metal-cpp/README.md': '| macOS 26, iOS 26 | x |\n',
      });
      let requests = 0;
      const server = createServer((req, res) => {
        requests++;
        if (req.url === '/files/metal-cpp_26.zip') res.end(zip);
        else res.writeHead(404).end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/files/metal-cpp_26.zip`;
        const upstream = makeMetalUpstream(url);
        const project = makeMetalProject(upstream.sha);
        expect((await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project })).code).toBe(0);
        const cached = path.join(project, '.work', 'metal-cpp', 'metal-cpp_26', 'metal-cpp');
        for (let run = 0; run < 2; run++) {
          // The stand-in header lacks the real API, so the TUs fail; what matters here is where the headers came from.
          const result = await runCli(['check-metal', '--json'], { cwd: project });
          expect(result.json.metalCpp).toBe(cached);
          expect(result.code).toBe(1);
        }
        expect(requests).toBe(1);
        expect(existsSync(path.join(cached, 'Metal', 'Metal.hpp'))).toBe(true);
        // Both folders carry the mark the tool writes into what it makes: clean --all may remove them.
        for (const made of ['metal-cpp', 'check-metal'])
          expect(existsSync(path.join(project, '.work', made, '.mlx-storage-pr')), made).toBe(true);
      } finally {
        server.close();
      }
    });

    it('refuses to check a checkout that does not hold the current series', async () => {
      const upstream = makeMetalUpstream('http://127.0.0.1:9/metal-cpp_26.zip');
      const project = makeMetalProject(upstream.sha);
      const result = await runCli(['check-metal', '--json'], { cwd: project });
      expect(result.code).toBe(1);
      expect(result.json.error).toMatchObject({ code: 'NOT_APPLIED' });
      expect(result.json.error.hint).toContain('mlx-storage-pr apply');
    });
  },
);

describe.skipIf(lane.toolchain === null || metalCpp.dir === null)(
  skipName('check-metal with real metal-cpp', [lane.reason, metalCpp.reason]),
  () => {
    it('passes the fixture TUs and reports a real API misuse verbatim', async () => {
      const upstream = makeMetalUpstream('http://127.0.0.1:9/metal-cpp_26.zip');
      const project = makeMetalProject(upstream.sha);
      const args = ['check-metal', '--metal-cpp', metalCpp.dir as string, '--jobs', '2', '--json'];
      expect((await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project })).code).toBe(0);

      const good = await runCli(args, { cwd: project });
      expect(good.code, good.stderr).toBe(0);
      expect(good.json).toMatchObject({ ok: true, mode: 'pr', passed: 2, failed: 0 });
      expect(good.json.outcomes.map((o: { label: string }) => o.label)).toEqual([
        'mlx/backend/metal/probe.cpp',
        'tests/metal_probe_tests.cpp',
      ]);

      const template = path.join(project, 'templates', '{{metal_test_file}}');
      writeFileSync(
        template,
        '#include <Metal/Metal.hpp>\n\nvoid* probe(MTL::Buffer* buffer) {\n  return buffer->contentsPointer();\n}\n',
      );
      expect((await runCli(['apply'], { cwd: project })).code).toBe(0);
      const bad = await runCli(args, { cwd: project });
      expect(bad.code).toBe(1);
      expect(bad.json).toMatchObject({ ok: false, passed: 1, failed: 1, code: 'CHECK_FAILED' });
      const failed = bad.json.outcomes.find((o: { good: boolean }) => !o.good);
      expect(failed.label).toBe('tests/metal_probe_tests.cpp');
      expect(failed.errors[0]).toContain("no member named 'contentsPointer' in 'MTL::Buffer'");
    });
  },
);
