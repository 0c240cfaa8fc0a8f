import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { z } from 'zod';

import { readJsonFile } from '../adapters/files.js';
import { UserError } from '../core/errors.js';
import type { WorkdirLayout } from '../core/workdir.js';

export interface Source {
  kind: 'url' | 'path';
  /** What the user gave, for messages. */
  display: string;
  /** What git fetches from. */
  location: string;
  /** Where it was chosen: --mlx-repo, MLX_REPO, the source the last apply recorded, or the config's upstream URL. */
  origin: 'option' | 'env' | 'apply' | 'config';
}

/**
 * Where MLX comes from: --mlx-repo, then MLX_REPO, then the source the last
 * `apply` in this workdir used (`remembered`), then the config's upstream URL.
 */
export function chooseSource(
  flag: string | undefined,
  env: string | undefined,
  configUrl: string,
  cwd: string,
  remembered: string | null = null,
): Source {
  // An empty option would otherwise name the current folder; an empty MLX_REPO counts as unset.
  if (flag !== undefined && flag.trim() === '') {
    throw new UserError('SOURCE_INVALID', '--mlx-repo is empty.', {
      hint: `Name an MLX clone or mirror (--mlx-repo ~/src/mlx), or leave the option out to use ${remembered ?? configUrl}.`,
    });
  }
  if (flag === undefined && env !== undefined && env.length > 0 && env.trim() === '') {
    throw new UserError('SOURCE_INVALID', 'MLX_REPO holds only spaces.', {
      hint: 'Run `unset MLX_REPO`, or set it to an MLX clone or mirror.',
    });
  }
  const given = env && env.length > 0 ? env : undefined;
  const [value, origin]: [string, Source['origin']] =
    flag !== undefined
      ? [flag, 'option']
      : given !== undefined
        ? [given, 'env']
        : remembered !== null && remembered !== configUrl
          ? [remembered, 'apply']
          : [configUrl, 'config'];
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value) || /^[\w.-]+@[\w.-]+:/.test(value)) {
    return { kind: 'url', display: value, location: value, origin };
  }
  const absolute = path.resolve(cwd, value);
  // file:// makes git honour --depth for local repositories too.
  return { kind: 'path', display: absolute, location: `file://${absolute}`, origin };
}

/** The source as `apply` records it: an absolute path, or the URL without an http(s) user part (no token is ever written). */
export function recordedForm(source: Source): string {
  return source.kind === 'path' ? source.display : source.display.replace(/^(https?:\/\/)[^/@]*@/i, '$1');
}

const RecordedSourceSchema = z.object({ source: z.string().min(1) });
/** The mark in `source.json` that the tool wrote it: `clean --all` removes only a marked one. */
const MADE_BY = { madeBy: 'mlx-storage-pr' } as const;
const MarkedSourceSchema = RecordedSourceSchema.extend({ madeBy: z.literal(MADE_BY.madeBy) });

/** True when the workdir's `source.json` is one the tool wrote (it carries the tool's mark). */
export async function isRecordedSourceMarked(layout: WorkdirLayout): Promise<boolean> {
  return (await readJsonFile(layout.source, MarkedSourceSchema)) !== null;
}

/** The source the last `apply` in this workdir recorded, or null (none, or a file the tool cannot use). */
export async function readRecordedSource(layout: WorkdirLayout): Promise<string | null> {
  return (await readJsonFile(layout.source, RecordedSourceSchema))?.source ?? null;
}

/** Records the source `apply` used, for the commands after it (written aside, then renamed into place). */
export function recordSource(layout: WorkdirLayout, source: Source): void {
  const value: z.infer<typeof MarkedSourceSchema> = { source: recordedForm(source), ...MADE_BY };
  mkdirSync(layout.root, { recursive: true });
  const draft = `${layout.source}.${process.pid}`;
  writeFileSync(draft, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(draft, layout.source);
}
