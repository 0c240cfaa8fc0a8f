import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** One ccache folder for the whole run (see `ccacheDir` in repos.ts). */
    ccacheDir: string;
  }
}

/**
 * One ccache folder for the run: the fixture builds of different files compile the same sources, so a later
 * build reuses the objects of an earlier one, as on a contributor's machine. It is not the user's own cache.
 */
export default function setup(project: TestProject): () => void {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'msp-ccache-run-'));
  project.provide('ccacheDir', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
