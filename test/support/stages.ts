import { rmSync } from 'node:fs';
import path from 'node:path';

import { execa } from 'execa';

import { tempDir } from './repos.js';

/**
 * A state of some folders (a project, its upstream, a fork) that cases start
 * from, made once by `make` and restored in place for every later case that
 * asks for it. In place, so that the absolute paths recorded inside (git,
 * CMake caches, saved results) stay valid and the names in the normalised
 * output stay the same. A stage's `make` starts from the stage before it
 * (`await before()`), so a case run alone (`-t`) gets the same state as in a
 * run of the whole file. What `make` returns (outputs to assert, commit ids)
 * is kept with the copy.
 */
export function stage<T>(folders: () => string[], make: () => T | Promise<T>): () => Promise<T> {
  let saved: { copy: string; value: T } | undefined;
  return async () => {
    const dirs = folders();
    if (saved !== undefined) {
      const { copy } = saved;
      for (const [i, dir] of dirs.entries()) {
        rmSync(dir, { recursive: true, force: true });
        // `cp -a` keeps modes, links and times (Ninja decides what to rebuild by the times).
        await execa('cp', ['-a', path.join(copy, String(i)), dir]);
      }
      return saved.value;
    }
    const value = await make();
    const copy = tempDir('msp-stage-');
    for (const [i, dir] of dirs.entries()) await execa('cp', ['-a', dir, path.join(copy, String(i))]);
    saved = { copy, value };
    return value;
  };
}
