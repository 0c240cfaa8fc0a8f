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
