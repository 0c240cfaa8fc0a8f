import path from 'node:path';

export interface Source {
  kind: 'url' | 'path';
  /** What the user gave, for messages. */
  display: string;
  /** What git fetches from. */
  location: string;
}

/** Where MLX comes from: --mlx-repo, then MLX_REPO, then the config's upstream URL. */
export function chooseSource(
  flag: string | undefined,
  env: string | undefined,
  configUrl: string,
  cwd: string,
): Source {
  const value = flag ?? (env && env.length > 0 ? env : undefined) ?? configUrl;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value) || /^[\w.-]+@[\w.-]+:/.test(value)) {
    return { kind: 'url', display: value, location: value };
  }
  const absolute = path.resolve(cwd, value);
  // file:// makes git honour --depth for local repositories too.
  return { kind: 'path', display: absolute, location: `file://${absolute}` };
}
