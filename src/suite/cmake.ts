import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

import type { Env } from '../adapters/env.js';
import { ifAbsent, makeMarkedFolder } from '../adapters/files.js';
import { Git } from '../adapters/git.js';
import type { Logger } from '../adapters/log.js';
import { canConnect } from '../adapters/network.js';
import { orFailure, ProcessError } from '../adapters/process-error.js';
import { runLogged } from '../adapters/process.js';
import { createProgress } from '../adapters/progress.js';
import { estimateText, rateKey, readRates, saveRate } from './build-rate.js';
import { doctestFilterEscape, parseDoctestList, parseDoctestXml, type CaseResult, type DoctestRun } from './doctest.js';
import { downloadSources, proxyFor } from './downloads.js';
import { UserError } from '../core/errors.js';

export interface BuildSpec {
  sourceDir: string;
  buildDir: string;
  /** Full CMake argument list except -S/-B. */
  cmakeArgs: string[];
  target: string;
  /** Test binary, relative to the build folder. */
  testBinary: string;
  /** The environment of the test binary, and of cmake in the C locale (compilerEnv). */
  env: Env;
  label: string;
  /** Names this build's and test run's logs apart from the suite's in the same folder (e.g. `twin`). */
  logName?: string | undefined;
  /** Compilers to run at once (`cmake --build --parallel`); default: the generator's (Ninja: one per CPU and 2). */
  jobs?: number | undefined;
  /** Where this machine's build rate is kept, for the estimate said before a big build. */
  rateFile?: string | undefined;
}

export function logFiles(buildDir: string, name?: string) {
  const prefix = name ? `mlx-storage-pr-${name}` : 'mlx-storage-pr';
  return {
    configure: path.join(buildDir, 'mlx-storage-pr-configure.log'),
    build: path.join(buildDir, `${prefix}-build.log`),
    test: path.join(buildDir, `${prefix}-test.log`),
  };
}

/**
 * The environment CMake and the compilers run in: the user's, in the C
 * locale. The tool reads the compiler's messages (the `error:` lines below,
 * the metal-cpp calls the twin lacks in core/twin.ts); in another language
 * g++ translates `error:`, and in any UTF-8 locale (Debian's default is
 * C.UTF-8) it quotes with ‘’. LANG is set too and LC_CTYPE/LC_MESSAGES are
 * dropped because ccache hashes them: the cache is then the same whatever the
 * user's locale is. The test binary keeps the user's environment.
 */
function compilerEnv(env: Env): Env {
  return { ...env, LC_ALL: 'C', LANG: 'C', LC_CTYPE: undefined, LC_MESSAGES: undefined };
}

const STAMP = 'mlx-storage-pr-configure.json';

/**
 * Runs CMake's configure step only when there is no cache yet or our options
 * changed. Changes to CMakeLists.txt files are picked up by the build itself.
 */
export async function configureIfNeeded(spec: BuildSpec, log: Logger): Promise<boolean> {
  const stampFile = path.join(spec.buildDir, STAMP);
  const stamp = JSON.stringify({ source: spec.sourceDir, args: spec.cmakeArgs });
  if (
    existsSync(path.join(spec.buildDir, 'CMakeCache.txt')) &&
    (await ifAbsent(readFile(stampFile, 'utf8'), '')) === stamp
  ) {
    log.info(`${spec.label}: configuration unchanged, not re-running CMake`);
    return false;
  }
  await verifyDownloadsReachable(spec, log);
  // A build folder is marked as the tool's when made here; one already there keeps what it has.
  await makeMarkedFolder(spec.buildDir);
  const logs = logFiles(spec.buildDir);
  await writeFile(logs.configure, '');
  const result = await orFailure(
    runLogged(log, 'cmake', ['-S', spec.sourceDir, '-B', spec.buildDir, ...spec.cmakeArgs], {
      cwd: spec.buildDir,
      env: compilerEnv(spec.env),
      logFile: logs.configure,
    }),
  );
  if (result instanceof ProcessError) {
    const download =
      /(Failed to download|error: downloading|Could not resolve host|unable to access 'https?:|Failed to connect to|Network is unreachable)/i.test(
        result.stderr,
      );
    throw new UserError(
      'CONFIGURE_FAILED',
      `${spec.label}: CMake configure failed${download ? ' while downloading a dependency' : ''}:\n${indent(result.stderr, 20)}`,
      {
        hint: download ? `${OFFLINE_HINT} Full log: ${logs.configure}` : `Read the full log: ${logs.configure}`,
        details: { log: logs.configure },
      },
    );
  }
  await writeFile(stampFile, stamp);
  return true;
}

const OFFLINE_HINT =
  'Without network, use --offline to build from system packages (`mlx-storage-pr doctor test --offline` says whether this machine has them), or --deps-dir <dir> with local copies.';

/**
 * Before CMake configures with downloads on, checks that the hosts its
 * FetchContent declarations name (or the proxy) answer, so that a machine
 * without network fails in seconds with a message naming --offline instead
 * of sitting silent in CMake's download retries. Says where the downloads
 * come from when they do.
 */
export async function verifyDownloadsReachable(spec: BuildSpec, log: Logger): Promise<void> {
  if (spec.cmakeArgs.some((a) => /^-DFETCHCONTENT_FULLY_DISCONNECTED(:BOOL)?=(ON|TRUE|YES|1)$/i.test(a))) return;
  const git = new Git(spec.sourceDir, log, spec.env);
  const paths = (await git.raw(['ls-files', '-z', '--', '*CMakeLists.txt', '*.cmake'])).split('\0').filter(Boolean);
  const files = await Promise.all(
    paths.map(async (p) => ({ path: p, text: await ifAbsent(readFile(path.join(spec.sourceDir, p), 'utf8'), '') })),
  );
  const sources = downloadSources(files);
  if (sources.length === 0) return;
  const probes = await Promise.all(
    sources.map(async (source) => {
      const proxy = proxyFor(source.url, spec.env);
      const target = proxy ?? { host: source.host, port: source.port };
      const result = await canConnect(target.host, target.port, 5000);
      return { source, target: `${target.host}:${target.port}${proxy ? ' (proxy)' : ''}`, result };
    }),
  );
  const failed = probes.filter((p) => !p.result.ok);
  const describe = (p: (typeof probes)[number]) =>
    `${p.target} (${p.source.url} in ${p.source.file}${p.source.more ? ` and ${p.source.more} more` : ''})${p.result.ok ? '' : `: ${p.result.reason}`}`;
  if (failed.length === probes.length) {
    throw new UserError(
      'DOWNLOADS_UNREACHABLE',
      `${spec.label}: CMake would download dependencies while it configures, and none of their hosts can be reached:\n${probes.map((p) => `  ${describe(p)}`).join('\n')}`,
      {
        hint: OFFLINE_HINT,
        details: {
          buildDir: spec.buildDir,
          hosts: probes.map((p) => ({
            target: p.target,
            url: p.source.url,
            file: p.source.file,
            reason: p.result.ok ? null : p.result.reason,
          })),
        },
      },
    );
  }
  for (const p of failed)
    log.warn(`${spec.label}: ${describe(p)} cannot be reached; CMake may fail if it needs it. ${OFFLINE_HINT}`);
  log.info(
    `${spec.label}: CMake downloads dependencies from ${[...new Set(probes.map((p) => p.source.host))].join(', ')} while it configures; this can take minutes (--offline uses local copies).`,
  );
}

/** Builds the target; `steps` is how many build steps Ninja ran (0 when up to date or not known). */
export async function buildTarget(
  spec: BuildSpec,
  log: Logger,
  stream: NodeJS.WritableStream,
): Promise<{ seconds: number; steps: number }> {
  const logs = logFiles(spec.buildDir, spec.logName);
  await writeFile(logs.build, '');
  const progress = createProgress(stream, spec.label);
  const rates = spec.rateFile ? await readRates(spec.rateFile) : null;
  const key = rateKey(spec.buildDir, spec.jobs);
  const start = Date.now();
  let steps = 0;
  const result = await orFailure(
    runLogged(
      log,
      'cmake',
      ['--build', spec.buildDir, '--target', spec.target, ...(spec.jobs ? ['--parallel', String(spec.jobs)] : [])],
      {
        cwd: spec.buildDir,
        env: compilerEnv(spec.env),
        logFile: logs.build,
        onLine: (line) => {
          progress.line(line);
          const total = /^\[\d+\/(\d+)\]/.exec(line)?.[1];
          if (!total) return;
          if (steps === 0 && rates) {
            const estimate = estimateText(Number(total), rates, { key, jobs: spec.jobs }, availableParallelism());
            if (estimate) log.info(`${spec.label}: ${estimate}`);
          }
          steps = Number(total);
        },
      },
    ),
  );
  progress.done();
  if (result instanceof ProcessError) {
    const errors = (await readFile(logs.build, 'utf8'))
      .split('\n')
      .filter((l) => /(error:|Error \d|undefined reference)/.test(l))
      .slice(0, 10);
    throw new UserError(
      'BUILD_FAILED',
      `${spec.label}: the build failed:\n${indent(errors.length ? errors.join('\n') : result.stderr, 30)}`,
      {
        hint: `Fix the errors above (full log: ${logs.build}), then run the command again; the build resumes where it stopped.`,
        details: { log: logs.build, errors },
      },
    );
  }
  const seconds = (Date.now() - start) / 1000;
  // The rate only makes a later estimate: a cache folder that cannot be written does not fail the build.
  if (spec.rateFile)
    await saveRate(spec.rateFile, { key, steps, seconds }).catch((error: unknown) =>
      log.debug(`build rate not saved in ${spec.rateFile}: ${String(error)}`),
    );
  return { seconds, steps };
}

/**
 * Runs the doctest binary with the XML reporter. When a case crashes the
 * binary, the remaining cases are run again without it, so one crash does
 * not hide the rest of the suite.
 */
export async function runDoctest(
  spec: BuildSpec,
  log: Logger,
  options: {
    filter?: string | undefined;
    sourceFile?: string | undefined;
    timeoutMs?: number | undefined;
    /** Cases left out of this run (exact names). */
    exclude?: readonly string[] | undefined;
  },
): Promise<DoctestRun & { crashes: string[] }> {
  const binary = path.join(spec.buildDir, spec.testBinary);
  const logs = logFiles(spec.buildDir, spec.logName);
  await writeFile(logs.test, '');
  const cases: CaseResult[] = [];
  const crashes: string[] = [];
  for (let attempt = 0; attempt < 5; attempt++) {
    const xmlFile = path.join(
      spec.buildDir,
      `mlx-storage-pr-${spec.logName ? `${spec.logName}-` : ''}results-${attempt}.xml`,
    );
    await writeFile(xmlFile, '');
    const args = ['--reporters=xml', `--out=${xmlFile}`, '--no-intro=true', '--no-version=true'];
    if (options.filter) args.push(`--test-case=${options.filter}`);
    if (options.sourceFile) args.push(`--source-file=${options.sourceFile}`);
    const excluded = [...(options.exclude ?? []), ...crashes];
    if (excluded.length) args.push(`--test-case-exclude=${excluded.map(doctestFilterEscape).join(',')}`);
    // A failing case makes the binary exit non-zero: its run is read from the XML either way.
    const ran = await orFailure(
      runLogged(log, binary, args, {
        cwd: spec.buildDir,
        env: spec.env,
        logFile: logs.test,
        ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
      }),
    );
    const result =
      ran instanceof ProcessError
        ? { exitCode: ran.exitCode, signal: ran.signal, tail: ran.stderr }
        : { exitCode: 0, signal: null, tail: ran.tail };
    if (ran instanceof ProcessError && ran.notStarted) {
      throw new UserError('TEST_BINARY_CRASHED', `${spec.label}: could not start ${binary}: ${result.tail}`, {
        hint: 'Check that the build produced the test binary.',
      });
    }
    const run = parseDoctestXml(await readFile(xmlFile, 'utf8'));
    const seen = new Set(cases.map((c) => c.name));
    cases.push(...run.cases.filter((c) => !seen.has(c.name)));
    // doctest reports a crashing case and closes its XML before the process dies,
    // so a crash shows as a crashed case or a signal, not only as cut-off output.
    const crashed = run.interrupted ?? run.cases.find((c) => c.status === 'crashed' && !crashes.includes(c.name))?.name;
    if (run.complete && crashed === undefined && result.signal === null)
      return { cases, complete: true, interrupted: null, crashes };
    if (!crashed) {
      throw new UserError(
        'TEST_BINARY_CRASHED',
        `${spec.label}: ${binary} stopped (${result.signal ?? `exit ${result.exitCode}`}) before any case finished:\n${indent(result.tail, 15)}`,
        {
          hint: `Run it by hand to see why: ${binary}`,
          details: { log: logs.test },
        },
      );
    }
    const failed = cases.find((c) => c.name === crashed);
    if (failed) {
      failed.status = 'crashed';
      failed.failures.push({
        file: failed.file,
        line: failed.line,
        message: `the test binary died (${result.signal ?? `exit ${result.exitCode}`}) in this case`,
      });
    }
    log.warn(`${spec.label}: the test binary died in "${crashed}"; running the remaining cases without it`);
    crashes.push(crashed);
  }
  return { cases, complete: false, interrupted: crashes.at(-1) ?? null, crashes };
}

/** Every test case name the binary has (`--list-test-cases`). */
export async function listDoctestCases(spec: BuildSpec, log: Logger, filter?: string): Promise<string[]> {
  const binary = path.join(spec.buildDir, spec.testBinary);
  const args = ['--list-test-cases', '--reporters=xml', '--no-intro=true', '--no-version=true'];
  if (filter) args.push(`--test-case=${filter}`);
  // The list is read from the output, also when the binary exits non-zero.
  const result = await orFailure(runLogged(log, binary, args, { cwd: spec.buildDir, env: spec.env, keepOutput: true }));
  return parseDoctestList(result.output);
}

function indent(text: string, maxLines: number): string {
  return text
    .trim()
    .split('\n')
    .slice(-maxLines)
    .map((l) => `  ${l}`)
    .join('\n');
}
