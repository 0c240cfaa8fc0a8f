import { formatChecks, type CheckResult } from '../core/checks.js';
import { ExitCode } from '../core/errors.js';
import { verifyDepsDir } from '../ops/offline.js';
import { verifyChecks, type VerifyChecksOptions } from '../ops/verify.js';
import { loadContext, type CommandResult, type GlobalOptions } from './context.js';

export interface VerifyOptions extends GlobalOptions, VerifyChecksOptions {}

export interface VerifyData {
  command: 'verify';
  ready: boolean;
  checks: CheckResult[];
  /** Check ids left out with `--skip`. */
  skipped: string[];
}

export async function verify(options: VerifyOptions): Promise<CommandResult<VerifyData>> {
  verifyDepsDir(options.cwd, options.depsDir);
  const ctx = await loadContext(options);
  const { ready, checks, skipped } = await verifyChecks(ctx, options);
  const blocking = checks.filter((c) => c.required && c.status !== 'pass').length;
  const lines = [
    ...formatChecks(checks),
    ...(skipped.length ? [`left out (--skip): ${skipped.join(', ')}`] : []),
    ready ? 'Ready: every required check passes.' : `Not ready: ${blocking} required check(s) did not pass.`,
  ];
  return {
    data: { command: 'verify', ready, checks, skipped },
    lines,
    ...(ready ? {} : { exitCode: ExitCode.failure }),
  };
}
