import path from 'node:path';

import {
  askedCommands,
  doctorReport,
  DOCTOR_COMMANDS,
  neededIds,
  type CommandReadiness,
  type DoctorCommand,
} from '../readiness/doctor-report.js';
import type { ReportItem } from '../core/report-items.js';
import { ExitCode, UserError } from '../core/errors.js';
import { buildsOffline } from '../core/readiness-inputs.js';
import { loadContext } from '../series/context.js';
import { runMachineChecks } from '../readiness/registry.js';
import { verifyDepsDir } from '../suite/offline-deps.js';
import { environmentSettings, OFFLINE_ENV } from './options.js';
import { type CommandResult, defineCommand, type GlobalOptions } from './spec.js';

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
  /** Where the MLX checkout and builds live. */
  workdir: string;
  commands: CommandReadiness[];
  checks: ReportItem[];
}

export const doctorCommand = defineCommand({
  name: 'doctor [commands..]',
  describe:
    'Check that the machine has what each command needs (all commands, or the ones named); exit 9 when one is not ready',
  builder: (y) =>
    y
      .positional('commands', {
        type: 'string',
        array: true,
        describe:
          'apply, test, format, check-metal, verify (status, reset, check, export, bump need what apply needs; pr what verify needs); none: all',
      })
      .option('offline', {
        type: 'boolean',
        default: false,
        env: OFFLINE_ENV,
        describe: 'Require the local dependencies that test --offline needs',
      })
      .option('deps-dir', {
        type: 'string',
        describe: 'Folder with local copies of dependencies, as for test; implies --offline',
      })
      .example('$0 doctor', 'what every command needs, and which commands are ready')
      .example('$0 doctor test --offline', 'exit 0 only when test --offline can run here')
      .epilog(
        'Each check is listed under the first named command that needs it: ok, FAIL (the command cannot run without it) or opt (the command runs without it, ' +
          'and the line says what it then does). Exit 0 when every named command is ready, 9 when one is not.',
      ),
  run: (o) => doctor({ ...o, commands: (o.commands ?? []).map(String) }),
});

async function doctor(options: DoctorOptions): Promise<CommandResult<DoctorData>> {
  const { commands, unknown } = askedCommands(options.commands ?? []);
  if (unknown.length) {
    throw new UserError('USAGE', `doctor: no command named ${unknown.map((u) => `"${u}"`).join(', ')}.`, {
      hint: `Name one or more of: ${DOCTOR_COMMANDS.join(', ')} (status, reset, check, export and bump need what apply needs, check --build what test needs, pr what verify needs), or none for all.`,
    });
  }
  const depsDir = verifyDepsDir(options.cwd, options.depsDir);
  const ctx = await loadContext(options);
  const offline = buildsOffline(options);
  const metalCppGiven = environmentSettings(ctx.env).metalCpp;
  const results = await runMachineChecks(neededIds(commands, { offline }), {
    env: ctx.env,
    platform: ctx.platform,
    workdir: ctx.workdir,
    log: ctx.log,
    depsDir,
    generatedRoot: path.join(ctx.cacheRoot, 'deps'),
    metalCppCache: ctx.layout.metalCpp,
    metalCppPin: ctx.config.upstream.metalCpp,
    offline,
    metalCppGiven: metalCppGiven === null ? null : path.resolve(ctx.cwd, metalCppGiven),
  });
  const report = doctorReport(commands, results, { offline });
  return {
    data: {
      command: 'doctor',
      ready: report.ready,
      asked: commands,
      workdir: ctx.workdir,
      commands: report.commands,
      checks: report.checks,
    },
    lines: [`workdir: ${ctx.workdir}`, ...report.lines],
    exitCode: report.ready ? ExitCode.ok : ExitCode.toolMissing,
  };
}
