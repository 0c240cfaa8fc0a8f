import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');

/** Every relative import of every file in `src/<folder>/`, as `<file> -> <folder of the target>/<file>`. */
function importsOf(folder: string): Array<{ file: string; target: string }> {
  const dir = path.join(SRC, folder);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .flatMap((file) =>
      [...readFileSync(path.join(dir, file), 'utf8').matchAll(/^(?:import|export)[^;]*?from '(\.[^']+)'/gms)].map(
        (m) => ({
          file: `${folder}/${file}`,
          target: path
            .relative(SRC, path.resolve(dir, m[1] as string))
            .split(path.sep)
            .join('/'),
        }),
      ),
    );
}

const into = (target: string, folders: readonly string[]) =>
  folders.some((f) => target.startsWith(`${f}/`) || target === `${f}.js`);

describe('layers', () => {
  it('ops/ and core/ import nothing from commands/ or cli/', () => {
    const upward = [...importsOf('ops'), ...importsOf('core')].filter((i) => into(i.target, ['commands', 'cli']));
    expect(upward).toEqual([]);
  });

  it('core/ imports only from core/, never from adapters/ or ops/', () => {
    const outside = importsOf('core').filter((i) => !i.target.startsWith('core/'));
    expect(outside).toEqual([]);
  });

  it('adapters/ import nothing from ops/, commands/ or cli/', () => {
    const upward = importsOf('adapters').filter((i) => into(i.target, ['ops', 'commands', 'cli']));
    expect(upward).toEqual([]);
  });

  it('core/ does no I/O: no file, process or network module, no process.env or process.cwd()', () => {
    const dir = path.join(SRC, 'core');
    const io = readdirSync(dir)
      .filter((f) => f.endsWith('.ts'))
      .filter((f) =>
        /from '(node:)?(fs|fs\/promises|child_process|net|http|https)'|from 'execa'|process\.(env|cwd)\b/.test(
          readFileSync(path.join(dir, f), 'utf8'),
        ),
      );
    expect(io).toEqual([]);
  });
});
