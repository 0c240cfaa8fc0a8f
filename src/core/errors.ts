import { constants as osConstants } from 'node:os';

/** Exit codes. docs/exit-codes.md documents them; test/unit/docs-exit-codes.test.ts keeps the two in step. */
export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  dirty: 3,
  conflict: 4,
  source: 5,
  locked: 6,
  config: 7,
  testsFailed: 8,
  toolMissing: 9,
  permission: 10,
  /** `pr --ci`: some runs are queued or running. */
  ciRunning: 11,
  /** The disk (or the user's quota) is full: ENOSPC, EDQUOT. */
  noSpace: 12,
  internal: 70,
  interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export type ErrorCode =
  | 'CONFIG_INVALID'
  | 'TEMPLATE_VARIABLE'
  | 'TEMPLATE_SYNTAX'
  | 'PATH_ESCAPES_CHECKOUT'
  | 'SERIES_INVALID'
  | 'SERIES_EMPTY'
  | 'NO_METAL_ROLE'
  | 'SOURCE_UNREACHABLE'
  | 'SOURCE_NOT_REPOSITORY'
  | 'COMMIT_NOT_FOUND'
  | 'REF_NOT_FOUND'
  | 'HEAD_MISMATCH'
  | 'CHECKOUT_INVALID'
  | 'DIRTY_CHECKOUT'
  | 'FOREIGN_HEAD'
  | 'UNMERGED_INDEX'
  | 'CHECKOUT_HAS_WORK'
  | 'SAVE_FAILED'
  | 'PATCH_CONFLICT'
  | 'LOCKED'
  | 'NOT_APPLIED'
  | 'BUILD_FAILED'
  | 'CONFIGURE_FAILED'
  | 'DOWNLOADS_UNREACHABLE'
  | 'TESTS_FAILED'
  | 'TEST_BINARY_CRASHED'
  | 'TOOL_MISSING'
  | 'CHECKSUM_MISMATCH'
  | 'CHECK_FAILED'
  | 'USAGE'
  | 'PERMISSION_DENIED'
  | 'NO_SPACE'
  | 'INTERRUPTED'
  | 'WORKDIR_INVALID'
  | 'SOURCE_INVALID'
  | 'PROCESS_FAILED'
  | 'PR_TEXT_INCOMPLETE'
  | 'IDENTITY_MISSING'
  | 'PUSH_TARGET_UPSTREAM'
  | 'TOKEN_MISSING'
  | 'BRANCH_NOT_PUSHED_BY_TOOL'
  | 'BRANCH_MOVED'
  | 'FORK_UNREACHABLE'
  | 'PUSH_FAILED'
  | 'GITHUB_API_FAILED'
  | 'OTHER_PULL_REQUEST_OPEN'
  | 'CI_NOT_FOUND'
  | 'EXPORT_REFUSED'
  | 'BUMP_CONFLICT'
  | 'BUMP_IN_PROGRESS'
  | 'NO_BUMP'
  | 'VERSION_NOT_FOUND'
  | 'INIT_TARGET_NOT_EMPTY'
  | 'INIT_NOT_DESCENDANT'
  | 'INIT_UNSUPPORTED_CHANGE';

const exitFor: Record<ErrorCode, ExitCode> = {
  CONFIG_INVALID: ExitCode.config,
  TEMPLATE_VARIABLE: ExitCode.config,
  TEMPLATE_SYNTAX: ExitCode.config,
  PATH_ESCAPES_CHECKOUT: ExitCode.config,
  SERIES_INVALID: ExitCode.config,
  SERIES_EMPTY: ExitCode.usage,
  NO_METAL_ROLE: ExitCode.usage,
  SOURCE_UNREACHABLE: ExitCode.source,
  SOURCE_NOT_REPOSITORY: ExitCode.source,
  COMMIT_NOT_FOUND: ExitCode.source,
  REF_NOT_FOUND: ExitCode.source,
  HEAD_MISMATCH: ExitCode.source,
  CHECKOUT_INVALID: ExitCode.source,
  DIRTY_CHECKOUT: ExitCode.dirty,
  FOREIGN_HEAD: ExitCode.dirty,
  UNMERGED_INDEX: ExitCode.dirty,
  CHECKOUT_HAS_WORK: ExitCode.dirty,
  SAVE_FAILED: ExitCode.dirty,
  PATCH_CONFLICT: ExitCode.conflict,
  LOCKED: ExitCode.locked,
  NOT_APPLIED: ExitCode.failure,
  BUILD_FAILED: ExitCode.failure,
  CONFIGURE_FAILED: ExitCode.failure,
  DOWNLOADS_UNREACHABLE: ExitCode.failure,
  TESTS_FAILED: ExitCode.testsFailed,
  TEST_BINARY_CRASHED: ExitCode.testsFailed,
  TOOL_MISSING: ExitCode.toolMissing,
  CHECKSUM_MISMATCH: ExitCode.toolMissing,
  CHECK_FAILED: ExitCode.failure,
  USAGE: ExitCode.usage,
  PERMISSION_DENIED: ExitCode.permission,
  NO_SPACE: ExitCode.noSpace,
  INTERRUPTED: ExitCode.interrupted,
  WORKDIR_INVALID: ExitCode.usage,
  SOURCE_INVALID: ExitCode.usage,
  PROCESS_FAILED: ExitCode.failure,
  PR_TEXT_INCOMPLETE: ExitCode.failure,
  IDENTITY_MISSING: ExitCode.failure,
  PUSH_TARGET_UPSTREAM: ExitCode.usage,
  TOKEN_MISSING: ExitCode.usage,
  BRANCH_NOT_PUSHED_BY_TOOL: ExitCode.dirty,
  BRANCH_MOVED: ExitCode.dirty,
  FORK_UNREACHABLE: ExitCode.source,
  PUSH_FAILED: ExitCode.failure,
  GITHUB_API_FAILED: ExitCode.failure,
  OTHER_PULL_REQUEST_OPEN: ExitCode.failure,
  CI_NOT_FOUND: ExitCode.failure,
  EXPORT_REFUSED: ExitCode.failure,
  BUMP_CONFLICT: ExitCode.conflict,
  BUMP_IN_PROGRESS: ExitCode.dirty,
  NO_BUMP: ExitCode.usage,
  VERSION_NOT_FOUND: ExitCode.source,
  INIT_TARGET_NOT_EMPTY: ExitCode.usage,
  INIT_NOT_DESCENDANT: ExitCode.source,
  INIT_UNSUPPORTED_CHANGE: ExitCode.config,
};

/** The exit code of an error code. */
export function exitCodeOf(code: ErrorCode): ExitCode {
  return exitFor[code];
}

/**
 * An expected failure: the user can fix it. It carries a hint that names the
 * fix and optional structured details for `--json`.
 */
export class UserError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;
  readonly details: unknown;
  readonly exitCode: ExitCode;

  constructor(code: ErrorCode, message: string, options: { hint?: string; details?: unknown; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'UserError';
    this.code = code;
    this.hint = options.hint;
    this.details = options.details;
    this.exitCode = exitFor[code];
  }
}

export function isUserError(error: unknown): error is UserError {
  return error instanceof UserError;
}

const PERMISSION_CODES = new Set(['EACCES', 'EPERM', 'EROFS']);

/** The error for a file or folder the tool may not write (or read). */
export function permissionDenied(file: string, reason: string, options: { cause?: unknown } = {}): UserError {
  return new UserError('PERMISSION_DENIED', `Cannot write ${file}: ${reason}.`, {
    hint: `Check its owner and mode (\`ls -ld ${file}\`) and make it writable for your user, or use a workdir you can write (--workdir <dir>).`,
    details: { path: file, reason },
    ...(options.cause === undefined ? {} : { cause: options.cause }),
  });
}

/**
 * A Node file-system error that is about permissions (EACCES, EPERM, EROFS),
 * as a UserError naming the path; null for any other error.
 */
export function permissionErrorFrom(error: unknown): UserError | null {
  const e = error as { code?: unknown; path?: unknown; dest?: unknown; syscall?: unknown } | null;
  if (e === null || typeof e !== 'object' || typeof e.code !== 'string' || !PERMISSION_CODES.has(e.code)) return null;
  const file = typeof e.dest === 'string' ? e.dest : typeof e.path === 'string' ? e.path : '(unknown path)';
  const reason =
    e.code === 'EROFS'
      ? 'the file system is read-only'
      : `permission denied${typeof e.syscall === 'string' ? ` (${e.syscall})` : ''}`;
  return permissionDenied(file, reason, { cause: error });
}

/** What a program says when a write failed for want of space (git: also "Out of diskspace"). */
const NO_SPACE_SAID = /No space left on device|Disk quota exceeded|Out of diskspace/i;

/** The errno of a Node error that is about space: ENOSPC, or EDQUOT (which Node has no name for). */
function isNoSpaceErrno(e: { code?: unknown; errno?: unknown }): boolean {
  return e.code === 'ENOSPC' || e.code === 'EDQUOT' || e.errno === -osConstants.errno.EDQUOT;
}

/**
 * The error for a write that failed because the disk, or the user's quota,
 * is full. `where` is the file or folder written (null when unknown), `said`
 * what the system or the program said, `command` the tool's command to run
 * again once there is space.
 */
export function noSpace(
  where: string | null,
  said: string,
  options: { command?: string | undefined; cause?: unknown } = {},
): UserError {
  const run = options.command === undefined ? 'the same command' : `\`mlx-storage-pr ${options.command}\``;
  return new UserError('NO_SPACE', `No space left on the disk${where === null ? '' : ` of ${where}`}: ${said}`, {
    hint: `Free space on that disk (\`df -h ${where ?? '.'}\` shows what is left; \`mlx-storage-pr clean\` removes builds the tool can make again), then run ${run} again. What this run could not finish was undone.`,
    details: { path: where, reason: said },
    ...(options.cause === undefined ? {} : { cause: options.cause }),
  });
}

/**
 * One place that tells a full disk (ENOSPC) or quota (EDQUOT) from other
 * failures: a Node file-system error with that code, a failed program whose
 * output says so, a NO_SPACE error already made, or any of these as the
 * cause of another error. The NO_SPACE error, naming `command` in its hint;
 * null for any other error.
 */
export function noSpaceErrorFrom(error: unknown, options: { command?: string } = {}): UserError | null {
  for (let e = error as Record<string, unknown> | null, depth = 0; depth < 8; depth++) {
    if (e === null || typeof e !== 'object') return null;
    if (e instanceof UserError && e.code === 'NO_SPACE') {
      const details = e.details as { path: string | null; reason: string };
      return noSpace(details.path, details.reason, { command: options.command, cause: e.cause });
    }
    if (isNoSpaceErrno(e)) {
      const file = typeof e['dest'] === 'string' ? e['dest'] : typeof e['path'] === 'string' ? e['path'] : null;
      return noSpace(file, typeof e['message'] === 'string' ? e['message'] : String(e['code']), {
        command: options.command,
        cause: error,
      });
    }
    const said = typeof e['stderr'] === 'string' ? noSpaceLine(e['stderr']) : null;
    if (said !== null) return noSpace(null, said, { command: options.command, cause: error });
    e = e['cause'] as Record<string, unknown> | null;
  }
  return null;
}

/** The line of a program's output that says the disk or quota is full, or null. */
export function noSpaceLine(output: string): string | null {
  const line = output.split('\n').find((l) => NO_SPACE_SAID.test(l));
  return line === undefined ? null : line.trim();
}

/**
 * A program the tool ran failed in a way no command turned into a more precise
 * error (e.g. git in a broken repository): the user sees the command, its exit
 * code and what it said.
 */
export function processFailed(failure: {
  message: string;
  command: readonly string[];
  exitCode: number | null;
  stderr: string;
}): UserError {
  const stderr = failure.stderr.trim().split('\n').slice(-8).join('\n');
  return new UserError('PROCESS_FAILED', `${failure.message}.`, {
    hint: `Run \`${failure.command.join(' ')}\` yourself to see the whole message; fix what it names (e.g. a broken repository or a missing program) and run again (--verbose shows every command run).`,
    details: { command: failure.command, exitCode: failure.exitCode, stderr },
    cause: failure,
  });
}
