import { isUserError } from './errors.js';

/** One line of a readiness or environment report (`doctor`, `verify`). */
export type ItemStatus = 'pass' | 'fail' | 'warn' | 'not-checked';

export interface ReportItem {
  id: string;
  title: string;
  status: ItemStatus;
  /** What was found, in one or two sentences. */
  detail: string;
  /** The command or edit that fixes a failure. */
  fix?: string;
  /** True when a failure of this check makes the command fail. */
  required: boolean;
}

const mark: Record<ItemStatus, string> = { pass: 'ok  ', fail: 'FAIL', warn: 'warn', 'not-checked': 'n/c ' };

/** One line per check, its fix below it; a detail of several lines (a tool's output) is indented under the check. */
export function formatItems(checks: readonly ReportItem[]): string[] {
  return checks.flatMap((c) => {
    const [first = '', ...rest] = c.detail.split('\n');
    const lines = [`${mark[c.status]} ${c.title}: ${first}`, ...rest.map((l) => `     ${l}`)];
    if (c.fix && c.status !== 'pass') lines.push(`     fix: ${c.fix}`);
    return lines;
  });
}

/** True when every required check passed. */
export function itemsPass(checks: readonly ReportItem[]): boolean {
  return checks.every((c) => !c.required || c.status === 'pass');
}

/** A check that an expected failure (a UserError) stopped: failed, with its message and hint. Other errors are thrown. */
export function failedItem(base: Pick<ReportItem, 'id' | 'title' | 'required'>, error: unknown): ReportItem {
  if (!isUserError(error)) throw error;
  return { ...base, status: 'fail', detail: error.message, ...(error.hint ? { fix: error.hint } : {}) };
}

/** A check that an expected failure (a UserError) kept from running: not checked, with the reason and its fix. Other errors are thrown. */
export function notCheckedItem(base: Pick<ReportItem, 'id' | 'title' | 'required'>, error: unknown): ReportItem {
  if (!isUserError(error)) throw error;
  return {
    id: base.id,
    title: base.title,
    status: 'not-checked',
    detail: error.message,
    ...(error.hint ? { fix: error.hint } : {}),
    required: base.required,
  };
}
