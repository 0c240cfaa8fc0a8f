import { statfs } from 'node:fs/promises';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { Env } from '../adapters/env.js';
import { probe } from '../adapters/process.js';
import type { ReportItem } from '../core/report-items.js';
import type { OfflinePlan } from './offline-plan.js';

export const apt = (pkgs: string) => `sudo apt-get install ${pkgs}`;

export function versionAtLeast(found: string, wanted: string): boolean {
  const a = found.split('.').map(Number);
  const b = wanted.split('.').map(Number);
  for (let i = 0; i < b.length; i++) {
    if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  }
  return true;
}

export async function inspectCmake(env: Env, platform: NodeJS.Platform): Promise<ReportItem> {
  const out = await probe('cmake', ['--version'], env);
  const version = out ? /cmake version (\d+\.\d+(?:\.\d+)?)/.exec(out)?.[1] : undefined;
  const fix = platform === 'darwin' ? 'brew install cmake' : apt('cmake');
  if (!version)
    return { id: 'cmake', title: 'CMake >= 3.25', status: 'fail', detail: 'cmake not found', fix, required: true };
  const ok = versionAtLeast(version, '3.25');
  return {
    id: 'cmake',
    title: 'CMake >= 3.25',
    status: ok ? 'pass' : 'fail',
    detail: `cmake ${version}`,
    fix,
    required: true,
  };
}

export async function inspectCompiler(env: Env, platform: NodeJS.Platform): Promise<ReportItem> {
  const cxx = env['CXX'] ?? 'c++';
  const dir = await mkdtemp(path.join(os.tmpdir(), 'msp-cxx-'));
  try {
    const file = path.join(dir, 'probe.cpp');
    await writeFile(
      file,
      '#include <span>\n#include <concepts>\ntemplate <std::integral T> T twice(T x) { return 2 * x; }\nint main() { return twice(0); }\n',
    );
    const ok = (await probe(cxx, ['-std=c++20', '-fsyntax-only', file], env)) !== null;
    const version = (await probe(cxx, ['--version'], env))?.split('\n')[0] ?? 'not found';
    return {
      id: 'compiler',
      title: 'C++20 compiler',
      status: ok ? 'pass' : 'fail',
      detail: ok ? version : `${cxx} cannot compile C++20 (${version})`,
      fix: platform === 'darwin' ? 'xcode-select --install' : apt('g++'),
      required: true,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** g++ 11, the compiler of MLX's Linux CI and sanitizer jobs (ubuntu-22.04's c++): `test --upstream-ci` uses it. */
export async function inspectUpstreamCompiler(env: Env, platform: NodeJS.Platform): Promise<ReportItem> {
  const title = "g++ 11 (MLX's Linux CI compiler)";
  if (platform === 'darwin')
    return { id: 'gxx-11', title, status: 'pass', detail: 'not needed on macOS', required: false };
  const version = (await probe('g++-11', ['--version'], env))?.split('\n')[0];
  return version
    ? { id: 'gxx-11', title, status: 'pass', detail: version, required: false }
    : {
        id: 'gxx-11',
        title,
        status: 'warn',
        detail: 'g++-11 not found: test --upstream-ci builds with the default compiler',
        fix: apt('g++-11'),
        required: false,
      };
}

/**
 * The sanitizer runtimes (libasan, libubsan) that `test --sanitize` links: they come with the compiler, so a
 * small program is built and linked with each sanitizer.
 */
export async function inspectSanitizers(env: Env, platform: NodeJS.Platform): Promise<ReportItem> {
  const cxx = env['CXX'] ?? 'c++';
  const dir = await mkdtemp(path.join(os.tmpdir(), 'msp-sanitize-'));
  try {
    const file = path.join(dir, 'probe.cpp');
    await writeFile(file, 'int main() { return 0; }\n');
    const links = await Promise.all(
      (['address', 'undefined'] as const).map(
        async (s) => (await probe(cxx, [`-fsanitize=${s}`, file, '-o', path.join(dir, s)], env)) !== null,
      ),
    );
    const missing = [links[0] ? null : 'AddressSanitizer', links[1] ? null : 'UndefinedBehaviorSanitizer'].filter(
      (x): x is string => x !== null,
    );
    return {
      id: 'sanitizers',
      title: 'Sanitizer runtimes (libasan, libubsan)',
      status: missing.length ? 'warn' : 'pass',
      detail: missing.length
        ? `${cxx} cannot link with ${missing.join(', ')}: test --sanitize cannot run`
        : `${cxx} links with -fsanitize=address and -fsanitize=undefined`,
      ...(missing.length ? { fix: platform === 'darwin' ? 'xcode-select --install' : apt('g++') } : {}),
      required: false,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function inspectNinja(env: Env, platform: NodeJS.Platform): Promise<ReportItem> {
  const out = await probe('ninja', ['--version'], env);
  return out
    ? { id: 'ninja', title: 'Ninja', status: 'pass', detail: `ninja ${out}`, required: false }
    : {
        id: 'ninja',
        title: 'Ninja',
        status: 'warn',
        detail: 'not found: builds use Makefiles and show no progress bar',
        fix: platform === 'darwin' ? 'brew install ninja' : apt('ninja-build'),
        required: false,
      };
}

export async function inspectCcache(env: Env, platform: NodeJS.Platform): Promise<ReportItem> {
  const out = await probe('ccache', ['--version'], env);
  return out
    ? { id: 'ccache', title: 'ccache', status: 'pass', detail: out.split('\n')[0] ?? 'found', required: false }
    : {
        id: 'ccache',
        title: 'ccache',
        status: 'warn',
        detail: 'not found: every fresh build directory compiles from scratch (about 12 min on 2 cores)',
        fix: platform === 'darwin' ? 'brew install ccache' : apt('ccache'),
        required: false,
      };
}

/**
 * The Metal twin (test --metal-twin, verify's twin and mutant checks) copies
 * the static library with binutils' objcopy after reading symbols with nm.
 */
export async function inspectTwinTools(env: Env, platform: NodeJS.Platform): Promise<ReportItem> {
  const title = 'Metal twin tools (nm, objcopy)';
  if (platform === 'darwin')
    return {
      id: 'twin',
      title,
      status: 'pass',
      detail: 'not needed on macOS: the Metal-only cases run for real in the suite',
      required: false,
    };
  const [nm, objcopy] = await Promise.all([probe('nm', ['--version'], env), probe('objcopy', ['--version'], env)]);
  if (nm && objcopy)
    return { id: 'twin', title, status: 'pass', detail: nm.split('\n')[0] ?? 'found', required: false };
  return {
    id: 'twin',
    title,
    status: 'warn',
    detail: `${nm ? 'objcopy' : 'nm'} not found: the Metal-only cases cannot run on the host twin`,
    fix: apt('binutils'),
    required: false,
  };
}

/** Where Debian, Ubuntu and Fedora put BLAS/LAPACK headers and libraries; CMake's FindBLAS looks there too. */
export const BLAS_SEARCH = {
  headerDirs: [
    '/usr/include',
    '/usr/include/x86_64-linux-gnu',
    '/usr/include/aarch64-linux-gnu',
    '/usr/include/openblas',
    '/usr/local/include',
  ],
  libDirs: [
    '/usr/lib/x86_64-linux-gnu',
    '/usr/lib/aarch64-linux-gnu',
    '/lib/x86_64-linux-gnu',
    '/lib/aarch64-linux-gnu',
    '/usr/lib64',
    '/usr/lib',
    '/usr/local/lib',
  ],
  // ldconfig lives in /sbin, which a normal user's PATH often lacks; PATH is the last resort.
  ldconfig: ['/sbin/ldconfig', '/usr/sbin/ldconfig', 'ldconfig'],
};

/**
 * BLAS/LAPACK headers and libraries, found by looking in the usual folders
 * and in ldconfig's cache (ldconfig run by its full path, so the check does
 * not depend on PATH).
 */
export async function inspectBlas(
  env: Env,
  platform: NodeJS.Platform,
  search: typeof BLAS_SEARCH = BLAS_SEARCH,
): Promise<ReportItem> {
  if (platform === 'darwin')
    return { id: 'blas', title: 'BLAS/LAPACK', status: 'pass', detail: 'Accelerate (macOS)', required: true };
  const has = (name: string) => search.headerDirs.some((d) => existsSync(path.join(d, name)));
  const hasLib = (names: string[]) => search.libDirs.some((d) => names.some((n) => existsSync(path.join(d, n))));
  let cache = '';
  for (const ldconfig of search.ldconfig) {
    if (path.isAbsolute(ldconfig) && !existsSync(ldconfig)) continue;
    const out = await probe(ldconfig, ['-p'], env);
    if (out !== null) {
      cache = out;
      break;
    }
  }
  const missing = [
    has('cblas.h') ? null : 'cblas.h',
    has('lapacke.h') ? null : 'lapacke.h',
    hasLib(['libblas.so', 'libopenblas.so']) || /lib(open)?blas\.so\s/.test(cache) ? null : 'libblas',
    hasLib(['liblapack.so']) || /liblapack\.so\s/.test(cache) ? null : 'liblapack',
  ].filter((x): x is string => x !== null);
  return {
    id: 'blas',
    title: 'BLAS/LAPACK headers and libraries',
    status: missing.length ? 'fail' : 'pass',
    detail: missing.length ? `missing ${missing.join(', ')}` : 'cblas.h, lapacke.h, libblas, liblapack',
    fix: apt('libopenblas-dev liblapacke-dev'),
    required: true,
  };
}

export async function inspectXcode(env: Env, platform: NodeJS.Platform): Promise<ReportItem[]> {
  if (platform !== 'darwin') return [];
  const clt = await probe('xcode-select', ['-p'], env);
  const metal = await probe('xcrun', ['-sdk', 'macosx', 'metal', '--version'], env);
  return [
    {
      id: 'xcode',
      title: 'Xcode command-line tools',
      status: clt ? 'pass' : 'fail',
      detail: clt ?? 'not installed',
      fix: 'xcode-select --install',
      required: true,
    },
    {
      id: 'metal',
      title: 'Metal shader compiler',
      status: metal ? 'pass' : 'fail',
      detail: metal?.split('\n')[0] ?? 'xcrun metal not found',
      fix: 'Install Xcode, then: xcodebuild -downloadComponent MetalToolchain',
      required: true,
    },
  ];
}

export async function inspectDisk(dir: string): Promise<ReportItem> {
  let target = dir;
  while (!existsSync(target)) target = path.dirname(target);
  const stats = await statfs(target);
  const gib = (stats.bavail * stats.bsize) / 2 ** 30;
  const status = gib < 3 ? 'fail' : gib < 8 ? 'warn' : 'pass';
  return {
    id: 'disk',
    title: 'Free disk',
    status,
    detail: `${gib.toFixed(1)} GiB free at ${target} (two MLX builds need about 3 GiB)`,
    fix: 'Free space, or pass --workdir on a larger disk',
    required: true,
  };
}

export function inspectOffline(plan: OfflinePlan): ReportItem[] {
  return [
    ...plan.deps.map((d): ReportItem => ({
      id: `offline-${d.dep}`,
      title: `offline ${d.dep}`,
      status: 'pass',
      detail: d.source,
      required: true,
    })),
    ...plan.missing.map((m): ReportItem => ({
      id: `offline-${m.dep}`,
      title: `offline ${m.dep}`,
      status: 'fail',
      detail: 'no local copy',
      fix: m.fix,
      required: true,
    })),
  ];
}

/** The checks `test` needs before it starts a build. */
export async function buildToolItems(
  env: Env,
  workdir: string,
  mlx: boolean,
  platform: NodeJS.Platform,
): Promise<ReportItem[]> {
  const checks = await Promise.all([
    inspectCmake(env, platform),
    inspectCompiler(env, platform),
    inspectNinja(env, platform),
    inspectCcache(env, platform),
    inspectDisk(workdir),
    inspectTwinTools(env, platform),
  ]);
  if (mlx) checks.push(await inspectBlas(env, platform), ...(await inspectXcode(env, platform)));
  return checks;
}
