/**
 * The checks `verify --skip` can leave out, by group or by a check's id. A
 * repository's own CI names, say, `pr-text` where nobody writes the PR text.
 */
export const VERIFY_GROUPS = {
  format: ['format-cpp', 'format-cmake'],
  'metal-typecheck': ['metal-typecheck'],
  docs: ['docs'],
  'pr-text': ['pr-files', 'pr-placeholders', 'pr-ai-disclosure'],
  build: ['linux-build', 'tests-fail-without-implementation', 'metal-twin', 'mutants', 'sanitizer'],
} as const satisfies Record<string, readonly string[]>;

export type VerifyGroup = keyof typeof VERIFY_GROUPS;

/** Every check id, in report order. */
export const VERIFY_CHECK_IDS: readonly string[] = Object.values(VERIFY_GROUPS).flat();

/** What `--skip` accepts: group names, then the ids of single checks. */
export const SKIP_NAMES: readonly string[] = [...new Set([...Object.keys(VERIFY_GROUPS), ...VERIFY_CHECK_IDS])];

/** The check ids that `--skip <names>` leaves out, in report order. */
export function skippedItems(names: readonly string[]): string[] {
  const ids = new Set(names.flatMap((name) => (name in VERIFY_GROUPS ? VERIFY_GROUPS[name as VerifyGroup] : [name])));
  return VERIFY_CHECK_IDS.filter((id) => ids.has(id));
}

/** False when `--skip` left out every check of the group, so the step need not run. */
export function groupRuns(group: VerifyGroup, skipped: readonly string[]): boolean {
  return VERIFY_GROUPS[group].some((id) => !skipped.includes(id));
}
