/**
 * MLX's pre-commit hooks: which of them apply to which files of the series.
 * Pure: reads the text of a `.pre-commit-config.yaml`.
 */

import path from 'node:path';

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

const unquote = (value: string) => value.trim().replace(/^(['"])(.*)\1$/, '$2');

/**
 * Reads the hooks of a `.pre-commit-config.yaml`: the keys pre-commit's
 * own configs use (`repo`, `rev`, `id`, `files`, `exclude`, `args`), each on
 * its own line as MLX writes them. Comments and other keys are skipped.
 */
export function preCommitHooks(text: string): PreCommitHook[] {
  const hooks: PreCommitHook[] = [];
  let repo = '';
  let rev: string | null = null;
  let inArgs = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.replace(/\s+#.*$/, '');
    if (/^\s*#/.test(line) || line.trim() === '') continue;
    const key = /^\s*(?:-\s+)?([\w-]+):\s*(.*)$/.exec(line);
    const current = hooks[hooks.length - 1];
    if (key === null) {
      const item = /^\s*-\s+(.*)$/.exec(line);
      if (inArgs && item && current) current.args.push(unquote(item[1] as string));
      continue;
    }
    const [, name, value = ''] = key as unknown as [string, string, string];
    inArgs = false;
    if (name === 'repo') {
      repo = unquote(value);
      rev = null;
    } else if (name === 'rev') rev = unquote(value).replace(/^v(?=\d)/, '');
    else if (name === 'id') hooks.push({ id: unquote(value), repo, rev, files: null, exclude: null, args: [] });
    else if (current && name === 'files') current.files = unquote(value);
    else if (current && name === 'exclude') current.exclude = unquote(value);
    else if (current && name === 'args') {
      const inline = /^\[(.*)\]$/.exec(value.trim());
      if (inline) current.args.push(...(inline[1] as string).split(',').map(unquote).filter(Boolean));
      else inArgs = true;
    }
  }
  return hooks;
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

/** A Python regular expression as JavaScript reads it (the constructs pre-commit configs use are the same). */
function pattern(source: string): RegExp | null {
  try {
    return new RegExp(source.replace(/^\(\?x\)/, ''));
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
