/**
 * What each command needs from the machine, and what `doctor` concludes from
 * the checks it ran. Pure: the checks come in as results.
 */
import type { ReportItem } from '../core/report-items.js';

/** Commands `doctor` can be asked about, in the order it reports them. */
export const DOCTOR_COMMANDS = ['apply', 'test', 'format', 'check-metal', 'verify'] as const;
export type DoctorCommand = (typeof DOCTOR_COMMANDS)[number];

/**
 * Commands that need what another one needs: git only like `apply`
 * (`check --build` builds like `test`), or everything `verify` runs, as
 * `pr` runs verify's checks before it pushes.
 */
export const NEEDS_OF: Readonly<Record<string, DoctorCommand>> = {
  status: 'apply',
  reset: 'apply',
  check: 'apply',
  export: 'apply',
  bump: 'apply',
  pr: 'verify',
};

export interface Need {
  /** A check id, or a prefix ending in `-` for a family of checks (`offline-`). */
  id: string;
  required: boolean;
  /** For an optional check whose detail does not say it: what the command does without it. */
  without?: string;
}

const GIT: Need = { id: 'git', required: true };

function buildNeeds(offline: boolean): Need[] {
  return [
    GIT,
    { id: 'cmake', required: true },
    { id: 'compiler', required: true },
    { id: 'blas', required: true },
    { id: 'xcode', required: true },
    { id: 'metal', required: true },
    { id: 'disk', required: true },
    { id: 'ninja', required: false },
    { id: 'ccache', required: false },
    { id: 'twin', required: false, without: 'test --metal-twin cannot run' },
    { id: 'gxx-11', required: false, without: "test --upstream-ci builds with the default compiler, not MLX's g++ 11" },
    { id: 'sanitizers', required: false, without: 'test --sanitize cannot run' },
    offline
      ? { id: 'offline-', required: true }
      : { id: 'offline-', required: false, without: 'needed only for --offline' },
  ];
}

/** The checks a command needs, each required or optional. */
export function commandNeeds(command: DoctorCommand, options: { offline: boolean }): Need[] {
  switch (command) {
    case 'apply':
      return [GIT];
    case 'test':
      return buildNeeds(options.offline);
    case 'format':
      return [
        GIT,
        { id: 'clang-format', required: true },
        { id: 'cmake-format', required: false, without: 'CMake files are reported as not checked' },
      ];
    case 'check-metal':
      return [
        GIT,
        { id: 'metal-clang', required: true },
        { id: 'metal-libcxx', required: true },
        { id: 'metal-cpp', required: true },
      ];
    case 'verify':
      return [
        ...buildNeeds(options.offline).filter((n) => n.id !== 'twin'),
        { id: 'twin', required: true },
        { id: 'clang-format', required: true },
        { id: 'cmake-format', required: true },
        { id: 'sphinx', required: true },
        {
          id: 'metal-clang',
          required: false,
          without: 'the Metal type-check is not checked (required with --metal-cpp or --require-metal)',
        },
        {
          id: 'metal-libcxx',
          required: false,
          without: 'the Metal type-check is not checked (required with --metal-cpp or --require-metal)',
        },
        {
          id: 'metal-cpp',
          required: false,
          without: 'the Metal type-check is not checked without --metal-cpp',
        },
      ];
  }
}

/**
 * The commands named on the command line, checked and in report order;
 * none named means all of them. Unknown names come back in `unknown`.
 */
export function askedCommands(names: readonly string[]): { commands: DoctorCommand[]; unknown: string[] } {
  const known = new Set<string>(DOCTOR_COMMANDS);
  const unknown = names.filter((n) => !known.has(n) && !Object.hasOwn(NEEDS_OF, n));
  const wanted = new Set(names.map((n) => NEEDS_OF[n] ?? n));
  const commands = names.length === 0 ? [...DOCTOR_COMMANDS] : DOCTOR_COMMANDS.filter((c) => wanted.has(c));
  return { commands, unknown };
}

/** Every check id prefix the asked commands need, to run only those checks. */
export function neededIds(commands: readonly DoctorCommand[], options: { offline: boolean }): Set<string> {
  return new Set(commands.flatMap((c) => commandNeeds(c, options).map((n) => n.id)));
}

function needFor(check: ReportItem, needs: readonly Need[]): Need | undefined {
  return needs.find((n) => (n.id.endsWith('-') ? check.id.startsWith(n.id) : check.id === n.id));
}

export interface CommandReadiness {
  command: DoctorCommand;
  ready: boolean;
  /** Ids of the required checks that did not pass. */
  missing: string[];
  /** Ids of the optional checks that did not pass. */
  optionalMissing: string[];
}

export interface DoctorReport {
  ready: boolean;
  commands: CommandReadiness[];
  /** Each check once; `required` is true when an asked command requires it. */
  checks: ReportItem[];
  lines: string[];
}

const MARK = { pass: 'ok  ', required: 'FAIL', optional: 'opt ', notChecked: 'n/c ' };

/**
 * Groups the checks under the first asked command that needs them, marks a
 * check that an asked command can do without as optional instead of FAIL,
 * and says which commands are ready. `ready` is false when any check an
 * asked command requires did not pass.
 */
export function doctorReport(
  commands: readonly DoctorCommand[],
  results: readonly ReportItem[],
  options: { offline: boolean },
): DoctorReport {
  const readiness: CommandReadiness[] = [];
  const lines: string[] = [];
  /** The command under which each check was listed. */
  const shown = new Map<string, DoctorCommand>();
  const requiredByAny = new Set<string>();

  for (const command of commands) {
    const needs = commandNeeds(command, options);
    const mine = results
      .map((check) => ({ check, need: needFor(check, needs) }))
      .filter((x): x is { check: ReportItem; need: Need } => x.need !== undefined);
    const missing = mine.filter((x) => x.need.required && x.check.status !== 'pass').map((x) => x.check.id);
    const optionalMissing = mine.filter((x) => !x.need.required && x.check.status !== 'pass').map((x) => x.check.id);
    for (const x of mine) if (x.need.required) requiredByAny.add(x.check.id);
    readiness.push({ command, ready: missing.length === 0, missing, optionalMissing });

    const fresh = mine.filter((x) => !shown.has(x.check.id));
    const earlier = mine.filter((x) => shown.has(x.check.id));
    lines.push(`${command}: ${missing.length === 0 ? 'ready' : 'NOT READY'}`);
    if (earlier.length) {
      const failing = earlier.filter((x) => x.need.required && x.check.status !== 'pass').map((x) => x.check.title);
      const under = [...new Set(earlier.map((x) => shown.get(x.check.id)))].join(', ');
      lines.push(
        `  ${failing.length ? MARK.required : MARK.pass} also needs checks listed under ${under}${failing.length ? `; not ready: ${failing.join(', ')}` : ''}`,
      );
    }
    for (const { check, need } of fresh) {
      shown.set(check.id, command);
      const mark =
        check.status === 'pass'
          ? MARK.pass
          : !need.required
            ? MARK.optional
            : check.status === 'not-checked'
              ? MARK.notChecked
              : MARK.required;
      const optional = need.required ? '' : need.without ? ` (optional: without it, ${need.without})` : ' (optional)';
      const [first = '', ...rest] = check.detail.split('\n');
      lines.push(
        `  ${mark} ${check.title}: ${first}${check.status === 'pass' ? '' : optional}`,
        ...rest.map((l) => `       ${l}`),
      );
      if (check.fix && check.status !== 'pass') lines.push(`       fix: ${check.fix}`);
    }
  }

  const ready = readiness.filter((r) => r.ready).map((r) => r.command);
  const notReady = readiness.filter((r) => !r.ready);
  const title = (id: string) => results.find((c) => c.id === id)?.title ?? id;
  lines.push('');
  if (ready.length) lines.push(`Ready: ${ready.join(', ')}.`);
  for (const r of notReady) lines.push(`Not ready: ${r.command} (needs ${r.missing.map(title).join(', ')}).`);
  if (notReady.length)
    lines.push(
      'Run the fix lines above, then `mlx-storage-pr doctor` again. `opt` marks what a command can do without; `n/c` what could not be checked.',
    );

  const checks = results
    .filter((c) => commands.some((cmd) => needFor(c, commandNeeds(cmd, options)) !== undefined))
    .map((c) => ({ ...c, required: requiredByAny.has(c.id) }));
  return { ready: notReady.length === 0, commands: readiness, checks, lines };
}
