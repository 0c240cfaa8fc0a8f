import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { metalCppUrl } from '../../src/series/config.js';
import {
  laneToolchain,
  makeMetalProject,
  makeMetalUpstream,
  skipName,
  storedZip,
} from '../support/check-metal-fixtures.js';
import { makeExportProject, makeExportUpstream } from '../support/export-fixtures.js';
import { describeName, mlxRepo } from '../support/mlx.js';
import { git, gitAsync, REPO_ROOT, runCli } from '../support/repos.js';

const CONFIG = 'mlx-storage-pr.config.json';
const lane = await laneToolchain();

/** Sets `upstream.metalCpp` in the project's config. */
function pinMetalCpp(project: string, metalCpp: { url: string; sha256?: string }): void {
  const file = path.join(project, CONFIG);
  const config = JSON.parse(readFileSync(file, 'utf8')) as { upstream: Record<string, unknown> };
  config.upstream['metalCpp'] = metalCpp;
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
}

describe.skipIf(lane.toolchain === null)(skipName('check-metal with a pinned metal-cpp archive', [lane.reason]), () => {
  const zip = storedZip({
    'metal-cpp/Metal/Metal.hpp': '#pragma once\nnamespace MTL { class Device; }\n',
    'metal-cpp/README.md': '| macOS 26, iOS 26 | x |\n',
  });
  const sha256 = createHash('sha256').update(zip).digest('hex');
  const server = createServer((req, res) => {
    if (req.url === '/files/metal-cpp_26.zip') res.end(zip);
    else res.writeHead(404).end();
  });
  let url = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/files/metal-cpp_26.zip`;
  });
  afterAll(() => server.close());

  async function project(pin: { sha256?: string }): Promise<string> {
    // MLX's CMake names another URL: the config's pin is the one used.
    const upstream = makeMetalUpstream('http://127.0.0.1:9/metal-cpp_26.zip');
    const dir = makeMetalProject(upstream.sha);
    pinMetalCpp(dir, { url, ...pin });
    expect((await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: dir })).code).toBe(0);
    return dir;
  }

  it('without a sha256: downloads the pinned url, says its hash and how to pin it, and goes on', async () => {
    const dir = await project({});
    const result = await runCli(['check-metal', '--json'], { cwd: dir });
    // The stand-in header lacks the real API, so the TUs fail (exit 1); the archive was taken.
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(`set upstream.metalCpp.sha256 to ${sha256}`);
    expect(result.stderr).toContain("MLX's CMake at the pin names http://127.0.0.1:9/metal-cpp_26.zip");
    expect(result.json.metalCpp).toBe(path.join(dir, '.work', 'metal-cpp', 'metal-cpp_26', 'metal-cpp'));
  });

  it('with a wrong sha256: stops (exit 9, CHECKSUM_MISMATCH) naming both hashes, and keeps neither the archive nor its files', async () => {
    const wrong = '0'.repeat(64);
    const dir = await project({ sha256: wrong });
    const result = await runCli(['check-metal', '--json'], { cwd: dir });
    expect(result.code).toBe(9);
    expect(result.json.error).toMatchObject({ code: 'CHECKSUM_MISMATCH', details: { actual: sha256, pinned: wrong } });
    expect(result.json.error.hint).toContain('upstream.metalCpp.sha256');
    const cache = path.join(dir, '.work', 'metal-cpp', `metal-cpp_26-${wrong.slice(0, 12)}`);
    expect(existsSync(cache)).toBe(false);
    expect(existsSync(`${cache}.zip`)).toBe(false);
  });

  it('with the right sha256: checks it without a warning and caches the archive under its hash', async () => {
    const dir = await project({ sha256 });
    const result = await runCli(['check-metal', '--json'], { cwd: dir });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).not.toContain('set upstream.metalCpp.sha256');
    expect(result.json.metalCpp).toBe(
      path.join(dir, '.work', 'metal-cpp', `metal-cpp_26-${sha256.slice(0, 12)}`, 'metal-cpp'),
    );
  });
});

describe('bump and the pinned metal-cpp', () => {
  it('rewrites upstream.metalCpp.url when the new pin names another archive, clears the sha256 and says so', async () => {
    const upstream = makeExportUpstream();
    const cmake = (u: string) => `set(METAL_CPP_URL\n    ${u})\n`;
    writeFileSync(path.join(upstream.dir, 'CMakeLists.txt'), cmake('https://example.invalid/metal-cpp_26.zip'));
    git(upstream.dir, 'add', 'CMakeLists.txt');
    git(upstream.dir, 'commit', '--quiet', '-m', 'metal-cpp 26');
    const pin = git(upstream.dir, 'rev-parse', 'HEAD').trim();
    const project = makeExportProject(pin);
    pinMetalCpp(project, { url: 'https://example.invalid/metal-cpp_26.zip', sha256: 'a'.repeat(64) });
    const cli = (...args: string[]) => runCli([...args, '--mlx-repo', upstream.dir], { cwd: project });
    expect((await cli('apply')).code).toBe(0);

    writeFileSync(path.join(upstream.dir, 'CMakeLists.txt'), cmake('https://example.invalid/metal-cpp_27.zip'));
    const versionFile = path.join(upstream.dir, 'mlx', 'version.h');
    writeFileSync(
      versionFile,
      readFileSync(versionFile, 'utf8').replace(/MLX_VERSION_MINOR \d+/, 'MLX_VERSION_MINOR 99'),
    );
    git(upstream.dir, 'commit', '--quiet', '-am', 'metal-cpp 27');
    const target = git(upstream.dir, 'rev-parse', 'HEAD').trim();

    const bumped = await cli('bump', '--to', target);
    expect(bumped.code, bumped.stderr).toBe(0);
    const config = JSON.parse(readFileSync(path.join(project, CONFIG), 'utf8')) as {
      upstream: { commit: string; metalCpp: Record<string, string> };
    };
    expect(config.upstream.commit).toBe(target);
    expect(config.upstream.metalCpp).toEqual({ url: 'https://example.invalid/metal-cpp_27.zip' });
    expect(bumped.stderr).toContain(
      'upstream.metalCpp.url: https://example.invalid/metal-cpp_26.zip -> https://example.invalid/metal-cpp_27.zip',
    );
    expect(bumped.stderr).toContain('upstream.metalCpp.sha256 cleared');
  });
});

describe.skipIf(mlxRepo().repo === null)(describeName('the shipped config and the real MLX'), () => {
  it("pins the metal-cpp archive MLX's CMake names at the pinned commit", async () => {
    const config = JSON.parse(readFileSync(path.join(REPO_ROOT, CONFIG), 'utf8')) as {
      upstream: { commit: string; metalCpp: { url: string } };
    };
    const cmake = await gitAsync(
      REPO_ROOT,
      '--git-dir',
      mlxRepo().repo as string,
      'show',
      `${config.upstream.commit}:CMakeLists.txt`,
    );
    expect(metalCppUrl(cmake)).toBe(config.upstream.metalCpp.url);
  });
});
