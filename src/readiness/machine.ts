import { loadClangFormat } from '../adapters/clang-format.js';
import { findCMakeFormat } from '../adapters/cmake-format.js';
import type { Env } from '../adapters/env.js';
import type { Logger } from '../adapters/log.js';
import { probe } from '../adapters/process.js';
import { findSphinx } from '../adapters/sphinx.js';
import type { ReportItem } from '../core/report-items.js';
import {
  apt,
  inspectBlas,
  inspectCcache,
  inspectSanitizers,
  inspectUpstreamCompiler,
  inspectCmake,
  inspectCompiler,
  inspectDisk,
  inspectNinja,
  inspectOffline,
  inspectTwinTools,
  inspectXcode,
} from './doctor-checks.js';
import { DEFAULT_CMAKE_FORMAT } from './formatting.js';
import { inspectMetalCpp, metalToolchainItems } from './metal-toolchain.js';
import { probeOffline } from '../build/offline-deps.js';

/**
 * The machine checks for every command (`doctor`): the build checks `test`
 * runs before a build, plus git, the formatters, Sphinx and the Metal
 * type-check toolchain.
 */
export async function inspectGit(env: Env, platform: NodeJS.Platform): Promise<ReportItem> {
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
export async function inspectSphinx(env: Env, log: Logger, platform: NodeJS.Platform): Promise<ReportItem> {
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
export async function inspectCMakeFormat(env: Env, log: Logger, platform: NodeJS.Platform): Promise<ReportItem> {
  const title = `cmake-format ${DEFAULT_CMAKE_FORMAT}`;
  const found = await findCMakeFormat(DEFAULT_CMAKE_FORMAT, env, log);
  if (found.tool)
    return { id: 'cmake-format', title, status: 'pass', detail: found.tool.command.join(' '), required: true };
  const fix = `pip install cmakelang==${DEFAULT_CMAKE_FORMAT}${platform === 'darwin' ? '' : ` (Debian 12: ${apt('cmake-format')})`}`;
  return { id: 'cmake-format', title, status: 'fail', detail: found.reason, fix, required: true };
}

/** The clang-format bundled as WebAssembly: nothing to install, but it must load. */
export async function inspectClangFormat(): Promise<ReportItem> {
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
export async function machineItems(
  wanted: ReadonlySet<string>,
  o: {
    env: Env;
    platform: NodeJS.Platform;
    workdir: string;
    log: Logger;
    depsDir: string | undefined;
    generatedRoot: string;
    /** Where check-metal unpacks metal-cpp, and the archive the config pins. */
    metalCppCache: string;
    metalCppPin?: { url: string; sha256?: string | undefined } | undefined;
  },
): Promise<ReportItem[]> {
  const want = (id: string) => wanted.has(id);
  const none = Promise.resolve<ReportItem[]>([]);
  const groups = await Promise.all([
    want('git') ? inspectGit(o.env, o.platform).then((c) => [c]) : none,
    want('cmake') ? inspectCmake(o.env, o.platform).then((c) => [c]) : none,
    want('compiler') ? inspectCompiler(o.env, o.platform).then((c) => [c]) : none,
    want('blas') ? inspectBlas(o.env, o.platform).then((c) => [c]) : none,
    want('xcode') || want('metal') ? inspectXcode(o.env, o.platform) : none,
    want('disk') ? inspectDisk(o.workdir).then((c) => [c]) : none,
    want('ninja') ? inspectNinja(o.env, o.platform).then((c) => [c]) : none,
    want('ccache') ? inspectCcache(o.env, o.platform).then((c) => [c]) : none,
    want('gxx-11') ? inspectUpstreamCompiler(o.env, o.platform).then((c) => [c]) : none,
    want('sanitizers') ? inspectSanitizers(o.env, o.platform).then((c) => [c]) : none,
    want('twin') ? inspectTwinTools(o.env, o.platform).then((c) => [c]) : none,
    want('offline-') ? inspectOffline(probeOffline(o.depsDir, o.generatedRoot, o.platform)) : none,
    want('clang-format') ? inspectClangFormat().then((c) => [c]) : none,
    want('cmake-format') ? inspectCMakeFormat(o.env, o.log, o.platform).then((c) => [c]) : none,
    want('sphinx') ? inspectSphinx(o.env, o.log, o.platform).then((c) => [c]) : none,
    want('metal-clang') || want('metal-libcxx')
      ? metalToolchainItems({ env: o.env, log: o.log, platform: o.platform })
      : none,
    want('metal-cpp')
      ? inspectMetalCpp({ cacheDir: o.metalCppCache, pin: o.metalCppPin, env: o.env }).then((c) => [c])
      : none,
  ]);
  return groups.flat();
}
