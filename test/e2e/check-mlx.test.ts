import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { execa } from 'execa';
import { describe, expect, it } from 'vitest';

import { REPO_ROOT, runCli, tempDir } from '../support/repos.js';
import { describeName, mlxRepo } from '../support/mlx.js';

const found = mlxRepo();
const config = JSON.parse(readFileSync(path.join(REPO_ROOT, 'mlx-storage-pr.config.json'), 'utf8')) as {
  upstream: { commit: string };
};
const pin = config.upstream.commit;
const mlx = async (...args: string[]) => (await execa('git', ['-C', found.repo as string, ...args])).stdout.trim();

/** Why the history test cannot run: no MLX_REPO, or one without the history before the pin (a depth-1 copy). */
async function historyReason(): Promise<string | null> {
  if (found.reason) return found.reason;
  if ((await mlx('rev-parse', '--is-shallow-repository')) === 'true')
    return `skipped: MLX_REPO=${found.repo} is shallow; checking older commits needs MLX's history (git clone --mirror https://github.com/ml-explore/mlx.git)`;
  return null;
}
const reason = await historyReason();
if (reason) console.warn(`check on the real MLX: ${reason}`);

/** The last commit on the pin's first-parent line at least `days` before it. */
async function before(days: number): Promise<string> {
  const pinned = Number(await mlx('log', '-1', '--format=%ct', pin));
  return mlx('log', '-1', '--first-parent', `--before=${pinned - days * 86400}`, '--format=%H', pin);
}

type Step = { name: string; files: string[]; status: string; reasons: Array<{ file: string; reason: string }> };
type Ref = { commit: string; status: string; upstreamChanged: string[]; templates: Step[]; patches: Step[] };

describe.skipIf(reason !== null)(
  reason ? `check on the real MLX (${reason})` : describeName('check on the real MLX'),
  () => {
    it('reports every template and patch on commits about 3 and 12 months before the pin, with reasons that match the history, and the pin itself as clean', async () => {
      const commits = [await before(91), await before(365)];
      const workdir = tempDir('msp-e2e-check-');
      const started = performance.now();
      const result = await runCli(
        ['check', '--mlx-repo', found.repo as string, '--workdir', workdir, '--against', ...commits, pin, '--json'],
        { cwd: REPO_ROOT },
      );
      console.info(
        `check against ${commits.join(', ')} and the pin: ${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
      const refs = result.json.refs as Ref[];
      expect(refs.map((r) => r.commit)).toEqual([...commits, pin]);
      expect(result.code, result.stderr).toBe(refs.some((r) => r.status === 'conflict') ? 4 : 0);

      const patches = readFileSync(path.join(REPO_ROOT, 'patches', 'series'), 'utf8')
        .split('\n')
        .map((l) => l.replace(/#.*/, '').trim())
        .filter(Boolean);
      const templates = readdirSync(path.join(REPO_ROOT, 'templates'), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile())
        .map((e) => path.relative(REPO_ROOT, path.join(e.parentPath, e.name)))
        .sort();
      for (const ref of refs) {
        expect(ref.patches.map((p) => p.name)).toEqual(patches);
        expect(ref.templates.map((t) => t.name).sort()).toEqual(templates);
        const files = [...ref.templates, ...ref.patches].flatMap((s) => s.files);
        // The files upstream changed, by git itself.
        const changed = (await mlx('diff', '--name-only', pin, ref.commit, '--', ...files)).split('\n').filter(Boolean);
        expect([...ref.upstreamChanged].sort()).toEqual([...new Set(changed)].sort());
        for (const step of [...ref.templates, ...ref.patches]) {
          expect(step.reasons.length > 0, `${step.name}: ${step.status}`).toBe(step.status !== 'clean');
          for (const r of step.reasons.filter((x) => x.reason === 'upstream_changed' || x.reason === 'patch_changed'))
            expect(r.reason, `${step.name}: ${r.file}`).toBe(
              changed.includes(r.file) ? 'upstream_changed' : 'patch_changed',
            );
        }
      }
      const atPin = refs[2] as Ref;
      expect(atPin.status).toBe('clean');
      expect(atPin.upstreamChanged).toEqual([]);
    });
  },
);
