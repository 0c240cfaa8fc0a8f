import { READINESS_CHECKS } from './registry.js';

/**
 * The checks `verify --skip` can leave out, by group or by a check's id, as
 * the registry declares them. A repository's own CI names, say, `pr-text`
 * where nobody writes the PR text.
 */
export const VERIFY_GROUPS: Readonly<Record<string, readonly string[]>> = READINESS_CHECKS.reduce<
  Record<string, string[]>
>((groups, check) => ({ ...groups, [check.group]: [...(groups[check.group] ?? []), check.id] }), {});

/** The group names, in report order. */
export const VERIFY_GROUP_NAMES: readonly string[] = Object.keys(VERIFY_GROUPS);

/** Every check id, in report order. */
export const VERIFY_CHECK_IDS: readonly string[] = READINESS_CHECKS.map((check) => check.id);

/** What `--skip` accepts: group names, then the ids of single checks. */
export const SKIP_NAMES: readonly string[] = [...new Set([...VERIFY_GROUP_NAMES, ...VERIFY_CHECK_IDS])];

/** The check ids that `--skip <names>` leaves out, in report order. */
export function skippedItems(names: readonly string[]): string[] {
  const ids = new Set(
    names.flatMap((name) => (Object.hasOwn(VERIFY_GROUPS, name) ? (VERIFY_GROUPS[name] ?? []) : [name])),
  );
  return VERIFY_CHECK_IDS.filter((id) => ids.has(id));
}
