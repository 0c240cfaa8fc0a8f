/**
 * `check`: how the series fares on other MLX commits, and its reports (lines
 * for people, Markdown for a CI job summary) and exit code. Pure.
 */
import type { ClassifiedCase, Summary } from '../suite/baseline.js';
import { formatConflict, type Conflict } from '../series/conflict.js';
import type { StepOutcome, StepStatus } from '../series/applied-tree.js';
import { ExitCode, exitCodeOf, type ErrorCode } from '../core/errors.js';

/** The part of `test`'s result a check report reads. */
export interface SuiteReport {
  buildDir: string;
  summary: Summary;
  cases: Array<{ name: string; classification: ClassifiedCase['classification'] }>;
  /** The Metal-only cases on the host twin (--metal-twin), or null. */
  twin: { summary: Summary; cases: Array<{ name: string; classification: ClassifiedCase['classification'] }> } | null;
}

export type RefBuild =
  /** The series does not apply to this commit, so there is nothing to build. */
  | { status: 'not-run' }
  /** `failed`: a new failure or a failing new test against the unpatched commit. */
  | { status: 'passed' | 'failed'; blocking: number; test: SuiteReport }
  /** The build or the run could not be done (e.g. a compile error, a missing tool). */
  | { status: 'error'; error: { code: ErrorCode; message: string; hint: string | null } };

export interface RefReport {
  /** The ref as given: a branch, a tag or a commit id. */
  ref: string;
  commit: string;
  /** The commit's committer date (ISO 8601). */
  date: string;
  /** The worst status of its templates and patches. */
  status: StepStatus;
  /** Files the series writes that differ between the pinned commit and this one (upstream changed them). */
  upstreamChanged: string[];
  templates: StepOutcome[];
  patches: StepOutcome[];
  /** Only with `--build`. */
  build?: RefBuild;
}

export interface CheckData {
  command: 'check';
  /** The MLX source the refs come from. */
  source: string;
  pinned: string;
  pinnedVersion: string;
  refs: RefReport[];
}

const SEVERITY: readonly StepStatus[] = ['clean', 'already-upstream', 'three-way', 'conflict'];

/** The worst status of the steps: conflict, then three-way, then already-upstream, then clean. */
export function worstStatus(steps: readonly StepOutcome[]): StepStatus {
  return steps.reduce<StepStatus>(
    (worst, s) => (SEVERITY.indexOf(s.status) > SEVERITY.indexOf(worst) ? s.status : worst),
    'clean',
  );
}

/**
 * 4 when the series conflicts on some commit (a patch no longer applies, even
 * with a three-way merge); else 8 when a build's tests failed; else the exit
 * code of the first build that could not be done; else 0. A patch that needs
 * a three-way merge or is already upstream is reported, and exits 0.
 */
export function checkExitCode(refs: readonly RefReport[]): ExitCode {
  if (refs.some((r) => r.status === 'conflict')) return ExitCode.conflict;
  if (refs.some((r) => r.build?.status === 'failed')) return ExitCode.testsFailed;
  for (const r of refs) if (r.build?.status === 'error') return exitCodeOf(r.build.error.code);
  return ExitCode.ok;
}

const short = (commit: string) => commit.slice(0, 12);
const day = (date: string) => date.slice(0, 10);

function stepLabel(step: StepOutcome): string {
  return step.kind === 'template' ? `template ${step.files.join(', ')} (${step.name})` : `patch ${step.name}`;
}

function buildSummary(build: RefBuild): string {
  switch (build.status) {
    case 'not-run':
      return 'not run (the series does not apply)';
    case 'error':
      return `could not run: ${build.error.code}: ${build.error.message}`;
    case 'passed':
    case 'failed': {
      const s = build.test.summary;
      const twin = build.test.twin
        ? `; Metal twin (not a Metal run): ${build.test.twin.summary.cases} case(s), ${build.test.twin.summary.failed} failed`
        : '';
      return `${build.status}: ${s.cases} case(s), ${s.byClass['new-failure']} new failure(s), ${s.byClass['new-test-failed']} failing new test(s), ${s.byClass['pre-existing-failure']} pre-existing failure(s)${twin} (${build.test.buildDir})`;
    }
  }
}

const failingCases = (test: SuiteReport) =>
  [...test.cases, ...(test.twin?.cases ?? [])].filter(
    (c) => c.classification === 'new-failure' || c.classification === 'new-test-failed',
  );

/** The report for people: per ref, every template and patch, then a verdict. */
export function checkLines(data: CheckData): string[] {
  const lines: string[] = [];
  for (const r of data.refs) {
    lines.push(`${r.ref} (${short(r.commit)}, ${day(r.date)}): ${r.status}`);
    for (const step of [...r.templates, ...r.patches]) {
      lines.push(`  ${stepLabel(step)}: ${step.status}`);
      for (const reason of step.reasons) lines.push(`      ${formatConflict(reason)}`);
    }
    lines.push(
      `  upstream changed (differs from the pinned commit): ${r.upstreamChanged.length ? r.upstreamChanged.join(', ') : 'none of the files the series writes'}`,
    );
    if (r.build) {
      lines.push(`  build: ${buildSummary(r.build)}`);
      if (r.build.status === 'failed')
        for (const c of failingCases(r.build.test)) lines.push(`    ${c.classification}: ${c.name}`);
      if (r.build.status === 'error' && r.build.error.hint) lines.push(`    hint: ${r.build.error.hint}`);
    }
  }
  lines.push(verdict(data));
  return lines;
}

function verdict(data: CheckData): string {
  const conflicting = data.refs.filter((r) => r.status === 'conflict').map((r) => r.ref);
  if (conflicting.length)
    return `A patch no longer applies to ${conflicting.join(', ')}: refresh it against that commit before the pin moves there.`;
  const merged = data.refs.filter((r) => r.status === 'three-way').map((r) => r.ref);
  const failed = data.refs.filter((r) => r.build?.status === 'failed').map((r) => r.ref);
  const errors = data.refs.filter((r) => r.build?.status === 'error').map((r) => r.ref);
  const parts = [
    `The series applies to ${data.refs.length === 1 ? 'it' : `all ${data.refs.length}`}${merged.length ? ` (with a three-way merge on ${merged.join(', ')})` : ''}.`,
  ];
  if (failed.length) parts.push(`Tests fail on ${failed.join(', ')}.`);
  if (errors.length) parts.push(`The build could not run on ${errors.join(', ')}.`);
  return parts.join(' ');
}

/** A Markdown table cell: no line breaks, `|` escaped. */
function cell(text: string): string {
  return text.replace(/\r?\n/g, ' ').replace(/\|/g, '\\|');
}

const code = (text: string) => `\`${text}\``;

function reasonCell(reason: Conflict): string {
  const hunk = reason.hunk === undefined ? '' : ` hunk ${reason.hunk} ${code(reason.hunkHeader ?? '')}`;
  return `${code(reason.file)}${hunk}: ${code(reason.reason)} (${reason.detail})`;
}

/** The report as Markdown, for a CI job summary. */
export function checkMarkdown(data: CheckData): string[] {
  const lines = [
    '## Drift check: the series against other MLX commits',
    '',
    `Pinned: ${code(short(data.pinned))} (MLX ${data.pinnedVersion}). Source: ${code(data.source)}.`,
    '',
    `**${cell(verdict(data))}**`,
    '',
    '| ref | commit | date | series | build |',
    '| --- | --- | --- | --- | --- |',
    ...data.refs.map(
      (r) =>
        `| ${code(r.ref)} | ${code(short(r.commit))} | ${day(r.date)} | ${r.status} | ${r.build ? cell(buildSummary(r.build)) : 'not asked (--build)'} |`,
    ),
  ];
  for (const r of data.refs) {
    lines.push(
      '',
      `### ${code(r.ref)} (${code(short(r.commit))}): ${r.status}`,
      '',
      '| | name | result | why |',
      '| --- | --- | --- | --- |',
    );
    for (const step of [...r.templates, ...r.patches])
      lines.push(
        `| ${step.kind} | ${step.kind === 'template' ? `${step.files.map(code).join(', ')} (${code(step.name)})` : code(step.name)} | ${step.status} | ${cell(step.reasons.map(reasonCell).join('; '))} |`,
      );
    lines.push(
      '',
      `Upstream changed (differs from the pinned commit): ${r.upstreamChanged.length ? r.upstreamChanged.map(code).join(', ') : 'none of the files the series writes'}.`,
    );
    if (r.build?.status === 'failed') {
      lines.push('', 'Failing cases:', '');
      for (const c of failingCases(r.build.test)) lines.push(`- ${c.classification}: ${code(c.name)}`);
    }
  }
  return lines;
}
