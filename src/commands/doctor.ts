import path from 'node:path';

import {
  askedCommands,
  doctorReport,
  DOCTOR_COMMANDS,
  neededIds,
  type CommandReadiness,
  type DoctorCommand,
} from '../core/doctor.js';
import type { CheckResult } from '../core/checks.js';
import { ExitCode, UserError } from '../core/errors.js';
import { machineChecks } from '../ops/readiness.js';
import { verifyDepsDir } from '../ops/offline.js';
import { loadContext, type CommandResult, type GlobalOptions } from './context.js';

export interface DoctorOptions extends GlobalOptions {
  /** The commands to check the machine for; none means all. */
  commands?: string[] | undefined;
  offline?: boolean | undefined;
  depsDir?: string | undefined;
}

export interface DoctorData {
  command: 'doctor';
  /** True when every asked command has what it requires. */
  ready: boolean;
  asked: DoctorCommand[];
  commands: CommandReadiness[];
  checks: CheckResult[];
}

export async function doctor(options: DoctorOptions): Promise<CommandResult<DoctorData>> {
  const { commands, unknown } = askedCommands(options.commands ?? []);
  if (unknown.length) {
    throw new UserError('USAGE', `doctor: no command named ${unknown.map((u) => `"${u}"`).join(', ')}.`, {
      hint: `Name one or more of: ${DOCTOR_COMMANDS.join(', ')} (status, reset, check, export and bump need what apply needs, check --build what test needs, pr what verify needs), or none for all.`,
    });
  }
  const depsDir = verifyDepsDir(options.cwd, options.depsDir);
  const ctx = await loadContext(options);
  const offline = options.offline === true || options.depsDir !== undefined;
  const results = await machineChecks(neededIds(commands, { offline }), {
    env: ctx.env,
    workdir: ctx.workdir,
    log: ctx.log,
    depsDir,
    generatedRoot: path.join(ctx.cacheRoot, 'deps'),
  });
  const report = doctorReport(commands, results, { offline });
  return {
    data: { command: 'doctor', ready: report.ready, asked: commands, commands: report.commands, checks: report.checks },
    lines: report.lines,
    exitCode: report.ready ? ExitCode.ok : ExitCode.toolMissing,
  };
}
