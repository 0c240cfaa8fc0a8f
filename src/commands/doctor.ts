import path from 'node:path';

import { checksPass, formatChecks, type CheckResult } from '../core/checks.js';
import { ExitCode } from '../core/errors.js';
import { buildChecks, checkOffline } from '../ops/doctor.js';
import { metalToolchainChecks } from '../ops/metal-toolchain.js';
import { cacheRoot, probeOffline } from '../ops/offline.js';
import { loadContext, type CommandResult, type GlobalOptions } from './context.js';

export interface DoctorOptions extends GlobalOptions {
  offline?: boolean | undefined;
  depsDir?: string | undefined;
}

export interface DoctorData {
  command: 'doctor';
  checks: CheckResult[];
}

export async function doctor(options: DoctorOptions): Promise<CommandResult<DoctorData>> {
  const ctx = await loadContext(options);
  const checks = await buildChecks(options.env, ctx.workdir, true);
  if (options.offline || options.depsDir) {
    checks.push(...checkOffline(probeOffline(options.depsDir ? path.resolve(options.cwd, options.depsDir) : undefined, path.join(cacheRoot(options.env), 'deps'))));
  }
  // The Metal type-check lane is optional for building, so its toolchain is not required here.
  checks.push(...(await metalToolchainChecks({ env: options.env, log: ctx.log, required: false })));
  const ok = checksPass(checks);
  return {
    data: { command: 'doctor', checks },
    lines: [...formatChecks(checks), ok ? 'Ready to build and test MLX.' : 'Fix the FAIL lines above, then run `mlx-storage-pr doctor` again.'],
    exitCode: ok ? ExitCode.ok : ExitCode.toolMissing,
  };
}
