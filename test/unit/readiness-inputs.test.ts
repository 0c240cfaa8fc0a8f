import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { toolCodeDigest } from '../../src/readiness/saved-readiness.js';
import { inputsName, readinessInputs, type ReadinessInputParts } from '../../src/core/readiness-inputs.js';

const parts: ReadinessInputParts = {
  tool: '0.1.0',
  platform: 'linux',
  inputHash: '0123456789abcdef',
  applied: { commit: 'a'.repeat(40), tree: 'b'.repeat(40) },
  files: {
    'project:pr/description.md': 'd1',
    'project:mlx-storage-pr.config.json': 'c1',
    'project:mutants.json': null,
  },
  tools: { PATH: '/usr/bin', CLANGXX: undefined },
  skipped: ['format-cpp'],
  options: {},
};

describe('readinessInputs', () => {
  it('is the same for the same inputs in another order, and for an option left out and its default', () => {
    const reordered: ReadinessInputParts = {
      ...parts,
      files: {
        'project:mutants.json': null,
        'project:mlx-storage-pr.config.json': 'c1',
        'project:pr/description.md': 'd1',
      },
      tools: { CLANGXX: undefined, PATH: '/usr/bin' },
      options: { mutants: 'all', requireMetal: false, offline: false, include: [], cmakeArgs: [] },
    };
    expect(readinessInputs(reordered)).toBe(readinessInputs(parts));
    expect(inputsName(readinessInputs(parts))).toMatch(/^[0-9a-f]{12}$/);
  });

  it('differs when anything the checks read differs', () => {
    const base = readinessInputs(parts);
    const changed: ReadinessInputParts[] = [
      { ...parts, tool: '0.2.0' },
      { ...parts, inputHash: 'fedcba9876543210' },
      { ...parts, applied: { ...parts.applied, tree: 'c'.repeat(40) } },
      { ...parts, files: { ...parts.files, 'project:pr/description.md': 'd2' } },
      { ...parts, files: { ...parts.files, 'project:mutants.json': 'm1' } },
      { ...parts, tools: { ...parts.tools, CLANGXX: 'clang++-19' } },
      { ...parts, skipped: [] },
      { ...parts, options: { mutants: 'listed' } },
      { ...parts, options: { metalCpp: '/opt/metal-cpp' } },
      { ...parts, options: { requireMetal: true } },
      { ...parts, options: { offline: true } },
      { ...parts, options: { sanitize: 'asan' } },
      { ...parts, options: { cxx: 'g++-11' } },
      { ...parts, options: { debug: true } },
      { ...parts, options: { upstreamCi: true } },
      { ...parts, options: { cmakeArgs: ['-DMLX_BUILD_TESTS=ON'] } },
    ];
    for (const other of changed) expect(readinessInputs(other)).not.toBe(base);
  });

  it('--deps-dir implies --offline', () => {
    const deps = JSON.parse(readinessInputs({ ...parts, options: { depsDir: '/deps' } })) as {
      options: { offline: boolean };
    };
    expect(deps.options.offline).toBe(true);
  });
});

describe("the tool's code in the inputs", () => {
  it('one digest of dist/ that changes with any file there', async () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'msp-tool-'));
    mkdirSync(path.join(root, 'dist', 'suite'), { recursive: true });
    writeFileSync(path.join(root, 'dist', 'cli.js'), 'one\n');
    const first = await toolCodeDigest(root);
    expect(first).toMatch(/^[0-9a-f]{64}$/);
    expect(await toolCodeDigest(root)).toBe(first);
    writeFileSync(path.join(root, 'dist', 'cli.js'), 'two\n');
    const second = await toolCodeDigest(root);
    expect(second).not.toBe(first);
    writeFileSync(path.join(root, 'dist', 'suite', 'new.js'), '');
    expect(await toolCodeDigest(root)).not.toBe(second);
  });
});
