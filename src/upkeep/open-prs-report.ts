/**
 * `check --open-prs`: which open upstream pull requests change a file the
 * series changes, how the series fares on each (merged), the report (lines
 * for people, Markdown for a CI job summary) and the exit code. Pure.
 */
import { formatConflict, type Conflict } from '../series/conflict.js';
import type { StepOutcome, StepStatus } from '../series/applied-tree.js';
import { ExitCode } from '../core/errors.js';
import type { RefReport } from './drift-report.js';

/** A pull request as its listing gives it, before it is checked. */
export interface PullRequestCandidate {
  number: number;
  /** Null when the listing does not say (the source's refs). */
  title: string | null;
  author: string | null;
  url: string | null;
  /** The paths it changes. */
  files: string[];
}

/** Where the open pull requests came from. */
export type PullRequestListing =
  /** GitHub's API: the pull requests open now, and the files each changes. */
  | { kind: 'github'; apiUrl: string; repository: string }
  /**
   * The MLX source's `refs/pull/<n>/merge`: whether each is still open is
   * unknown (a mirror keeps refs of closed pull requests too); its files are
   * what it changes against its first parent.
   */
  | { kind: 'source-refs'; source: string; why: string };

/** The result for one pull request: the series' worst status on it merged, or that it could not be checked. */
export type PullRequestStatus = StepStatus | 'could-not-check';

export interface PullRequestCheck {
  number: number;
  title: string | null;
  author: string | null;
  url: string | null;
  /** The files it changes that the series changes too. */
  files: string[];
  /**
   * What was checked: its merge ref, or its head merged with the pinned commit (`unmerged`: files outside
   * the series that did not merge, left with conflict markers); null when nothing could be.
   */
  checked: { ref: string; commit: string; how: 'merge-ref' | 'head-merged-with-pin'; unmerged: string[] } | null;
  status: PullRequestStatus;
  /** Why it could not be checked (null otherwise). */
  reason: string | null;
  /** The series applied to it, as `check --against` reports a ref (null when it could not be checked). */
  report: RefReport | null;
}

export interface OpenPrsData {
  command: 'check';
  source: string;
  pinned: string;
  pinnedVersion: string;
  openPrs: {
    listing: PullRequestListing;
    /** How many pull requests the listing gave (open ones; for the source: its merge refs). */
    listed: number;
    /** How many of them were looked at (`--limit`, highest numbers first). */
    considered: number;
    limit: number;
    /** The files the series changes (templates and patches). */
    seriesFiles: string[];
    /** The pull requests looked at that change a file of the series, highest number first. */
    pullRequests: PullRequestCheck[];
  };
}

/** The candidates that change a file of the series, highest number first, each with only the files in common. */
export function sharingFiles(
  candidates: readonly PullRequestCandidate[],
  seriesFiles: readonly string[],
): PullRequestCandidate[] {
  const series = new Set(seriesFiles);
  return candidates
    .map((c) => ({ ...c, files: [...new Set(c.files.filter((f) => series.has(f)))].sort() }))
    .filter((c) => c.files.length > 0)
    .sort((a, b) => b.number - a.number);
}

/** The `limit` highest numbers of `numbers`, highest first. */
export function mostRecent<T extends { number: number }>(items: readonly T[], limit: number): T[] {
  return [...items].sort((a, b) => b.number - a.number).slice(0, limit);
}

/** The number of each `refs/pull/<n>/<kind>` among `refs`. */
export function pullNumbers(refs: readonly string[], kind: 'merge' | 'head'): number[] {
  const found = new Set<number>();
  for (const ref of refs) {
    const m = /^refs\/pull\/([1-9][0-9]*)\/(merge|head)$/.exec(ref);
    if (m && m[2] === kind) found.add(Number(m[1]));
  }
  return [...found];
}

/**
 * 4 when the series conflicts with some pull request merged; else 5 when
 * one could not be checked (its ref could not be fetched or merged, or the
 * time ran out): that is not clean; else 0 (also three-way and already-upstream).
 */
export function openPrsExitCode(checks: readonly PullRequestCheck[]): ExitCode {
  if (checks.some((c) => c.status === 'conflict')) return ExitCode.conflict;
  if (checks.some((c) => c.status === 'could-not-check')) return ExitCode.source;
  return ExitCode.ok;
}

const short = (commit: string) => commit.slice(0, 12);

function listingText(data: OpenPrsData): string {
  const o = data.openPrs;
  const looked = o.considered < o.listed ? `, the ${o.considered} most recent looked at (--limit ${o.limit})` : '';
  return o.listing.kind === 'github'
    ? `GitHub's API (${o.listing.apiUrl}, ${o.listing.repository}): ${o.listed} open pull request(s)${looked}`
    : `the source's refs/pull/*/merge (${o.listing.source}; ${o.listing.why}): ${o.listed} merge ref(s)${looked}; open state unknown: the source may keep refs of closed pull requests`;
}

function who(c: PullRequestCheck): string {
  const parts = [c.title === null ? null : JSON.stringify(c.title), c.author === null ? null : `by ${c.author}`];
  return parts.filter(Boolean).join(' ');
}

function steps(c: PullRequestCheck): StepOutcome[] {
  return c.report ? [...c.report.templates, ...c.report.patches] : [];
}

function howText(checked: NonNullable<PullRequestCheck['checked']>): string {
  return checked.how === 'merge-ref'
    ? `${checked.ref} (${short(checked.commit)})`
    : `${checked.ref} merged with the pinned commit (${short(checked.commit)}${checked.unmerged.length ? `; outside the series, ${checked.unmerged.join(', ')} did not merge` : ''})`;
}

function verdict(data: OpenPrsData): string {
  const prs = data.openPrs.pullRequests;
  const list = (status: PullRequestStatus) =>
    prs
      .filter((c) => c.status === status)
      .map((c) => `#${c.number}`)
      .join(', ');
  if (prs.length === 0)
    return `No pull request looked at changes a file the series changes (${data.openPrs.considered} looked at).`;
  const parts: string[] = [];
  const conflict = list('conflict');
  if (conflict) parts.push(`The series conflicts with ${conflict} once merged: expect to rebase when it lands.`);
  const unknown = list('could-not-check');
  if (unknown) parts.push(`Could not check ${unknown}: not a clean result.`);
  const merged = list('three-way');
  if (merged) parts.push(`Applies only with a three-way merge on ${merged}.`);
  if (parts.length === 0) parts.push(`The series applies on all ${prs.length} pull request(s) that share its files.`);
  return parts.join(' ');
}

/** The report for people: per pull request, the files in common, the result and its reasons. */
export function openPrsLines(data: OpenPrsData): string[] {
  const lines = [`open pull requests from ${listingText(data)}`];
  for (const c of data.openPrs.pullRequests) {
    lines.push(`#${c.number}${who(c) ? ` ${who(c)}` : ''}: ${c.status}`);
    lines.push(`  files in common: ${c.files.join(', ')}`);
    if (c.checked) lines.push(`  checked: ${howText(c.checked)}`);
    if (c.reason) lines.push(`  could not check: ${c.reason}`);
    for (const step of steps(c))
      if (step.status !== 'clean') {
        lines.push(`  ${step.kind} ${step.name}: ${step.status}`);
        for (const reason of step.reasons) lines.push(`      ${formatConflict(reason)}`);
      }
  }
  lines.push(verdict(data));
  return lines;
}

/** A Markdown table cell: no line breaks, `|` escaped. */
function cell(text: string): string {
  return text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
}

const code = (text: string) => `\`${text.replace(/`/g, "'")}\``;

function reasonCell(step: StepOutcome, reason: Conflict): string {
  const hunk = reason.hunk === undefined ? '' : ` hunk ${reason.hunk} ${code(reason.hunkHeader ?? '')}`;
  return `${code(step.name)}: ${code(reason.file)}${hunk}: ${code(reason.reason)} (${reason.detail})`;
}

function whyCell(c: PullRequestCheck): string {
  if (c.reason) return cell(c.reason);
  return cell(
    steps(c)
      .flatMap((s) => s.reasons.map((r) => reasonCell(s, r)))
      .join('; '),
  );
}

/** The report as Markdown, for a CI job summary: one table, a row per pull request. */
export function openPrsMarkdown(data: OpenPrsData): string[] {
  return [
    '## Open pull requests upstream that change the files of the series',
    '',
    `Pinned: ${code(short(data.pinned))} (MLX ${data.pinnedVersion}). Listed from ${cell(listingText(data))}.`,
    '',
    `**${cell(verdict(data))}**`,
    '',
    '| pull request | title | author | files in common | checked | result | why |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...data.openPrs.pullRequests.map(
      (c) =>
        `| ${c.url ? `[#${c.number}](${c.url})` : `#${c.number}`} | ${cell(c.title ?? '')} | ${cell(c.author ?? '')} | ${c.files.map(code).join(', ')} | ${c.checked ? cell(howText(c.checked)) : ''} | ${c.status} | ${whyCell(c)} |`,
    ),
  ];
}
