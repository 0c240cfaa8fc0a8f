import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { estimateText, readRates, saveRate } from '../../src/suite/build-rate.js';

describe('the estimate said before a big build', () => {
  it('says nothing for an incremental build', () => {
    expect(estimateText(49, {}, 2, 2)).toBeNull();
    expect(estimateText(49, { '2': 3 }, 2, 2)).toBeNull();
  });

  it('guesses from the cores in use when this machine has built nothing big yet', () => {
    // 113 steps (MLX's tests target at the pin) at 7 core-seconds a step on 2 cores: about 7 min.
    expect(estimateText(113, {}, 2, 2)).toBe(
      '113 steps to build, roughly 7 min with 2 job(s) when nothing is cached (a first guess; ccache makes later builds faster)',
    );
    // More jobs than cores do not build faster.
    expect(estimateText(113, {}, 8, 2)).toContain('roughly 7 min with 2 job(s)');
    expect(estimateText(113, {}, 8, 8)).toContain('roughly 2 min with 8 job(s)');
  });

  it("uses this machine's slowest rate with as many jobs", () => {
    expect(estimateText(120, { '2': 3.25, '4': 1 }, 2, 8)).toBe(
      "120 steps to build, at most about 7 min at this machine's slowest rate so far (3.3 s a step), less for what ccache already holds",
    );
    expect(estimateText(60, { '4': 1 }, 4, 8)).toContain('at most about 60 s');
    // No rate for these jobs: the first guess.
    expect(estimateText(60, { '4': 1 }, 2, 8)).toContain('a first guess');
  });
});

describe("this machine's build rate", () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
  const file = () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'msp-rate-'));
    dirs.push(dir);
    return path.join(dir, 'cache', 'build-rate.json');
  };

  it('keeps the slowest rate per number of jobs, learns nothing from small builds', async () => {
    const f = file();
    await saveRate(f, { steps: 10, seconds: 100, jobs: 2 });
    expect(await readRates(f)).toEqual({});
    await saveRate(f, { steps: 100, seconds: 300, jobs: 2 });
    // A build that ccache made fast does not lower it.
    await saveRate(f, { steps: 100, seconds: 20, jobs: 2 });
    await saveRate(f, { steps: 100, seconds: 100, jobs: 4 });
    expect(await readRates(f)).toEqual({ '2': 3, '4': 1 });
    await saveRate(f, { steps: 100, seconds: 500, jobs: 2 });
    expect(JSON.parse(readFileSync(f, 'utf8'))).toEqual({ '2': 5, '4': 1 });
  });

  it('reads a missing or damaged file as no rate', async () => {
    const f = file();
    expect(await readRates(f)).toEqual({});
    await saveRate(f, { steps: 100, seconds: 100, jobs: 2 });
    writeFileSync(f, '{"2": "fast"');
    expect(await readRates(f)).toEqual({});
  });
});
