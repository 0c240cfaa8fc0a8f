import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { z } from 'zod';

import { readJsonFile } from '../adapters/files.js';

/**
 * How long a big build takes here, said before it starts. A build of fewer
 * steps than this is an incremental one: it gets no estimate and teaches none.
 */
export const ESTIMATE_MIN_STEPS = 50;

/** Seconds of one core a step of MLX's `tests` target takes when nothing is cached (2 cores, g++ 12, Release). */
const FIRST_GUESS_CORE_SECONDS = 7;

/** The slowest wall seconds a step has taken here, per kind of build (its folder's name: build type, compiler, options) and number of jobs. */
const RatesSchema = z.record(z.string(), z.number().positive());
export type Rates = z.infer<typeof RatesSchema>;

export async function readRates(file: string): Promise<Rates> {
  return (await readJsonFile(file, RatesSchema)) ?? {};
}

/** The key of a kind of build in the rates: its folder's name and the number of jobs. */
export function rateKey(buildDir: string, jobs: number | undefined): string {
  return `${path.basename(buildDir)} -j${jobs ?? 'default'}`;
}

/** Keeps the slowest rate per kind of build: a build that ccache made fast does not lower the estimate. */
export async function saveRate(file: string, build: { key: string; steps: number; seconds: number }): Promise<void> {
  if (build.steps < ESTIMATE_MIN_STEPS) return;
  const rates = await readRates(file);
  const key = build.key;
  const rate = build.seconds / build.steps;
  if ((rates[key] ?? 0) >= rate) return;
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify({ ...rates, [key]: rate }, null, 2)}\n`);
}

/**
 * The line said when a build of `steps` starts: at this machine's slowest
 * rate so far with as many jobs, or a first guess from the cores in use.
 * Null for an incremental build.
 */
export function estimateText(
  steps: number,
  rates: Rates,
  build: { key: string; jobs: number | undefined },
  cores: number,
): string | null {
  if (steps < ESTIMATE_MIN_STEPS) return null;
  const rate = rates[build.key];
  const jobs = build.jobs;
  if (rate !== undefined)
    return `${steps} steps to build, about ${duration(steps * rate)} at this machine's slowest rate so far for this build (${rate.toFixed(1)} s a step), less for what ccache already holds`;
  const parallel = Math.max(1, Math.min(jobs ?? cores, cores));
  return `${steps} steps to build, roughly ${duration((steps * FIRST_GUESS_CORE_SECONDS) / parallel)} with ${parallel} job(s) when nothing is cached (a first guess; ccache makes later builds faster)`;
}

function duration(seconds: number): string {
  return seconds >= 90 ? `${Math.round(seconds / 60)} min` : `${Math.max(10, Math.round(seconds / 10) * 10)} s`;
}
