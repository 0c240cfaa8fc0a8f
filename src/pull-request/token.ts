import type { Env } from '../adapters/env.js';
import type { Logger } from '../adapters/log.js';
import { ProcessError } from '../adapters/process-error.js';
import { run } from '../adapters/process.js';
import { processFailed, UserError } from '../core/errors.js';
import { mapJsonStrings } from '../core/json.js';

/** A GitHub token and where it came from (`GH_TOKEN`, `gh auth token`, ...), which may be shown; the token may not. */
export interface GitHubToken {
  value: string;
  source: string;
}

/** The variables read for a token, in order, when `--token-env` names none. */
export const TOKEN_VARIABLES = ['GH_TOKEN', 'GITHUB_TOKEN'] as const;

/** The token in the environment only (`--token-env`, else GH_TOKEN, else GITHUB_TOKEN); null: none set. */
export function tokenInEnv(env: Env, tokenEnv?: string): GitHubToken | null {
  if (tokenEnv !== undefined) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv))
      throw new UserError(
        'USAGE',
        `--token-env ${JSON.stringify(tokenEnv)} is not the name of an environment variable.`,
        {
          hint: "Give the variable's name, not its value: for example --token-env MLX_PR_TOKEN.",
        },
      );
    const value = env[tokenEnv]?.trim();
    if (!value)
      throw new UserError('TOKEN_MISSING', `--token-env ${tokenEnv}: the variable ${tokenEnv} is not set or empty.`, {
        hint: `Set ${tokenEnv} to your GitHub token, or leave out --token-env to use GH_TOKEN, GITHUB_TOKEN or \`gh auth token\`.`,
      });
    return { value, source: `${tokenEnv} (--token-env)` };
  }
  for (const name of TOKEN_VARIABLES) {
    const value = env[name]?.trim();
    if (value) return { value, source: name };
  }
  return null;
}

/**
 * The token for GitHub as `gh` users expect it: `--token-env`, GH_TOKEN,
 * GITHUB_TOKEN, then what `gh auth token` prints for `host` when `gh` is on
 * PATH and logged in. Says where it came from on stderr; null: no token.
 */
export async function findToken(
  env: Env,
  log: Logger,
  o: { tokenEnv?: string | undefined; host: string },
): Promise<GitHubToken | null> {
  const found = tokenInEnv(env, o.tokenEnv) ?? (await ghToken(env, o.host));
  if (found !== null) log.info(`GitHub token: from ${found.source}`);
  return found;
}

/** `gh auth token --hostname <host>`, or null when gh is not on PATH, not logged in, or prints nothing. */
async function ghToken(env: Env, host: string): Promise<GitHubToken | null> {
  try {
    const { stdout } = await run('gh', ['auth', 'token', '--hostname', host], { env });
    const value = stdout.trim();
    return value && !/\s/.test(value) ? { value, source: '`gh auth token`' } : null;
  } catch (error) {
    if (error instanceof ProcessError) return null;
    throw error;
  }
}

/** The host `gh` knows an API URL's token by: api.github.com is github.com; an Enterprise server is its own host. */
export function ghHostOf(apiUrl: string): string {
  try {
    const host = new URL(apiUrl).hostname.toLowerCase();
    return host === 'api.github.com' ? 'github.com' : host;
  } catch {
    return 'github.com';
  }
}

/** The error with every occurrence of `secret` masked: a token never reaches output, whatever said it. */
export function withoutSecret(error: unknown, secret: string): unknown {
  const mask = (text: string) => text.split(secret).join('***');
  const failure = error instanceof ProcessError ? processFailed(error) : error;
  if (failure instanceof UserError) {
    if (![failure.message, failure.hint ?? '', JSON.stringify(failure.details ?? null)].some((t) => t.includes(secret)))
      return failure;
    return new UserError(failure.code, mask(failure.message), {
      ...(failure.hint === undefined ? {} : { hint: mask(failure.hint) }),
      details: mapJsonStrings(failure.details ?? null, mask),
    });
  }
  if (failure instanceof Error && failure.message.includes(secret)) return new Error(mask(failure.message));
  return failure;
}
