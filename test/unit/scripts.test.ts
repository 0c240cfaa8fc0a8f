import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const SCRIPTS = path.join(ROOT, 'scripts');

// The benchmark and schema scripts import the built tool; a module moved in src/ must not leave
// a script pointing at a file the build no longer makes.
describe('scripts/', () => {
  it('import only modules the build makes', () => {
    const missing: string[] = [];
    for (const script of readdirSync(SCRIPTS).filter((f) => f.endsWith('.mjs'))) {
      const text = readFileSync(path.join(SCRIPTS, script), 'utf8');
      // `path.join(root, 'dist', 'a', 'b.js')` and `'../dist/a/b.js'`.
      const joined = [...text.matchAll(/'dist',((?:\s*'[\w.-]+',?)+)\)/g)].map((m) =>
        [...(m[1] as string).matchAll(/'([\w.-]+)'/g)].map((p) => p[1]).join('/'),
      );
      const literal = [...text.matchAll(/['"]\.\.\/dist\/([\w./-]+\.js)['"]/g)].map((m) => m[1] as string);
      for (const module of [...joined, ...literal]) {
        const source = path.join(ROOT, 'src', module.replace(/\.js$/, '.ts'));
        if (!existsSync(source)) missing.push(`${script}: dist/${module}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
