import { loadClangFormat } from '../adapters/clang-format.js';
import { findCMakeFormat } from '../adapters/cmake-format.js';
import type { Env } from '../adapters/env.js';
import type { Logger } from '../adapters/log.js';
import { probe } from '../adapters/process.js';
import { findSphinx } from '../adapters/sphinx.js';
import type { CheckResult } from '../core/checks.js';
import {
  apt,
  checkBlas,
  checkCcache,
  checkCmake,
  checkCompiler,
  checkDisk,
  checkNinja,
  checkOffline,
  checkXcode,
} from './doctor-checks.js';
import { DEFAULT_CMAKE_FORMAT } from './formatting.js';
import { metalToolchainChecks } from './metal-toolchain.js';
import { probeOffline } from '../build/offline-deps.js';

/**
 * The machine checks for every command (`doctor`): the build checks `test`
 * runs before a build, plus git, the formatters, Sphinx and the Metal
 * type-check toolchain.
 */
export async function checkGit(env: Env, platform: NodeJS.Platform): Promise<CheckResult> {
  const out = await probe('git', ['--version'], env);
  return out
    ? { id: 'git', title: 'git', status: 'pass', detail: out.split('\n')[0] ?? out, required: true }
    : {
        id: 'git',
        title: 'git',
        status: 'fail',
        detail: 'git not found',
        fix: platform === 'darwin' ? 'xcode-select --install' : apt('git'),
        required: true,
      };
}

/** Sphinx, which verify's docs check builds the PR's pages with; found as that check finds it (SPHINXBUILD, else PATH). */
export async function checkSphinx(env: Env, log: Logger, platform: NodeJS.Platform): Promise<CheckResult> {
  const found = await findSphinx(env, log);
  return found.tool
    ? {
        id: 'sphinx',
        title: 'Sphinx (sphinx-build)',
        status: 'pass',
        detail: `${found.tool.command} ${found.tool.version}`,
        required: true,
      }
    : {
        id: 'sphinx',
        title: 'Sphinx (sphinx-build)',
        status: 'fail',
        detail: found.reason,
        fix: platform === 'darwin' ? 'pip install sphinx' : apt('python3-sphinx'),
        required: true,
      };
}

/** cmake-format at the version MLX pins, on PATH or through uvx/pipx. */
export async function checkCMakeFormat(env: Env, log: Logger, platform: NodeJS.Platform): Promise<CheckResult> {
  const title = `cmake-format ${DEFAULT_CMAKE_FORMAT}`;
  const found = await findCMakeFormat(DEFAULT_CMAKE_FORMAT, env, log);
  if (found.tool)
    return { id: 'cmake-format', title, status: 'pass', detail: found.tool.command.join(' '), required: true };
  const fix = `pip install cmakelang==${DEFAULT_CMAKE_FORMAT}${platform === 'darwin' ? '' : ` (Debian 12: ${apt('cmake-format')})`}`;
  return { id: 'cmake-format', title, status: 'fail', detail: found.reason, fix, required: true };
}

/** The clang-format bundled as WebAssembly: nothing to install, but it must load. */
export async function checkClangFormat(): Promise<CheckResult> {
  try {
    const cf = await loadClangFormat();
    return {
      id: 'clang-format',
      title: 'clang-format',
      status: 'pass',
      detail: `${cf.version} (bundled WebAssembly)`,
      required: true,
    };
  } catch (error) {
    return {
      id: 'clang-format',
      title: 'clang-format',
      status: 'fail',
      detail: `the bundled clang-format does not load: ${(error as Error).message}`,
      fix: 'npm ci',
      required: true,
    };
  }
}

/**
 * Runs the machine checks whose ids (or id prefixes, such as `offline-`) are
 * in `wanted`, in a fixed order.
 */
export async function machineChecks(
  wanted: ReadonlySet<string>,
  o: {
    env: Env;
    platform: NodeJS.Platform;
    workdir: string;
    log: Logger;
    depsDir: string | undefined;
    generatedRoot: string;
  },
): Promise<CheckResult[]> {
  const want = (id: string) => wanted.has(id);
  const none = Promise.resolve<CheckResult[]>([]);
  const groups = await Promise.all([
    want('git') ? checkGit(o.env, o.platform).then((c) => [c]) : none,
    want('cmake') ? checkCmake(o.env, o.platform).then((c) => [c]) : none,
    want('compiler') ? checkCompiler(o.env, o.platform).then((c) => [c]) : none,
    want('blas') ? checkBlas(o.env, o.platform).then((c) => [c]) : none,
    want('xcode') || want('metal') ? checkXcode(o.env, o.platform) : none,
    want('disk') ? checkDisk(o.workdir).then((c) => [c]) : none,
    want('ninja') ? checkNinja(o.env, o.platform).then((c) => [c]) : none,
    want('ccache') ? checkCcache(o.env, o.platform).then((c) => [c]) : none,
    want('offline-') ? checkOffline(probeOffline(o.depsDir, o.generatedRoot, o.platform)) : none,
    want('clang-format') ? checkClangFormat().then((c) => [c]) : none,
    want('cmake-format') ? checkCMakeFormat(o.env, o.log, o.platform).then((c) => [c]) : none,
    want('sphinx') ? checkSphinx(o.env, o.log, o.platform).then((c) => [c]) : none,
    want('metal-clang') || want('metal-libcxx')
      ? metalToolchainChecks({ env: o.env, log: o.log, platform: o.platform })
      : none,
  ]);
  return groups.flat();
}
