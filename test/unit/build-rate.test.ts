import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';

import { estimateText, rateKey, readRates, saveRate } from '../../src/suite/build-rate.js';

const release = { key: rateKey('/w/build-release-d7706b5b2c', 2), jobs: 2 };

describe('the estimate said before a big build', () => {
  it('says nothing for an incremental build', () => {
    expect(estimateText(49, {}, release, 2)).toBeNull();
    expect(estimateText(49, { [release.key]: 3 }, release, 2)).toBeNull();
  });

  it('guesses from the cores in use when this machine has built nothing of this kind yet', () => {
    // 113 steps (MLX's tests target at the pin) at 7 core-seconds a step on 2 cores: about 7 min.
    expect(estimateText(113, {}, release, 2)).toBe(
      '113 steps to build, roughly 7 min with 2 job(s) when nothing is cached (a first guess; ccache makes later builds faster)',
    );
    // More jobs than cores do not build faster.
    expect(estimateText(113, {}, { key: 'k', jobs: 8 }, 2)).toContain('roughly 7 min with 2 job(s)');
    expect(estimateText(113, {}, { key: 'k', jobs: 8 }, 8)).toContain('roughly 2 min with 8 job(s)');
  });

  it("uses this machine's slowest rate for the same kind of build and jobs", () => {
    expect(estimateText(120, { [release.key]: 3.25, [rateKey('/w/build-release-d7706b5b2c', 4)]: 1 }, release, 8)).toBe(
      "120 steps to build, about 7 min at this machine's slowest rate so far for this build (3.3 s a step), less for what ccache already holds",
    );
    // Another build type (another folder) or other jobs: the first guess, not a rate learned elsewhere.
    const debug = { key: rateKey('/w/build-debug-0123456789', 2), jobs: 2 };
    expect(estimateText(60, { [release.key]: 0.3 }, debug, 8)).toContain('a first guess');
    expect(
      estimateText(60, { [release.key]: 0.3 }, { key: rateKey('/w/build-release-d7706b5b2c', 4), jobs: 4 }, 8),
    ).toContain('a first guess');
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

  it('keeps the slowest rate per kind of build, learns nothing from small builds', async () => {
    const f = file();
    await saveRate(f, { key: 'a', steps: 10, seconds: 100 });
    expect(await readRates(f)).toEqual({});
    await saveRate(f, { key: 'a', steps: 100, seconds: 300 });
    // A build that ccache made fast does not lower it.
    await saveRate(f, { key: 'a', steps: 100, seconds: 20 });
    await saveRate(f, { key: 'b', steps: 100, seconds: 100 });
    expect(await readRates(f)).toEqual({ a: 3, b: 1 });
    await saveRate(f, { key: 'a', steps: 100, seconds: 500 });
    expect(JSON.parse(readFileSync(f, 'utf8'))).toEqual({ a: 5, b: 1 });
  });

  it('reads a missing or damaged file as no rate', async () => {
    const f = file();
    expect(await readRates(f)).toEqual({});
    await saveRate(f, { key: 'a', steps: 100, seconds: 100 });
    writeFileSync(f, '{"a": "fast"');
    expect(await readRates(f)).toEqual({});
  });

  it('a rate file that cannot be written is an error the build can catch, not a crash', async () => {
    const f = file();
    mkdirSync(f, { recursive: true });
    await expect(saveRate(f, { key: 'a', steps: 100, seconds: 100 })).rejects.toThrow();
  });
});
