import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { readFile, rename, rm } from 'node:fs/promises';
import path from 'node:path';

import { download, extractZip } from '../adapters/archive.js';
import { clangFailure, clangVersionText, libcxxVersionText } from '../adapters/clang.js';
import { makeMarkedFolder } from '../adapters/files.js';
import { canConnect } from '../adapters/network.js';
import { proxyFor } from '../suite/downloads.js';
import type { Logger } from '../adapters/log.js';
import { ProcessError } from '../adapters/process-error.js';
import type { ReportItem } from '../core/report-items.js';
import { CONFIG_FILE, metalCppUrl } from '../series/config.js';
import { UserError } from '../core/errors.js';
import {
  DEFAULT_METAL_CPP_URL,
  metalCppRelease,
  MIN_CLANG_MAJOR,
  MIN_LIBCXX_MAJOR,
  parseClangVersion,
  parseLibcxxVersion,
} from './metal-flags.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface ClangToolchain {
  command: string;
  version: string;
  major: number;
  apple: boolean;
  libcxx: string;
}

export interface ToolchainLookup {
  toolchain: ClangToolchain | null;
  checks: ReportItem[];
}

/** The command that installs a working lane on this OS. */
export function metalToolchainInstall(platform: NodeJS.Platform): string {
  if (platform === 'darwin') return "xcode-select --install (Xcode's clang with its libc++ is enough)";
  return 'sudo apt-get install clang-19 libc++-19-dev libc++abi-19-dev (Debian/Ubuntu; elsewhere install clang >= 19 with libc++ >= 19)';
}

const CANDIDATES = ['clang++-22', 'clang++-21', 'clang++-20', 'clang++-19', 'clang++'];

export const CLANG_TITLE = 'clang for the Metal type-check';
export const METAL_CPP_TITLE = "Apple's metal-cpp (for the Metal type-check)";
export const LIBCXX_TITLE = 'libc++ for the Metal type-check';

/** The fix when `CLANGXX` names a compiler that does not do. */
function clangxxFix(platform: NodeJS.Platform): string {
  return `Point CLANGXX at a clang++ >= ${MIN_CLANG_MAJOR} with libc++ >= ${MIN_LIBCXX_MAJOR}, or unset it to search PATH (${CANDIDATES.join(', ')}). To install one: ${metalToolchainInstall(platform)}`;
}

/**
 * Finds a clang++ >= 19 whose `-stdlib=libc++` has libc++ >= 19 (on macOS,
 * Xcode's clang and its libc++). `CLANGXX`, when set, is the only candidate:
 * an explicit choice that fails is reported as such, never replaced by
 * another compiler. The result holds one check each for clang and libc++,
 * with the fix.
 */
export async function findMetalToolchain(options: {
  env: Env;
  log: Logger;
  platform: NodeJS.Platform;
  required?: boolean;
}): Promise<ToolchainLookup> {
  const platform = options.platform;
  const log = options.log;
  const required = options.required ?? false;
  const chosen = options.env['CLANGXX'];
  const explicit = chosen !== undefined && chosen !== '';
  const fix = explicit ? clangxxFix(platform) : metalToolchainInstall(platform);
  const seen: string[] = [];
  let clangOnly: { command: string; version: string; libcxxProblem: string } | null = null;
  const chosenFails = (detail: string): ToolchainLookup => ({
    toolchain: null,
    checks: [
      { id: 'metal-clang', title: CLANG_TITLE, status: 'fail', detail: `CLANGXX=${chosen}: ${detail}`, fix, required },
      {
        id: 'metal-libcxx',
        title: LIBCXX_TITLE,
        status: 'not-checked',
        detail: `not checked: CLANGXX=${chosen} does not work`,
        fix,
        required,
      },
    ],
  });

  for (const command of explicit ? [chosen] : CANDIDATES) {
    let text: string | null;
    try {
      text = await clangVersionText(command, options.env);
    } catch (error) {
      // A candidate that fails to run is passed over; CLANGXX that fails is the check's failure.
      if (!(error instanceof ProcessError)) throw error;
      if (!explicit) continue;
      return chosenFails(`cannot run \`${command} --version\` (${clangFailure(error)})`);
    }
    if (text === null) {
      if (!explicit) continue;
      return chosenFails(command.includes('/') ? 'no such file' : 'not found on PATH');
    }
    const parsed = parseClangVersion(text);
    if (parsed === null) {
      if (explicit)
        return chosenFails(
          `\`${command} --version\` does not name a clang version ("${text.trim().split('\n')[0] ?? ''}")`,
        );
      continue;
    }
    const accepted = parsed.major >= MIN_CLANG_MAJOR || (platform === 'darwin' && parsed.apple);
    if (!accepted) {
      if (explicit) return chosenFails(`clang ${parsed.version} is older than ${MIN_CLANG_MAJOR}`);
      seen.push(`${command} ${parsed.version}`);
      continue;
    }
    log.debug(`Found ${command} ${parsed.version}; checking libc++`);
    const libcxx = await probeLibcxx(command, options.env);
    const lib = libcxx.value === null ? null : parseLibcxxVersion(libcxx.value);
    if (lib !== null && (lib.major >= MIN_LIBCXX_MAJOR || (platform === 'darwin' && parsed.apple))) {
      const toolchain: ClangToolchain = {
        command,
        version: parsed.version,
        major: parsed.major,
        apple: parsed.apple,
        libcxx: lib.version,
      };
      return {
        toolchain,
        checks: [
          {
            id: 'metal-clang',
            title: CLANG_TITLE,
            status: 'pass',
            detail: `${explicit ? 'CLANGXX=' : ''}${command} ${parsed.version}${parsed.apple ? ' (Apple)' : ''}`,
            required,
          },
          {
            id: 'metal-libcxx',
            title: LIBCXX_TITLE,
            status: 'pass',
            detail: `libc++ ${lib.version} (${command} -stdlib=libc++)`,
            required,
          },
        ],
      };
    }
    clangOnly ??= {
      command,
      version: parsed.version,
      libcxxProblem: lib
        ? `libc++ ${lib.version} is older than ${MIN_LIBCXX_MAJOR}`
        : `no libc++ headers (${libcxx.error ?? 'unknown error'})`,
    };
  }

  return { toolchain: null, checks: missingToolchainItems({ clangOnly, seen, explicit, fix, required }) };
}

/** libc++'s version text from `command -stdlib=libc++`, or the compiler's complaint (its first two lines). */
async function probeLibcxx(command: string, env: Env): Promise<{ value: string | null; error: string | null }> {
  try {
    return { value: await libcxxVersionText(command, env), error: null };
  } catch (error) {
    if (!(error instanceof ProcessError)) throw error;
    return { value: null, error: error.stderr.trim().split('\n').slice(0, 2).join(' ') };
  }
}

/** The two checks when no candidate has both clang and libc++ >= 19: a clang without libc++ still passes its own check. */
function missingToolchainItems(o: {
  clangOnly: { command: string; version: string; libcxxProblem: string } | null;
  seen: readonly string[];
  explicit: boolean;
  fix: string;
  required: boolean;
}): ReportItem[] {
  const { clangOnly, seen, explicit, fix, required } = o;
  const clangItem: ReportItem = clangOnly
    ? {
        id: 'metal-clang',
        title: CLANG_TITLE,
        status: 'pass',
        detail: `${explicit ? 'CLANGXX=' : ''}${clangOnly.command} ${clangOnly.version}`,
        required,
      }
    : {
        id: 'metal-clang',
        title: CLANG_TITLE,
        status: 'fail',
        detail: `no clang++ >= ${MIN_CLANG_MAJOR} found${seen.length ? ` (found ${seen.join(', ')})` : ''}; set CLANGXX to use another compiler`,
        fix,
        required,
      };
  const libItem: ReportItem = {
    id: 'metal-libcxx',
    title: LIBCXX_TITLE,
    status: clangOnly ? 'fail' : 'not-checked',
    detail: clangOnly
      ? `${clangOnly.command}: ${clangOnly.libcxxProblem}; libstdc++ gives false errors with metal-cpp`
      : `not checked without clang++ >= ${MIN_CLANG_MAJOR}`,
    fix,
    required,
  };
  return [clangItem, libItem];
}

/** The checks `doctor` shows for the Metal type-check lane. */
export async function metalToolchainItems(options: {
  env: Env;
  log: Logger;
  platform: NodeJS.Platform;
  required?: boolean;
}): Promise<ReportItem[]> {
  return (await findMetalToolchain(options)).checks;
}

/** A toolchain, or a TOOL_MISSING error that names the install command. */
export async function requireMetalToolchain(env: Env, log: Logger, platform: NodeJS.Platform): Promise<ClangToolchain> {
  const { toolchain, checks } = await findMetalToolchain({ env, platform, log, required: true });
  if (toolchain) return toolchain;
  const failed = checks.filter((c) => c.status !== 'pass');
  const explicit = env['CLANGXX'] !== undefined && env['CLANGXX'] !== '';
  throw new UserError(
    'TOOL_MISSING',
    `The Metal type-check needs clang >= ${MIN_CLANG_MAJOR} with libc++ >= ${MIN_LIBCXX_MAJOR}: ${failed.map((c) => c.detail).join('; ')}.`,
    {
      hint: explicit ? clangxxFix(platform) : `Install them: ${metalToolchainInstall(platform)}`,
      details: { checks },
    },
  );
}

/** Where the archive at `url` is unpacked: a pinned archive is cached by its hash, so another archive under the same name is never taken for it. */
function metalCppCache(cacheDir: string, url: string, sha256: string | undefined): string {
  const name = path.basename(new URL(url).pathname, '.zip');
  return path.join(cacheDir, sha256 ? `${name}-${sha256.slice(0, 12)}` : name);
}

/**
 * Whether `check-metal` will have metal-cpp without `--metal-cpp`: the
 * pinned archive is unpacked in the workdir already, or its host (or the
 * proxy for it) can be reached to download it.
 */
export async function inspectMetalCpp(o: {
  cacheDir: string;
  pin?: { url: string; sha256?: string | undefined } | undefined;
  env: Env;
  offline: boolean;
  /** The metal-cpp folder or zip set once (`MLX_STORAGE_PR_METAL_CPP`), an absolute path; null when unset. */
  given: string | null;
}): Promise<ReportItem> {
  const title = METAL_CPP_TITLE;
  if (o.given !== null) {
    const usable = o.given.endsWith('.zip') ? existsSync(o.given) : metalCppRoot(o.given) !== null;
    return usable
      ? { id: 'metal-cpp', title, status: 'pass', detail: `${o.given} (MLX_STORAGE_PR_METAL_CPP)`, required: true }
      : {
          id: 'metal-cpp',
          title,
          status: 'fail',
          detail: `MLX_STORAGE_PR_METAL_CPP=${o.given} is not a metal-cpp folder (no Metal/Metal.hpp) or zip`,
          fix: "Point MLX_STORAGE_PR_METAL_CPP at Apple's metal-cpp 26 (the folder or its zip)",
          required: true,
        };
  }
  const url = o.pin?.url ?? DEFAULT_METAL_CPP_URL;
  const cache = metalCppCache(o.cacheDir, url, o.pin?.sha256);
  const cached = metalCppRoot(cache);
  if (cached !== null) return { id: 'metal-cpp', title, status: 'pass', detail: `cached at ${cached}`, required: true };
  if (existsSync(`${cache}.zip`))
    return {
      id: 'metal-cpp',
      title,
      status: 'pass',
      detail: `downloaded to ${cache}.zip, unpacked on first use`,
      required: true,
    };
  if (o.offline)
    return {
      id: 'metal-cpp',
      title,
      status: 'fail',
      detail: `not cached, and offline nothing is downloaded (${url})`,
      fix: `Pass --metal-cpp <dir|zip> with Apple's metal-cpp 26, or set MLX_STORAGE_PR_METAL_CPP once`,
      required: true,
    };
  const target = new URL(url);
  const proxy = proxyFor(url, o.env);
  const host = proxy ?? {
    host: target.hostname,
    port: Number(target.port) || (target.protocol === 'http:' ? 80 : 443),
  };
  const reached = await canConnect(host.host, host.port, 5000);
  if (reached.ok)
    return {
      id: 'metal-cpp',
      title,
      status: 'pass',
      detail: `not cached yet; check-metal downloads ${url} on first use`,
      required: true,
    };
  return {
    id: 'metal-cpp',
    title,
    status: 'fail',
    detail: `not cached, and ${host.host}:${host.port}${proxy ? ' (proxy)' : ''} cannot be reached (${reached.reason}) to download ${url}`,
    fix: `Pass --metal-cpp <dir|zip> with Apple's metal-cpp 26 (${url}, downloaded where there is network)`,
    required: true,
  };
}

/** The folder holding `Metal/Metal.hpp`: `dir` itself, or the one folder inside it (the zip's `metal-cpp/`). */
export function metalCppRoot(dir: string): string | null {
  if (existsSync(path.join(dir, 'Metal', 'Metal.hpp'))) return dir;
  if (!existsSync(dir) || !statSync(dir).isDirectory()) return null;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory() && existsSync(path.join(dir, entry.name, 'Metal', 'Metal.hpp')))
      return path.join(dir, entry.name);
  }
  return null;
}

async function unpack(zip: string, cache: string, env: Env, log: Logger): Promise<string> {
  const partial = `${cache}.partial-${process.pid}`;
  await rm(partial, { recursive: true, force: true });
  try {
    await extractZip(zip, partial, { env, log });
    await rm(cache, { recursive: true, force: true });
    await rename(partial, cache);
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
  const root = metalCppRoot(cache);
  if (root === null)
    throw new UserError('TOOL_MISSING', `${zip} holds no Metal/Metal.hpp: it is not Apple's metal-cpp.`, {
      hint: "Pass --metal-cpp <dir|zip> with Apple's metal-cpp 26.",
    });
  return root;
}

function warnOnOldRelease(root: string, log: Logger): void {
  const readme = path.join(root, 'README.md');
  const release = existsSync(readme) ? metalCppRelease(readFileSync(readme, 'utf8')) : null;
  if (release !== null && release < 26)
    log.warn(`${root} is metal-cpp for macOS ${release}; MLX uses metal-cpp 26, so newer APIs will look missing.`);
}

/**
 * The metal-cpp folder to compile against: `--metal-cpp` (a folder or a
 * zip), else the archive `upstream.metalCpp` pins (else the one MLX's CMake
 * names at the pin), checked against its sha256 and cached in `cacheDir`
 * (the workdir's `metal-cpp/`).
 */
export async function resolveMetalCpp(
  option: string | undefined,
  o: {
    cwd: string;
    cacheDir: string;
    cmakeText: string | null;
    /** `upstream.metalCpp` of the config: the archive to download and its hash. */
    pin?: { url: string; sha256?: string | undefined } | undefined;
    env: Env;
    log: Logger;
    /** Offline: a metal-cpp that is not cached is an error, not a download. */
    offline?: boolean | undefined;
  },
): Promise<string> {
  const hint = (url: string) => `Pass --metal-cpp <dir|zip> with Apple's metal-cpp 26 (MLX's CMake downloads ${url}).`;
  if (option !== undefined) {
    const given = path.resolve(o.cwd, option);
    if (!existsSync(given))
      throw new UserError('TOOL_MISSING', `--metal-cpp ${option}: no such file or folder.`, {
        hint: hint(DEFAULT_METAL_CPP_URL),
      });
    if (statSync(given).isFile()) {
      const digest = createHash('sha256')
        .update(await readFile(given))
        .digest('hex')
        .slice(0, 12);
      const cache = path.join(o.cacheDir, `${path.basename(given, '.zip')}-${digest}`);
      let root = metalCppRoot(cache);
      if (root === null) {
        await makeMarkedFolder(o.cacheDir);
        root = await unpack(given, cache, o.env, o.log);
      }
      warnOnOldRelease(root, o.log);
      return root;
    }
    const root = metalCppRoot(given);
    if (root === null)
      throw new UserError(
        'TOOL_MISSING',
        `--metal-cpp ${option} holds no Metal/Metal.hpp: it is not Apple's metal-cpp.`,
        { hint: hint(DEFAULT_METAL_CPP_URL) },
      );
    warnOnOldRelease(root, o.log);
    return root;
  }

  const cmakeUrl = o.cmakeText ? metalCppUrl(o.cmakeText) : null;
  const url = o.pin?.url ?? cmakeUrl ?? DEFAULT_METAL_CPP_URL;
  if (o.pin && cmakeUrl !== null && cmakeUrl !== o.pin.url)
    o.log.warn(
      `upstream.metalCpp.url in ${CONFIG_FILE} is ${o.pin.url}, but MLX's CMake at the pin names ${cmakeUrl}: ` +
        'the type-check uses the pinned one (`bump` moves it with the pin).',
    );
  const sha256 = o.pin?.sha256;
  const cache = metalCppCache(o.cacheDir, url, sha256);
  const cached = metalCppRoot(cache);
  if (cached) return cached;
  const zip = `${cache}.zip`;
  if (o.offline && !existsSync(zip))
    throw new UserError('TOOL_MISSING', `metal-cpp is not cached here, and offline nothing is downloaded (${url}).`, {
      hint: `${hint(url)} Set MLX_STORAGE_PR_METAL_CPP once to use it in every command.`,
    });
  try {
    await makeMarkedFolder(o.cacheDir);
    if (!existsSync(zip)) await download(url, zip, o.log);
    verifyMetalCppDigest(url, await sha256Of(zip), sha256, o.log);
    return await unpack(zip, cache, o.env, o.log);
  } catch (error) {
    if (error instanceof UserError && error.code === 'CHECKSUM_MISMATCH') await rm(zip, { force: true });
    if (error instanceof UserError) throw error;
    await rm(zip, { force: true });
    throw new UserError('TOOL_MISSING', `Cannot get metal-cpp from ${url}: ${(error as Error).message}`, {
      hint: hint(url),
    });
  }
}

async function sha256Of(file: string): Promise<string> {
  return createHash('sha256')
    .update(await readFile(file))
    .digest('hex');
}

/**
 * Checks a downloaded archive against `upstream.metalCpp.sha256`. Unset, it
 * only says the hash to record; set, a mismatch stops the type-check.
 */
export function verifyMetalCppDigest(url: string, actual: string, pinned: string | undefined, log: Logger): void {
  if (pinned === undefined) {
    log.warn(
      `metal-cpp ${url} has sha256 ${actual}; nothing checks it yet: set upstream.metalCpp.sha256 to ${actual} in ${CONFIG_FILE}.`,
    );
    return;
  }
  if (actual !== pinned)
    throw new UserError(
      'CHECKSUM_MISMATCH',
      `metal-cpp ${url} has sha256 ${actual}, but upstream.metalCpp.sha256 in ${CONFIG_FILE} is ${pinned}.`,
      {
        hint: `The archive is not the one the config pins. If Apple replaced it on purpose, check the new archive and set upstream.metalCpp.sha256 to its hash; or pass --metal-cpp <dir|zip>.`,
        details: { url, actual, pinned },
      },
    );
}
