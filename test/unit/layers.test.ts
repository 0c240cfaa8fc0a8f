import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');

/** The feature folders of src/, low to high: a file imports only from its own folder or one lower. */
const FEATURES = ['series', 'suite', 'upkeep', 'readiness', 'pull-request'];
const ALL = ['commands', ...FEATURES, 'core', 'adapters'];
/** The whole order, low to high: imports only point down (or stay in their folder). */
const ORDER = ['core', 'adapters', ...FEATURES, 'commands', 'cli.ts'];

interface Import {
  file: string;
  /** The imported file, relative to src/ (`series/config.ts`). */
  target: string;
  /** `import type`: erased when compiled. */
  typeOnly: boolean;
  /** `import()` inside a function, not at load time. */
  lazy: boolean;
}

const filesOf = (folder: string): string[] =>
  existsSync(path.join(SRC, folder))
    ? readdirSync(path.join(SRC, folder))
        .filter((f) => f.endsWith('.ts'))
        .map((f) => `${folder}/${f}`)
    : [];

/** Every relative import of a file in src/. */
function importsOf(file: string): Import[] {
  const text = readFileSync(path.join(SRC, file), 'utf8');
  const resolve = (spec: string) =>
    path
      .relative(SRC, path.resolve(path.dirname(path.join(SRC, file)), spec))
      .split(path.sep)
      .join('/')
      .replace(/\.js$/, '.ts');
  const statics = [...text.matchAll(/^(import|export)( type)?[^;]*?from '(\.[^']+)'/gms)].map((m) => ({
    file,
    target: resolve(m[3] as string),
    typeOnly: m[2] !== undefined,
    lazy: false,
  }));
  const lazy = [...text.matchAll(/import\(\s*'(\.[^']+)'\s*\)/g)].map((m) => ({
    file,
    target: resolve(m[1] as string),
    typeOnly: false,
    lazy: true,
  }));
  return [...statics, ...lazy];
}

const IO = /from '(node:)?(fs|fs\/promises|child_process|net|http|https)'|from 'execa'|process\.(env|cwd)\b/;

/** A file that uses no I/O module and imports nothing from adapters/ at load time. */
const doesNoIo = (file: string) =>
  !IO.test(readFileSync(path.join(SRC, file), 'utf8')) &&
  importsOf(file).every((i) => i.typeOnly || i.lazy || !i.target.startsWith('adapters/'));

const folderOf = (file: string) => (file.includes('/') ? (file.split('/')[0] as string) : file);
const importsIn = (folders: readonly string[]) => folders.flatMap(filesOf).flatMap(importsOf);
const everyImport = () => ['cli.ts', ...ALL.flatMap(filesOf)].flatMap(importsOf);
const show = (list: Import[]) => list.map((i) => `${i.file} -> ${i.target}`);

describe('layers', () => {
  it('src/ holds only cli.ts and the folders of the layout', () => {
    const entries = readdirSync(SRC).sort();
    expect(entries).toEqual(['cli.ts', ...ALL].sort());
  });

  it(`every import points down the order ${ORDER.join(' < ')}, type-only and lazy ones too`, () => {
    const rank = (file: string) => ORDER.indexOf(folderOf(file));
    const upward = everyImport().filter((i) => rank(i.target) > rank(i.file));
    expect(show(upward)).toEqual([]);
  });

  it('no two folders import each other, directly or through others', () => {
    const graph = new Map<string, Set<string>>();
    for (const i of everyImport()) {
      const [from, to] = [folderOf(i.file), folderOf(i.target)];
      if (from !== to) graph.set(from, (graph.get(from) ?? new Set()).add(to));
    }
    const reaches = (from: string, to: string, seen = new Set<string>()): boolean =>
      [...(graph.get(from) ?? [])].some(
        (next) => next === to || (!seen.has(next) && (seen.add(next), reaches(next, to, seen))),
      );
    expect([...graph.keys()].filter((folder) => reaches(folder, folder))).toEqual([]);
  });

  it('features import nothing from commands/ or cli.ts', () => {
    expect(show(importsIn(FEATURES).filter((i) => ['commands', 'cli.ts'].includes(folderOf(i.target))))).toEqual([]);
  });

  it('cli.ts loads each command with one import(), and nothing below it uses import()', () => {
    const cli = importsOf('cli.ts').filter((i) => folderOf(i.target) === 'commands' && !i.typeOnly);
    expect(show(cli.filter((i) => !i.lazy))).toEqual([]);
    expect(new Set(cli.map((i) => i.target)).size).toBe(cli.length);
    expect(show(importsIn(['commands', ...FEATURES]).filter((i) => i.lazy))).toEqual([]);
  });

  it('core/ imports only from core/', () => {
    expect(show(importsIn(['core']).filter((i) => folderOf(i.target) !== 'core'))).toEqual([]);
  });

  it('adapters/ import only from adapters/ and core/', () => {
    expect(show(importsIn(['adapters']).filter((i) => !['adapters', 'core'].includes(folderOf(i.target))))).toEqual([]);
  });

  it('core/ does no I/O: no file, process or network module, no process.env or process.cwd()', () => {
    expect(filesOf('core').filter((f) => !doesNoIo(f))).toEqual([]);
  });

  it('below the entry point and commands/, nothing reads process state (env, platform, cwd, argv): it comes in the context', () => {
    const reads = [...FEATURES, 'core', 'adapters'].flatMap(filesOf).filter((f) =>
      readFileSync(path.join(SRC, f), 'utf8')
        .split('\n')
        .some((line) => !/^\s*(\/\/|\*|\/\*)/.test(line) && /\bprocess\.(env|platform|cwd|argv|arch)\b/.test(line)),
    );
    expect(reads).toEqual([]);
  });

  it('no import cycles', () => {
    const graph = new Map<string, string[]>();
    for (const file of ['cli.ts', ...ALL.flatMap(filesOf)])
      graph.set(
        file,
        importsOf(file)
          .filter((i) => !i.lazy)
          .map((i) => i.target),
      );
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, trail: string[]) => {
      if (state.get(file) === 'done') return;
      if (state.get(file) === 'open') {
        cycles.push([...trail.slice(trail.indexOf(file)), file].join(' -> '));
        return;
      }
      state.set(file, 'open');
      for (const next of graph.get(file) ?? []) visit(next, [...trail, file]);
      state.set(file, 'done');
    };
    for (const file of graph.keys()) visit(file, []);
    expect(cycles).toEqual([]);
  });
});
