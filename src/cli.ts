import { createRequire } from 'node:module';

import type { ArgumentsCamelCase, Argv } from 'yargs';

import { packageVersion } from './adapters/package-root.js';
import { ExitCode, isUserError, permissionErrorFrom, processFailed } from './core/errors.js';
import { completedStep, InterruptedError, PAUSE_POINTS, watchInterrupts } from './adapters/interrupt.js';
import { createLogger } from './adapters/log.js';
import { ProcessError } from './adapters/process-error.js';
import type { CommandSpec, GlobalOptions, Handler } from './commands/spec.js';

/**
 * Every command, in the order --help lists them, by the word that names it. A run that names its
 * command first (`mlx-storage-pr apply ...`) loads only that command's module.
 */
const COMMAND_MODULES: ReadonlyArray<readonly [string, () => Promise<CommandSpec>]> = [
  ['apply', async () => (await import('./commands/apply.js')).applyCommand],
  ['status', async () => (await import('./commands/status.js')).statusCommand],
  ['reset', async () => (await import('./commands/reset.js')).resetCommand],
  ['test', async () => (await import('./commands/test.js')).testCommand],
  ['doctor', async () => (await import('./commands/doctor.js')).doctorCommand],
  ['format', async () => (await import('./commands/format.js')).formatCommand],
  ['check-metal', async () => (await import('./commands/check-metal.js')).checkMetalCommand],
  ['verify', async () => (await import('./commands/verify.js')).verifyCommand],
  ['pr', async () => (await import('./commands/pr.js')).prCommand],
  ['clean', async () => (await import('./commands/clean.js')).cleanCommand],
  ['check', async () => (await import('./commands/check.js')).checkCommand],
  ['export', async () => (await import('./commands/export.js')).exportCommand],
  ['bump', async () => (await import('./commands/bump.js')).bumpCommand],
  ['init', async () => (await import('./commands/init.js')).initCommand],
];

/** The command specs, all of them or only the one `word` names (when it names one). */
export async function loadCommands(word?: string): Promise<CommandSpec[]> {
  const named = COMMAND_MODULES.find(([name]) => name === word);
  return Promise.all((named ? [named] : COMMAND_MODULES).map(([, load]) => load()));
}

export interface Io {
  argv: string[];
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  /** `isTTY` and `columns` say whether and how wide a terminal it is (help text wraps to it). */
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream;
  /** Aborted on Ctrl-C (bin/ turns SIGINT into this). */
  signal?: AbortSignal;
  /** The platform the tool runs on; default: this process's. */
  platform?: NodeJS.Platform;
}

// The ESM build of yargs wraps help text after a fixed number of characters, in the middle of
// words; the CommonJS build wraps between words (wrap-ansi).
const yargs = createRequire(import.meta.url)('yargs') as typeof import('yargs').default;

/** Help text width: the terminal's, at most 110; 110 in a pipe. */
function helpWidth(stdout: Io['stdout']): number {
  return Math.min(110, stdout.isTTY && stdout.columns ? stdout.columns : 110);
}

const USAGE_HINT = 'Run `mlx-storage-pr --help` for usage.';

/** A usage error: the message on stderr and, under --json, one JSON object on stdout. */
function usageFailure(io: Io, message: string, hint: string = USAGE_HINT): number {
  const dashdash = io.argv.indexOf('--');
  if ((dashdash < 0 ? io.argv : io.argv.slice(0, dashdash)).includes('--json')) {
    io.stdout.write(
      `${JSON.stringify({ ok: false, error: { code: 'USAGE', message, hint, details: null } }, null, 2)}\n`,
    );
  }
  io.stderr.write(`error: ${message}\nhint: ${hint}\n`);
  return ExitCode.usage;
}

/**
 * `-DX=ON` before `--` would reach yargs as the short flags D, X, ...; say
 * where CMake arguments go instead. Returns the message, or null.
 */
function misplacedCMakeArguments(argv: readonly string[]): string | null {
  const dashdash = argv.indexOf('--');
  const before = dashdash < 0 ? argv : argv.slice(0, dashdash);
  const cmake = before.filter((a) => /^-D[A-Za-z_]/.test(a));
  if (cmake.length === 0) return null;
  const after = dashdash < 0 ? [] : argv.slice(dashdash + 1);
  const fixed = [...before.filter((a) => !cmake.includes(a)), '--', ...cmake, ...after];
  return `${cmake.join(' ')}: put CMake arguments after --, e.g. \`mlx-storage-pr ${fixed.join(' ')}\``;
}

/**
 * yargs collects a repeated option into a list even when the option takes one
 * value; say so instead of letting a list reach code that expects one value.
 * Returns the message, or null. Options declared as lists may repeat.
 */
function repeatedOption(parser: Argv, args: Record<string, unknown>): string | null {
  // yargs 17 has getOptions; its type declarations do not.
  type Declared = Record<'array' | 'string' | 'number' | 'boolean', string[]>;
  const declared = (parser as Argv & { getOptions(): Declared }).getOptions();
  const lists = new Set(declared.array);
  for (const name of [...declared.string, ...declared.number, ...declared.boolean]) {
    const value = args[name];
    if (lists.has(name) || !Array.isArray(value)) continue;
    return `--${name} was given ${value.length} times (${value.join(', ')}); give it once.`;
  }
  return null;
}

/**
 * A yes/no option given a value other than true or false (`--dry-run=yes`, `--force=1`): yargs
 * would read it as false and do the real thing. The message names the option; null when none.
 */
function badBooleanValue(parser: Argv, argv: readonly string[]): string | null {
  type Declared = Record<'boolean', string[]>;
  const booleans = new Set((parser as Argv & { getOptions(): Declared }).getOptions().boolean);
  const dashdash = argv.indexOf('--');
  for (const token of dashdash < 0 ? argv : argv.slice(0, dashdash)) {
    const match = /^--(no-)?([^=]+)=(.*)$/s.exec(token);
    if (!match || !booleans.has(match[2] as string)) continue;
    if (match[1] === undefined && (match[3] === 'true' || match[3] === 'false')) continue;
    return `${token}: --${match[2]} is a yes/no option: give --${match[2]}, --no-${match[2]}, --${match[2]}=true or --${match[2]}=false.`;
  }
  return null;
}

const EPILOG = `Exit codes: 0 ok, 1 failure, 2 usage (also a bad option value), 3 dirty checkout, 4 patch conflict, 5 MLX source, 6 locked, 7 config/templates, 8 tests failed, 9 tool missing, 10 permission denied, 11 CI still running (pr --ci), 70 internal error, 130 interrupted (Ctrl-C).
Environment: MLX_REPO (MLX source), MLX_STORAGE_PR_WORKDIR (work folder).`;

/** The options every command takes. */
function withGlobalOptions(y: Argv) {
  return y
    .option('mlx-repo', {
      type: 'string',
      describe: 'MLX source: a git URL, a local repository or a bare mirror (env MLX_REPO)',
    })
    .option('workdir', {
      type: 'string',
      describe: 'Folder for the MLX checkout and builds (env MLX_STORAGE_PR_WORKDIR; default <project>/.work)',
    })
    .option('project', {
      type: 'string',
      describe: 'Project folder with mlx-storage-pr.config.json, templates/ and patches/',
    })
    .option('json', {
      type: 'boolean',
      default: false,
      describe: 'Print one JSON object on stdout; human text goes to stderr',
    })
    .option('verbose', { type: 'boolean', default: false, describe: 'Echo every git command' });
}

/** The parsed arguments of a command as yargs hands them over: the global options typed, the command's own ones as they come. */
type GlobalArgs = ArgumentsCamelCase<ReturnType<typeof withGlobalOptions> extends Argv<infer T> ? T : never>;

/** Parses argv, runs one command and returns the exit code. Only bin/ calls process.exit. */
export async function main(io: Io): Promise<number> {
  const misplaced = misplacedCMakeArguments(io.argv);
  if (misplaced) return usageFailure(io, misplaced);
  let outcome: Promise<number> | undefined;
  // The global options are declared on the parser, so every command's arguments carry them: one cast, here.
  const run = (name: string, handler: Handler) => (args: ArgumentsCamelCase) => {
    const repeated = repeatedOption(parser, args);
    outcome = repeated ? Promise.resolve(usageFailure(io, repeated)) : execute(name, handler, args as GlobalArgs, io);
  };

  let parser: Argv = withGlobalOptions(
    yargs(io.argv)
      .parserConfiguration({ 'populate--': true })
      .scriptName('mlx-storage-pr')
      .usage(
        '$0 <command> [options]\n\nTurns a change to MLX (a series of templates and patches) into an upstream pull request and keeps it healthy.',
      ),
  );
  // Anything else than a command first (an option, a typo, nothing) loads them all: yargs then
  // knows every command, for --help, its suggestions and its checks.
  for (const spec of await loadCommands(io.argv[0]))
    parser = parser.command(spec.name, spec.describe, spec.builder, run(spec.name.split(' ')[0] as string, spec.run));
  // The [type] [default] column is glued to the description when the description fills its
  // column exactly (cliui), so it is left out; descriptions state the defaults that matter.
  // yargs 17 has usageConfiguration; its type declarations do not.
  parser = (parser as Argv & { usageConfiguration(config: { 'hide-types': boolean }): Argv }).usageConfiguration({
    'hide-types': true,
  });
  parser = parser
    // Before yargs' own checks and the commands' (a `--suite=yes` read as false would trip those first).
    .middleware(() => {
      const bad = badBooleanValue(parser, io.argv);
      if (bad) throw Object.assign(new Error(bad), { usage: true });
    }, true)
    .demandCommand(1, 'Name a command; see --help.')
    .strict()
    .recommendCommands()
    .epilog(EPILOG)
    .version(packageVersion())
    .help()
    .wrap(helpWidth(io.stdout))
    .exitProcess(false)
    .fail((message, error) => {
      // An expected error keeps its code and hint; anything else a check of the options threw is a usage error.
      if (error && isUserError(error)) throw error;
      throw Object.assign(new Error(error?.message ?? message), { usage: true });
    });

  try {
    // With a callback yargs hands over help and version text instead of printing it to process.stdout.
    await parser.parseAsync(io.argv, {}, (_error, _argv, output) => {
      if (output) io.stdout.write(`${output}\n`);
    });
  } catch (error) {
    if ((error as { usage?: boolean }).usage) return usageFailure(io, (error as Error).message);
    throw error;
  }
  return outcome ? await outcome : ExitCode.ok;
}

async function execute(name: string, handler: Handler, args: GlobalArgs, io: Io): Promise<number> {
  const { json, verbose } = args;
  const options: GlobalOptions & Record<string, unknown> = {
    ...args,
    cwd: io.cwd,
    env: io.env,
    platform: io.platform ?? process.platform,
    logger: createLogger({ verbose, stream: io.stderr }),
  };
  // Test-only: the tool's interrupt tests make a run wait at a named step for their Ctrl-C.
  const pauseAt = PAUSE_POINTS.find((p) => p === io.env['MLX_STORAGE_PR_TEST_PAUSE_AT']);
  watchInterrupts(io.signal, pauseAt === undefined ? undefined : { step: pauseAt, stream: io.stderr });
  try {
    const result = await handler(options);
    // After Ctrl-C the result is not reported as a success, even when the work got done, unless
    // its effect outside this machine (a push) was complete: then the result is what happened.
    const completed = completedStep();
    if (io.signal?.aborted && completed === null) throw new InterruptedError({ finished: true });
    const interrupted = io.signal?.aborted ? { interrupted: `after ${completed} completed` } : {};
    if (json)
      io.stdout.write(
        `${JSON.stringify({ ok: (result.exitCode ?? 0) === 0, ...result.data, ...interrupted }, null, 2)}\n`,
      );
    else io.stdout.write(result.lines.map((l) => `${l}\n`).join(''));
    if (io.signal?.aborted)
      io.stderr.write(`Ctrl-C: interrupted after ${completed} completed; the result above is done.\n`);
    return result.exitCode ?? ExitCode.ok;
  } catch (caught) {
    // Whatever failed after Ctrl-C failed because of it: report the interrupt and the state it left.
    // File-system permission errors from anywhere get the same report as other expected failures.
    const finished = caught instanceof InterruptedError && caught.finished;
    const error = io.signal?.aborted
      ? await (await import('./series/interrupted.js')).interruptedError(name, options, { finished })
      : (permissionErrorFrom(caught) ?? (caught instanceof ProcessError ? processFailed(caught) : caught));
    if (isUserError(error)) {
      if (json) {
        const payload = {
          ok: false,
          error: { code: error.code, message: error.message, hint: error.hint ?? null, details: error.details ?? null },
        };
        io.stdout.write(`${JSON.stringify(payload, null, 2)}\n`);
      }
      io.stderr.write(`error: ${error.message}\n${error.hint ? `hint: ${error.hint}\n` : ''}`);
      return error.exitCode;
    }
    const err = error as Error;
    if (json)
      io.stdout.write(`${JSON.stringify({ ok: false, error: { code: 'INTERNAL', message: err.message } }, null, 2)}\n`);
    io.stderr.write(
      `internal error: ${err.stack ?? String(err)}\nThis is a bug in mlx-storage-pr; please report it with the output above.\n`,
    );
    return ExitCode.internal;
  }
}
