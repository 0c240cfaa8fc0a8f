import { checkExitCode, checkLines, checkMarkdown, type CheckData } from '../core/check.js';
import { UserError } from '../core/errors.js';
import { checkAgainst } from '../ops/check.js';
import { verifyDepsDir } from '../ops/offline.js';
import { loadContext, type CommandResult, type GlobalOptions } from './context.js';

export type { CheckData } from '../core/check.js';

export interface CheckCommandOptions extends GlobalOptions {
  against: string[];
  build: boolean;
  tests?: string | undefined;
  debug: boolean;
  offline: boolean;
  metalTwin: boolean;
  depsDir?: string | undefined;
  cmakeArgs: string[];
  jobs?: number | undefined;
  markdown: boolean;
}

export async function check(options: CheckCommandOptions): Promise<CommandResult<CheckData>> {
  const buildOnly = [
    options.tests !== undefined && '--tests',
    options.debug && '--debug',
    options.offline && '--offline',
    options.metalTwin && '--metal-twin',
    options.depsDir !== undefined && '--deps-dir',
    options.cmakeArgs.length > 0 && 'CMake arguments after --',
  ].filter((o): o is string => typeof o === 'string');
  if (!options.build && buildOnly.length > 0) {
    throw new UserError('USAGE', `${buildOnly.join(', ')}: only with --build.`, {
      hint: 'Add --build to build and test each commit, or leave them out.',
    });
  }
  if (options.build) verifyDepsDir(options.cwd, options.depsDir);
  const ctx = await loadContext(options);
  const data = await checkAgainst(ctx, {
    against: options.against,
    jobs: options.jobs,
    build: options.build
      ? {
          tests: options.tests,
          debug: options.debug,
          offline: options.offline,
          metalTwin: options.metalTwin,
          depsDir: options.depsDir,
          cmakeArgs: options.cmakeArgs,
        }
      : undefined,
  });
  return {
    data,
    lines: options.markdown ? checkMarkdown(data) : checkLines(data),
    exitCode: checkExitCode(data.refs),
  };
}
