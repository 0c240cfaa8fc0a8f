import { ExitCode } from '../core/errors.js';
import { LANE_BLIND_SPOTS } from '../core/metal-typecheck.js';
import { typeCheckPr, typeCheckSelfTest, type LaneOptions, type LaneResult } from '../ops/metal-typecheck.js';
import { loadContext, type CommandResult, type GlobalOptions } from './context.js';

export interface CheckMetalOptions extends GlobalOptions {
  metalCpp?: string | undefined;
  jobs?: number | undefined;
  include?: string[] | undefined;
  selfTest?: boolean | undefined;
}

export interface CheckMetalData extends Omit<LaneResult, 'summary'> {
  command: 'check-metal';
  passed: number;
  failed: number;
  mlx: LaneResult['summary']['mlx'];
  blindSpots: string[];
  code?: 'CHECK_FAILED';
}

export async function checkMetal(options: CheckMetalOptions): Promise<CommandResult<CheckMetalData>> {
  const ctx = await loadContext(options);
  const lane: LaneOptions = { metalCpp: options.metalCpp, jobs: options.jobs, includes: options.include ?? [] };
  const result = options.selfTest ? await typeCheckSelfTest(ctx, lane) : await typeCheckPr(ctx, lane);
  const { summary, ...rest } = result;
  const lines = [...summary.lines];
  if (result.hint) lines.push(`hint: ${result.hint}`);
  if (!summary.ok) lines.push(`Full compiler output: ${result.logDir}`);
  const data: CheckMetalData = {
    command: 'check-metal',
    ...rest,
    passed: summary.passed,
    failed: summary.failed,
    mlx: summary.mlx,
    blindSpots: LANE_BLIND_SPOTS,
    ...(summary.ok ? {} : { code: 'CHECK_FAILED' as const }),
  };
  return { data, lines, ...(summary.ok ? {} : { exitCode: ExitCode.failure }) };
}
