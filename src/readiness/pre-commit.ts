/**
 * MLX's pre-commit hooks: which of them apply to which files of the series.
 * Reads the text of a `.pre-commit-config.yaml` (no I/O).
 */

import path from 'node:path';

import { UserError } from '../core/errors.js';

/** One hook of a `.pre-commit-config.yaml`. */
export interface PreCommitHook {
  id: string;
  /** The hook's repository. */
  repo: string;
  /** The repository's pinned `rev`, without a leading `v` (`21.1.8`). */
  rev: string | null;
  /** The hook's `files` and `exclude` (Python regular expressions, searched anywhere in the path). */
  files: string | null;
  exclude: string | null;
  args: string[];
}

const text = (value: unknown): string | null =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : null;
const mappings = (value: unknown): Record<string, unknown>[] =>
  Array.isArray(value)
    ? value.filter((v): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v))
    : [];

/**
 * Reads the hooks of a `.pre-commit-config.yaml` with the `yaml` library
 * (flow style, block scalars, anchors and aliases, as pre-commit itself
 * reads them). Loaded here, on first use, so only the commands that read
 * pre-commit's config load the parser.
 */
export async function preCommitHooks(source: string): Promise<PreCommitHook[]> {
  const { parse } = await import('yaml');
  let doc: unknown;
  try {
    // Failsafe: every scalar stays text, so `rev: 1.10` is not read as a number.
    doc = parse(source, { schema: 'failsafe', maxAliasCount: 1000 });
  } catch (error) {
    throw new UserError(
      'CHECKOUT_INVALID',
      `MLX's .pre-commit-config.yaml is not valid YAML: ${(error as Error).message}`,
      {
        hint: 'Check the pinned commit (upstream.commit in the config): its .pre-commit-config.yaml must parse.',
        cause: error,
      },
    );
  }
  const repos = mappings((doc as Record<string, unknown> | null)?.['repos']);
  return repos.flatMap((r) => {
    const repo = text(r['repo']) ?? '';
    const rev = text(r['rev'])?.replace(/^v(?=\d)/, '') ?? null;
    return mappings(r['hooks']).flatMap((h) => {
      const id = text(h['id']);
      if (id === null) return [];
      const args = Array.isArray(h['args']) ? h['args'].map(text).filter((a): a is string => a !== null) : [];
      return [{ id, repo, rev, files: text(h['files']), exclude: text(h['exclude']), args }];
    });
  });
}

/**
 * The file types of the hooks MLX uses, as each hook's own manifest
 * (`.pre-commit-hooks.yaml` of its repository) declares them, by file name
 * (pre-commit's `identify`): a hook runs on a file of its types that its
 * `files` pattern matches and its `exclude` does not.
 */
const HOOK_TYPES: Record<string, (file: string) => boolean> = {
  // mirrors-clang-format: types_or [c++, c, c#, cuda, java, javascript, json, objective-c, proto, textproto].
  'clang-format': (f) =>
    /\.(c|h|cc|cpp|cxx|c\+\+|hh|hpp|hxx|h\+\+|ipp|inl|cu|cuh|cs|java|js|mjs|cjs|json|m|mm|proto|textproto|txtpb)$/.test(
      f,
    ),
  // cmake-format-precommit: types [cmake].
  'cmake-format': (f) => path.posix.basename(f) === 'CMakeLists.txt' || f.endsWith('.cmake'),
  // black: types_or [python, pyi].
  black: (f) => /\.pyi?$/.test(f),
  // isort: types_or [cython, pyi, python].
  isort: (f) => /\.(py|pyi|pyx|pxd)$/.test(f),
  // pre-commit-hooks check-yaml: types [yaml].
  'check-yaml': (f) => /\.ya?ml$/.test(f),
};

/**
 * A Python `(?x)` (verbose) pattern without its layout: whitespace outside a
 * character class and unescaped, and `#` comments to the end of the line.
 */
function unverbose(source: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i] as string;
    if (c === '\\') {
      out += source.slice(i, i + 2);
      i++;
    } else if (inClass) {
      if (c === ']') inClass = false;
      out += c;
    } else if (c === '[') {
      inClass = true;
      out += c;
    } else if (c === '#') {
      while (i + 1 < source.length && source[i + 1] !== '\n') i++;
    } else if (!/\s/.test(c)) out += c;
  }
  return out;
}

/** A Python regular expression as JavaScript reads it (the constructs pre-commit configs use are the same). */
function pattern(source: string): RegExp | null {
  const verbose = /^\(\?x\)/.exec(source);
  try {
    return new RegExp(verbose ? unverbose(source.slice(verbose[0].length)) : source);
  } catch {
    return null;
  }
}

/** The files of `files` that `hook` runs on, or null when this tool does not know the hook's file types. */
export function hookFiles(hook: PreCommitHook, files: readonly string[]): string[] | null {
  const ofType = HOOK_TYPES[hook.id];
  if (ofType === undefined) return null;
  const include = hook.files === null ? null : pattern(hook.files);
  const exclude = hook.exclude === null ? null : pattern(hook.exclude);
  return files.filter((f) => ofType(f) && (include === null || include.test(f)) && !(exclude?.test(f) ?? false));
}
