/**
 * Where a CMake configure would download from: the `URL` and
 * `GIT_REPOSITORY` addresses of FetchContent declarations. Pure: the
 * CMake files come in as text.
 */

export interface DownloadSource {
  url: string;
  host: string;
  port: number;
  /** The file that names the address, relative to the source tree. */
  file: string;
  /** How many other addresses name the same host and port. */
  more: number;
}

const DEFAULT_PORTS: Record<string, number> = { 'https:': 443, 'http:': 80, 'git:': 9418, 'ssh:': 22 };

/** The addresses in `files`, one per host and port (the first that names it). Addresses built from variables are skipped. */
export function downloadSources(files: ReadonlyArray<{ path: string; text: string }>): DownloadSource[] {
  const found = new Map<string, DownloadSource>();
  for (const file of files) {
    for (const raw of file.text.split('\n')) {
      const line = raw.replace(/#.*/, '');
      for (const m of line.matchAll(/\b(?:URL|GIT_REPOSITORY)\s+"?([a-z][a-z0-9+.-]*:\/\/[^\s")]+)/gi)) {
        const url = m[1] as string;
        if (url.includes('${')) continue;
        let parsed: URL;
        try {
          parsed = new URL(url);
        } catch {
          continue;
        }
        const port = parsed.port ? Number(parsed.port) : DEFAULT_PORTS[parsed.protocol];
        if (port === undefined || parsed.hostname === '') continue;
        const key = `${parsed.hostname}:${port}`;
        const seen = found.get(key);
        if (seen) seen.more++;
        else found.set(key, { url, host: parsed.hostname, port, file: file.path, more: 0 });
      }
    }
  }
  return [...found.values()];
}

/** The proxy that carries requests to `url`, from the usual environment variables, if any. */
export function proxyFor(
  url: string,
  env: Readonly<Record<string, string | undefined>>,
): { host: string; port: number } | null {
  const scheme = url.startsWith('https:') ? 'https' : url.startsWith('http:') ? 'http' : null;
  if (scheme === null) return null;
  const value = env[`${scheme}_proxy`] ?? env[`${scheme.toUpperCase()}_PROXY`] ?? env['all_proxy'] ?? env['ALL_PROXY'];
  if (!value) return null;
  try {
    const proxy = new URL(value.includes('://') ? value : `http://${value}`);
    return { host: proxy.hostname, port: proxy.port ? Number(proxy.port) : (DEFAULT_PORTS[proxy.protocol] ?? 80) };
  } catch {
    return null;
  }
}
