/** Exit codes. The README documents them; keep the two in sync. */
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
  internal: 70,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export type ErrorCode =
  | 'CONFIG_INVALID'
  | 'TEMPLATE_VARIABLE'
  | 'TEMPLATE_SYNTAX'
  | 'PATH_ESCAPES_CHECKOUT'
  | 'SERIES_INVALID'
  | 'SOURCE_UNREACHABLE'
  | 'COMMIT_NOT_FOUND'
  | 'HEAD_MISMATCH'
  | 'CHECKOUT_INVALID'
  | 'DIRTY_CHECKOUT'
  | 'FOREIGN_HEAD'
  | 'UNMERGED_INDEX'
  | 'SAVE_FAILED'
  | 'PATCH_CONFLICT'
  | 'LOCKED'
  | 'NOT_APPLIED'
  | 'BUILD_FAILED'
  | 'CONFIGURE_FAILED'
  | 'TESTS_FAILED'
  | 'TEST_BINARY_CRASHED'
  | 'TOOL_MISSING'
  | 'CHECK_FAILED'
  | 'USAGE'
  | 'WORKDIR_INVALID';

const exitFor: Record<ErrorCode, ExitCode> = {
  CONFIG_INVALID: ExitCode.config,
  TEMPLATE_VARIABLE: ExitCode.config,
  TEMPLATE_SYNTAX: ExitCode.config,
  PATH_ESCAPES_CHECKOUT: ExitCode.config,
  SERIES_INVALID: ExitCode.config,
  SOURCE_UNREACHABLE: ExitCode.source,
  COMMIT_NOT_FOUND: ExitCode.source,
  HEAD_MISMATCH: ExitCode.source,
  CHECKOUT_INVALID: ExitCode.source,
  DIRTY_CHECKOUT: ExitCode.dirty,
  FOREIGN_HEAD: ExitCode.dirty,
  UNMERGED_INDEX: ExitCode.dirty,
  SAVE_FAILED: ExitCode.dirty,
  PATCH_CONFLICT: ExitCode.conflict,
  LOCKED: ExitCode.locked,
  NOT_APPLIED: ExitCode.failure,
  BUILD_FAILED: ExitCode.failure,
  CONFIGURE_FAILED: ExitCode.failure,
  TESTS_FAILED: ExitCode.testsFailed,
  TEST_BINARY_CRASHED: ExitCode.testsFailed,
  TOOL_MISSING: ExitCode.toolMissing,
  CHECK_FAILED: ExitCode.failure,
  USAGE: ExitCode.usage,
  WORKDIR_INVALID: ExitCode.usage,
};

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
