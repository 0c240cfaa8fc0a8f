import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { IDENTITY, writePrText } from '../support/fork.js';
import { editConfig, git, makeProject, makeUpstream, onPath, runCli, tempDir, ccacheDir } from '../support/repos.js';

/** A TCP listener that notes every connection and closes it: the proxy and the blocked host. */
async function listener(): Promise<{ url: string; port: number; hits: string[]; close(): void }> {
  const hits: string[] = [];
  const server = net.createServer((socket) => {
    socket.once('data', (data) => hits.push(data.toString('latin1').split('\r\n')[0] ?? ''));
    setTimeout(() => socket.destroy(), 50);
    hits.push('connection');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, port, hits, close: () => server.close() };
}

const hasTools = ['/usr/bin/cmake', '/usr/include/doctest/doctest.h', '/usr/lib/cmake/doctest/doctest.cmake'].every(
  existsSync,
);
const reason =
  'skipped: needs cmake, a C++ compiler, binutils and doctest-dev (sudo apt-get install cmake g++ binutils doctest-dev)';
if (!hasTools || !onPath('nm')) console.warn(`offline and the network: ${reason}`);

describe.skipIf(!hasTools || !onPath('nm'))(
  hasTools ? 'offline set once: no command reaches the network' : `offline set once (${reason})`,
  () => {
    let proxy: Awaited<ReturnType<typeof listener>>;
    let blocked: Awaited<ReturnType<typeof listener>>;
    let project: string;
    let fork: string;
    let pinned: string;
    let env: Record<string, string>;

    beforeAll(async () => {
      proxy = await listener();
      blocked = await listener();
      // MLX's CMake downloads its test dependency from the blocked host, and metal-cpp comes from it.
      const upstream = makeUpstream('twin/upstream', (dir) => {
        const file = path.join(dir, 'tests', 'CMakeLists.txt');
        writeFileSync(file, readFileSync(file, 'utf8').replace('http://127.0.0.1:9', blocked.url));
      });
      pinned = upstream.sha;
      project = makeProject(upstream.sha, 'twin/project');
      editConfig(project, (config) => {
        (config['upstream'] as Record<string, unknown>)['metalCpp'] = { url: `${blocked.url}/metal-cpp_26.zip` };
      });
      writePrText(project);
      fork = path.join(tempDir('msp-fork-'), 'mlx.git');
      git(path.dirname(fork), 'clone', '--quiet', '--bare', upstream.dir, fork);
      env = {
        HOME: tempDir('msp-home-'),
        GIT_CONFIG_NOSYSTEM: '1',
        ...IDENTITY,
        MLX_REPO: upstream.dir,
        MLX_STORAGE_PR_OFFLINE: '1',
        MLX_STORAGE_PR_CACHE: tempDir('msp-cache-'),
        CCACHE_DIR: ccacheDir(),
        ...Object.fromEntries(
          ['http_proxy', 'https_proxy', 'all_proxy', 'HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY'].map((v) => [
            v,
            proxy.url,
          ]),
        ),
      };
    });
    afterAll(() => {
      proxy.close();
      blocked.close();
    });

    it('apply, doctor, status, test, check-metal, verify, pr --push, check --build, export and clean: nothing connects to the proxy or the blocked host', async () => {
      const runs: Array<[string[], number[]]> = [
        [['apply'], [0]],
        [['doctor'], [0, 9]],
        [['status'], [0]],
        [['test', '--metal-twin'], [0]],
        [['check-metal'], [9]],
        // The fixture has no .clang-format, so C++ formatting is not checked and verify is not ready.
        [['verify'], [1]],
        [['pr', '--push', '--fork', fork, '--skip', 'format'], [0]],
        [['check', '--against', pinned, '--build'], [0]],
        [['export', '--dry-run'], [0]],
        [['clean', '--dry-run'], [0]],
      ];
      for (const [args, codes] of runs) {
        const result = await runCli([...args, '--json'], { cwd: project, env });
        expect(codes, `${args.join(' ')} exited ${result.code}: ${result.stderr.slice(-2000)}`).toContain(result.code);
        expect({ command: args.join(' '), proxy: proxy.hits, blocked: blocked.hits }).toEqual({
          command: args.join(' '),
          proxy: [],
          blocked: [],
        });
      }
    });

    it('--deps-dir implies offline: verify downloads no metal-cpp with it, though offline is not set', async () => {
      const deps = tempDir('msp-deps-');
      mkdirSync(path.join(deps, 'json'));
      const only = ['--skip', 'format', 'docs', 'build', 'pr-text'];
      const result = await runCli(['verify', '--deps-dir', deps, ...only, '--json'], {
        cwd: project,
        env: { ...env, MLX_STORAGE_PR_OFFLINE: '0' },
      });
      expect(result.code, result.stderr).toBe(0);
      // It got as far as metal-cpp, and took the offline path there.
      expect(result.json.checks[0]).toMatchObject({ id: 'metal-typecheck', status: 'not-checked' });
      expect(result.json.checks[0].detail).toContain('offline nothing is downloaded');
      expect({ proxy: proxy.hits, blocked: blocked.hits }).toEqual({ proxy: [], blocked: [] });
    });

    it('the listeners notice a command that does go to the network (offline turned off)', async () => {
      const online = await runCli(['test', '--json'], { cwd: project, env: { ...env, MLX_STORAGE_PR_OFFLINE: '0' } });
      expect(online.code).not.toBe(0);
      expect(proxy.hits.length + blocked.hits.length).toBeGreaterThan(0);
    });
  },
);
