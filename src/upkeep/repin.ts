/** Moving the series to another pinned commit: the version there and the config's text with the new pin. */

import type { Config } from '../series/config.js';

/** MLX's version at a commit: `mlx/version.h` (MLX_VERSION_MAJOR/MINOR/PATCH), else `project(mlx ... VERSION x.y.z)` in CMakeLists.txt. */
export function mlxVersion(versionHeader: string | null, cmakeLists: string | null): string | null {
  if (versionHeader !== null) {
    const part = (name: string) => new RegExp(`^#define MLX_VERSION_${name} (\\d+)\\s*$`, 'm').exec(versionHeader)?.[1];
    const [major, minor, patch] = [part('MAJOR'), part('MINOR'), part('PATCH')];
    if (major !== undefined && minor !== undefined && patch !== undefined) return `${major}.${minor}.${patch}`;
  }
  if (cmakeLists !== null) {
    const m = /\bproject\s*\(\s*mlx\b[^)]*\bVERSION\s+(\d+\.\d+\.\d+)/i.exec(cmakeLists);
    if (m) return m[1] as string;
  }
  return null;
}

/**
 * The config file's text with `upstream.commit` and `upstream.version`
 * changed in place, so the rest of the file (order, spacing) stays as the
 * user wrote it. Null when the values are not found as written.
 */
export function repinConfigText(
  text: string,
  from: { commit: string; version: string },
  to: { commit: string; version: string },
): string | null {
  const commit = new RegExp(`("commit"\\s*:\\s*")${from.commit}(")`);
  const version = new RegExp(`("version"\\s*:\\s*")${from.version.replaceAll('.', '\\.')}(")`);
  if (!commit.test(text) || !version.test(text)) return null;
  return text.replace(commit, `$1${to.commit}$2`).replace(version, `$1${to.version}$2`);
}

/**
 * The config's text with `upstream.metalCpp.url` set to `url` and its
 * sha256 removed (a new archive has not been checked yet), or null when the
 * config pins no metal-cpp or already pins `url`. Only those lines change.
 */
export function repinMetalCppText(
  text: string,
  from: { url: string; sha256?: string | undefined },
  url: string,
): string | null {
  if (from.url === url) return null;
  const urlLine = new RegExp(`("url"\\s*:\\s*")${from.url.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(")`);
  if (!urlLine.test(text)) return null;
  let out = text.replace(urlLine, `$1${url}$2`);
  if (from.sha256 !== undefined)
    out = out
      .replace(new RegExp(`,\\s*"sha256"\\s*:\\s*"${from.sha256}"`), '')
      .replace(new RegExp(`"sha256"\\s*:\\s*"${from.sha256}"\\s*,\\s*`), '');
  return out;
}

/** The config as it will be once the bump is done: the new commit and version. */
export function configAt(config: Config, to: { commit: string; version: string }): Config {
  return { ...config, upstream: { ...config.upstream, commit: to.commit, version: to.version } };
}
