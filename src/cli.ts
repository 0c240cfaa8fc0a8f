import { readFileSync } from 'node:fs';
import path from 'node:path';

import yargs, { type Argv } from 'yargs';

import { PACKAGE_ROOT } from './adapters/package-root.js';
import { ExitCode, isUserError, permissionErrorFrom } from './core/errors.js';
import { InterruptedError, watchInterrupts } from './adapters/interrupt.js';
import { createLogger } from './adapters/log.js';
import { commands } from './cli/index.js';
import type { Handler } from './cli/spec.js';
import type { GlobalOptions } from './commands/context.js';

export interface Io {
  argv: string[];
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Aborted on Ctrl-C (bin/ turns SIGINT into this). */
  signal?: AbortSignal;
}


const EPILOG = `Exit codes: 0 ok, 1 failure, 2 usage, 3 dirty checkout, 4 patch conflict, 5 MLX source, 6 locked, 7 config/templates, 8 tests failed, 9 tool missing, 10 permission denied, 70 internal error, 130 interrupted (Ctrl-C).
Environment: MLX_REPO (MLX source), MLX_STORAGE_PR_WORKDIR (work folder).`;

function version(): string {
  return (JSON.parse(readFileSync(path.join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

/** Parses argv, runs one command and returns the exit code. Only bin/ calls process.exit. */
export async function main(io: Io): Promise<number> {
  let outcome: Promise<number> | undefined;
  const run = (name: string, load: () => Promise<Handler>) => (args: Record<string, unknown>) => {
    outcome = execute(name, load, args, io);
  };

  let parser: Argv = yargs(io.argv)
    .parserConfiguration({ 'populate--': true })
    .scriptName('mlx-storage-pr')
    .usage('$0 <command> [options]\n\nTurns the MLX Metal storage export view RFC into an upstream pull request.')
    .option('mlx-repo', { type: 'string', describe: 'MLX source: a git URL, a local repository or a bare mirror (env MLX_REPO)' })
    .option('workdir', { type: 'string', describe: 'Folder for the MLX checkout and builds (env MLX_STORAGE_PR_WORKDIR; default <project>/.work)' })
    .option('project', { type: 'string', describe: 'Project folder with mlx-storage-pr.config.json, templates/ and patches/' })
    .option('json', { type: 'boolean', default: false, describe: 'Print one JSON object on stdout; human text goes to stderr' })
    .option('verbose', { type: 'boolean', default: false, describe: 'Echo every git command' });
  for (const spec of commands) parser = parser.command(spec.name, spec.describe, spec.builder, run(spec.name, spec.load));
  parser = parser
    .demandCommand(1, 'Name a command; see --help.')
    .strict()
    .recommendCommands()
    .epilog(EPILOG)
    .version(version())
    .help()
    .wrap(Math.min(110, process.stdout.columns ?? 110))
    .exitProcess(false)
    .fail((message, error) => {
      if (error) throw error;
      throw Object.assign(new Error(message), { usage: true });
    });

  try {
    await parser.parseAsync();
  } catch (error) {
    if ((error as { usage?: boolean }).usage) {
      io.stderr.write(`${(error as Error).message}\nRun \`mlx-storage-pr --help\` for usage.\n`);
      return ExitCode.usage;
    }
    throw error;
  }
  return outcome ? await outcome : ExitCode.ok;
}

async function execute(name: string, load: () => Promise<Handler>, args: Record<string, unknown>, io: Io): Promise<number> {
  const json = args['json'] === true;
  const options: GlobalOptions & Record<string, unknown> = {
    ...args,
    cwd: io.cwd,
    env: io.env,
    project: args['project'] as string | undefined,
    workdir: args['workdir'] as string | undefined,
    mlxRepo: args['mlxRepo'] as string | undefined,
    json,
    verbose: args['verbose'] === true,
    logger: createLogger({ verbose: args['verbose'] === true, stream: io.stderr }),
  };
  watchInterrupts(io.signal);
  try {
    const handler = await load();
    const result = await handler(options);
    // After Ctrl-C the result is not reported as a success, even when the work got done.
    if (io.signal?.aborted) throw new InterruptedError({ finished: true });
    if (json) io.stdout.write(`${JSON.stringify({ ok: (result.exitCode ?? 0) === 0, ...result.data }, null, 2)}\n`);
    else io.stdout.write(result.lines.map((l) => `${l}\n`).join(''));
    return result.exitCode ?? ExitCode.ok;
  } catch (caught) {
    // Whatever failed after Ctrl-C failed because of it: report the interrupt and the state it left.
    // File-system permission errors from anywhere get the same report as other expected failures.
    const finished = caught instanceof InterruptedError && caught.finished;
    const error = io.signal?.aborted ? await (await import('./commands/interrupted.js')).interruptedError(name, options, { finished }) : (permissionErrorFrom(caught) ?? caught);
    if (isUserError(error)) {
      if (json) {
        const payload = { ok: false, error: { code: error.code, message: error.message, hint: error.hint ?? null, details: error.details ?? null } };
        io.stdout.write(`${JSON.stringify(payload, null, 2)}\n`);
      }
      io.stderr.write(`error: ${error.message}\n${error.hint ? `hint: ${error.hint}\n` : ''}`);
      return error.exitCode;
    }
    const err = error as Error;
    if (json) io.stdout.write(`${JSON.stringify({ ok: false, error: { code: 'INTERNAL', message: err.message } }, null, 2)}\n`);
    io.stderr.write(`internal error: ${err.stack ?? String(err)}\nThis is a bug in mlx-storage-pr; please report it with the output above.\n`);
    return ExitCode.internal;
  }
}
