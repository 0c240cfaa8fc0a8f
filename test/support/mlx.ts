import { existsSync } from 'node:fs';

/** The local MLX repository named by MLX_REPO, or the reason real-MLX tests skip. */
export function mlxRepo(): { repo: string; reason: null } | { repo: null; reason: string } {
  const repo = process.env['MLX_REPO'];
  if (!repo)
    return { repo: null, reason: 'skipped: MLX_REPO is not set (point it at a local MLX repository or mirror)' };
  if (!existsSync(repo)) return { repo: null, reason: `skipped: MLX_REPO=${repo} does not exist` };
  return { repo, reason: null };
}

export function describeName(name: string): string {
  const { reason } = mlxRepo();
  if (reason) console.warn(`${name}: ${reason}`);
  return reason ? `${name} (${reason})` : name;
}
