/**
 * The environment a command was given (`Io.env`). Every child process gets
 * exactly this, never the tool's own `process.env`, so what a test injects is
 * what git, cmake and the compilers see.
 */
export type Env = Readonly<Record<string, string | undefined>>;

/** `env` without unset entries, as child processes take it. */
export function definedEnv(env: Env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined) out[key] = value;
  return out;
}

/**
 * The variables that point git at a repository, an index, an object store or a part of one
 * (`git rev-parse --local-env-vars`, less its configuration ones, plus GIT_NAMESPACE): set by a
 * git hook or an IDE task, they would make every git the tool starts act on *that* repository.
 * Configuration given through the environment (GIT_CONFIG_COUNT, GIT_CONFIG_PARAMETERS) is the
 * user's and is kept.
 */
export const REPOSITORY_VARIABLES = [
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_IMPLICIT_WORK_TREE',
  'GIT_COMMON_DIR',
  'GIT_INDEX_FILE',
  'GIT_OBJECT_DIRECTORY',
  'GIT_ALTERNATE_OBJECT_DIRECTORIES',
  'GIT_GRAFT_FILE',
  'GIT_SHALLOW_FILE',
  'GIT_NO_REPLACE_OBJECTS',
  'GIT_REPLACE_REF_BASE',
  'GIT_NAMESPACE',
  'GIT_PREFIX',
  'GIT_INTERNAL_SUPER_PREFIX',
  'GIT_QUARANTINE_PATH',
] as const;

/** `env` without the variables that would point a child's git at another repository. */
export function withoutRepositoryVariables(env: Env): Env {
  const out = { ...env };
  for (const name of REPOSITORY_VARIABLES) delete out[name];
  return out;
}
