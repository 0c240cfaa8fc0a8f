import { packageVersion } from './adapters/package-root.js';
import { closestName, editDistance } from './core/closest.js';
import { CommandLineError, Declarations, parseArguments, TOOL, type Argv } from './core/command-line.js';
import { commandList, helpText, type HelpSection } from './core/help-text.js';
import { ExitCode, isUserError, noSpaceErrorFrom, permissionErrorFrom, processFailed } from './core/errors.js';
import { paint, useColour } from './core/colour.js';
import { failureReport, INTERNAL_HINT, mapJsonStrings } from './core/json.js';
import { redactUrls } from './core/redact.js';
import { completedStep, InterruptedError, watchInterrupts } from './adapters/interrupt.js';
import { createLogger } from './adapters/log.js';
import { ProcessError } from './adapters/process-error.js';
import type { CommandSpec, GlobalOptions, Handler, Seams } from './commands/spec.js';

/**
 * Every command, in the order --help lists them, by the word that names it. A run that names its
 * command first (`mlx-storage-pr apply ...`) loads only that command's module and what it imports:
 * the one `import()` per command.
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
  /** `isTTY`: whether it is a terminal (`error:` and `warning:` are coloured there). */
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** Aborted on Ctrl-C (bin/ turns SIGINT into this). */
  signal?: AbortSignal;
  /** The platform the tool runs on; default: this process's. */
  platform?: NodeJS.Platform;
  /** For the tool's own tests: where to pause, how often to poll. */
  seams?: Seams;
}

/** Help text width: the terminal's, at most 110; 110 in a pipe. */
function helpWidth(stdout: Io['stdout']): number {
  return Math.min(110, stdout.isTTY && stdout.columns ? stdout.columns : 110);
}

const USAGE_HINT = 'Run `mlx-storage-pr --help` for usage.';

/**
 * A usage error: the message on stderr and, under --json, one JSON object on stdout.
 * `command` is the command the line named, or null.
 */
function usageFailure(io: Io, command: string | null, given: string, hint: string = USAGE_HINT): number {
  const message = redactUrls(given);
  const dashdash = io.argv.indexOf('--');
  if ((dashdash < 0 ? io.argv : io.argv.slice(0, dashdash)).includes('--json')) {
    const report = { ok: false, command, error: { code: 'USAGE', message, hint, details: null } };
    io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  }
  io.stderr.write(paint(`error: ${message}\nhint: ${hint}\n`, useColour(io.env, io.stderr.isTTY)));
  return ExitCode.usage;
}

/**
 * `-DX=ON` before `--` would be read as an unknown option -D; say where
 * CMake arguments go instead. Returns the message, or null.
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

const EPILOG = `Exit codes: 0 ok, 1 failure, 2 usage (also a bad option value), 3 dirty checkout, 4 patch conflict, 5 MLX source, 6 locked, 7 config/templates, 8 tests failed, 9 tool missing, 10 permission denied, 11 CI still running (pr --ci), 70 internal error, 130 interrupted (Ctrl-C).
Environment: MLX_REPO (MLX source), MLX_STORAGE_PR_WORKDIR (work folder).`;

/** The options every command takes, declared first on each command. */
function withGlobalOptions(y: Argv) {
  return y
    .option('mlx-repo', {
      type: 'string',
      placeholder: 'url|path',
      describe: 'MLX source: a git URL, a local repository or a bare mirror (env MLX_REPO)',
    })
    .option('workdir', {
      type: 'string',
      placeholder: 'dir',
      describe: 'Folder for the MLX checkout and builds (env MLX_STORAGE_PR_WORKDIR; default <project>/.work)',
    })
    .option('project', {
      type: 'string',
      placeholder: 'dir',
      describe: 'Project folder with mlx-storage-pr.config.json, templates/ and patches/',
    })
    .option('json', {
      type: 'boolean',
      default: false,
      describe: 'Print one JSON object on stdout; human text goes to stderr',
    })
    .option('verbose', { type: 'boolean', default: false, describe: 'Echo every git command' });
}
const GLOBAL_OPTION_COUNT = 5;

/** The parsed arguments of a command: the global options typed, the command's own ones as they come. */
type GlobalArgs = ReturnType<typeof withGlobalOptions> extends Argv<infer T> ? T & Record<string, unknown> : never;

const TOP_DESCRIBE =
  'Turns a change to MLX (a series of templates and patches) into an upstream pull request and keeps it healthy.';

/** Parses argv, runs one command and returns the exit code. Only bin/ calls process.exit. */
export async function main(io: Io): Promise<number> {
  // `help [command]` is `[command] --help`, as in git and gh.
  if (io.argv[0] === 'help') return main({ ...io, argv: [...io.argv.slice(1, 2), '--help', ...io.argv.slice(2)] });
  const misplaced = misplacedCMakeArguments(io.argv);
  if (misplaced) return usageFailure(io, commandNamed(io.argv[0]), misplaced);
  const dashdash = io.argv.indexOf('--');
  const before = dashdash < 0 ? io.argv : io.argv.slice(0, dashdash);
  const wantsHelp = before.includes('--help') || before.includes('-h');
  const wantsVersion = before.includes('--version') || before.includes('-v');
  const word = io.argv[0];
  if (commandNamed(word) === null && wantsVersion && !wantsHelp) return version(io);
  // Anything else than a command first (an option, a typo, nothing) loads them all, for the
  // list of commands and the nearest name.
  const commands = await loadCommands(word);
  const spec = commands.length === 1 ? commands[0] : undefined;
  if (spec === undefined) {
    const rows = commands.map((c) => [c.name.split(' ')[0] as string, c.describe] as const);
    const named = word !== undefined && !word.startsWith('-');
    if (wantsHelp && !named)
      return printHelp(io, {
        usage: `${TOOL} <command> [options]`,
        describe: TOP_DESCRIBE,
        commands: rows.map(([name, describe]) => [`${TOOL} ${name}`, describe] as const),
        declared: topDeclarations(),
      });
    if (!named) {
      io.stderr.write(`usage: ${TOOL} <command> [options]\n\nCommands:\n${commandList(rows, 110).join('\n')}\n\n`);
      return usageFailure(io, null, 'Name a command.', `Run \`${TOOL} help <command>\` for its options and examples.`);
    }
    // A near name (a typo, or capitals) is suggested; a word far from every command is not.
    const lower = word.toLowerCase();
    const near = closestName(
      lower,
      rows.map(([name]) => name),
    );
    const guess = near !== null && editDistance(lower, near) <= 2 ? `. Did you mean ${near}?` : '';
    return usageFailure(io, null, `Unknown command: ${word}${guess}`);
  }
  const declared = spec.builder(withGlobalOptions(new Declarations())) as unknown as Declarations;
  if (wantsHelp) return printHelp(io, { usage: `${TOOL} ${spec.name}`, describe: spec.describe, declared });
  if (wantsVersion) return version(io);
  let args: GlobalArgs;
  try {
    args = parseArguments(declared, io.argv.slice(1), io.env) as GlobalArgs;
  } catch (error) {
    if (error instanceof CommandLineError) return usageFailure(io, spec.name.split(' ')[0] as string, error.message);
    throw error;
  }
  return execute(spec.name.split(' ')[0] as string, spec.run, args, io);
}

/** The command `word` names, or null. */
function commandNamed(word: string | undefined): string | null {
  return COMMAND_MODULES.some(([name]) => name === word) ? (word as string) : null;
}

function topDeclarations(): Declarations {
  const declared = withGlobalOptions(new Declarations()) as unknown as Declarations;
  return declared.epilog(EPILOG);
}

function printHelp(io: Io, section: HelpSection): number {
  io.stdout.write(`${helpText(section, helpWidth(io.stdout), GLOBAL_OPTION_COUNT)}\n`);
  return ExitCode.ok;
}

function version(io: Io): number {
  io.stdout.write(`${packageVersion()}\n`);
  return ExitCode.ok;
}

async function execute(name: string, handler: Handler, args: GlobalArgs, io: Io): Promise<number> {
  const { json, verbose } = args;
  const options: GlobalOptions & Record<string, unknown> = {
    ...args,
    cwd: io.cwd,
    env: io.env,
    platform: io.platform ?? process.platform,
    logger: createLogger({ verbose, stream: io.stderr, env: io.env }),
    seams: io.seams,
  };
  const pauseAt = io.seams?.pauseAt;
  watchInterrupts(io.signal, pauseAt === undefined ? undefined : { step: pauseAt, stream: io.stderr });
  try {
    const result = await handler(options);
    // After Ctrl-C the result is not reported as a success, even when the work got done, unless
    // its effect outside this machine (a push) was complete: then the result is what happened.
    const completed = completedStep();
    if (io.signal?.aborted && completed === null) throw new InterruptedError({ finished: true });
    const interrupted = io.signal?.aborted ? { interrupted: `after ${completed} completed` } : {};
    // What the tool prints names no URL's user part (a token in --mlx-repo), whoever put it there.
    if (json) {
      const report = mapJsonStrings({ ok: (result.exitCode ?? 0) === 0, ...result.data, ...interrupted }, redactUrls);
      io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    } else
      io.stdout.write(
        paint(result.lines.map((l) => `${redactUrls(l)}\n`).join(''), useColour(io.env, io.stdout.isTTY)),
      );
    if (io.signal?.aborted)
      io.stderr.write(`Ctrl-C: interrupted after ${completed} completed; the result above is done.\n`);
    return result.exitCode ?? ExitCode.ok;
  } catch (caught) {
    // Whatever failed after Ctrl-C failed because of it: report the interrupt and the state it left.
    // A full disk and file-system permission errors from anywhere get the same report as other expected failures.
    const finished = caught instanceof InterruptedError && caught.finished;
    const error = io.signal?.aborted
      ? await (await import('./series/interrupted.js')).interruptedError(name, options, { finished })
      : (noSpaceErrorFrom(caught, { command: name }) ??
        permissionErrorFrom(caught) ??
        (caught instanceof ProcessError ? processFailed(caught) : caught));
    if (json) io.stdout.write(`${JSON.stringify(mapJsonStrings(failureReport(name, error), redactUrls), null, 2)}\n`);
    if (isUserError(error)) {
      io.stderr.write(
        paint(
          redactUrls(`error: ${error.message}\n${error.hint ? `hint: ${error.hint}\n` : ''}`),
          useColour(io.env, io.stderr.isTTY),
        ),
      );
      return error.exitCode;
    }
    const err = error as Error;
    io.stderr.write(redactUrls(`internal error: ${err.stack ?? String(err)}\n${INTERNAL_HINT}\n`));
    return ExitCode.internal;
  }
}
