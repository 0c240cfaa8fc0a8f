import { ExitCode } from '../core/errors.js';
import { formatSeries, type FormatFinding, type FormatReport } from '../readiness/formatting.js';
import { loadContext } from '../series/context.js';
import { versionProblems } from '../readiness/format-versions.js';
import { type CommandResult, defineCommand, type GlobalOptions } from './spec.js';

interface FormatOptions extends GlobalOptions {
  fix: boolean;
}

export const formatCommand = defineCommand({
  name: 'format',
  describe:
    "Check the PR's files with the formatters MLX's pre-commit pins (clang-format 21.1.8, cmake-format 0.6.13, black and isort), listing which hooks apply",
  builder: (y) =>
    y
      .option('fix', {
        type: 'boolean',
        default: false,
        describe:
          'Write the formatting into templates/ and patches/ (placeholders kept, only the lines a patch adds), then apply again',
      })
      .example('$0 format', 'print a diff of what clang-format and cmake-format would change')
      .example('$0 format --fix', 'fix templates/ and patches/ and refresh the checkout')
      .epilog(
        'New files are formatted whole; patched MLX files only on the lines the patch adds (clang-format line ranges), ' +
          "so MLX's own lines are never reformatted. Style comes from the checkout's .clang-format files at the pinned commit. " +
          'CMake files need cmake-format 0.6.13 on PATH (pip install cmakelang==0.6.13) or uvx/pipx; Python files need the black and isort ' +
          "versions MLX's .pre-commit-config.yaml pins on PATH. A file without its tool is reported as not checked: the report is then not clean, though format exits 0.",
      ),
  run: (o) => format(o),
});

export interface FormatData extends FormatReport {
  command: 'format';
  /**
   * True when every file was checked and is formatted, and no tool version
   * differs from MLX's pins. A file not checked makes it false without failing
   * the command (exit 0): `verify` is where a missing tool fails.
   */
  clean: boolean;
  /** How many files were not checked (their tool is missing). */
  notChecked: number;
  /** Project files `--fix` rewrote. */
  fixed: string[];
  /** Set when the command fails. */
  code?: 'CHECK_FAILED';
  problems: string[];
}

/** One of MLX's hooks and the series' files it applies to. */
function hookLine(h: FormatReport['hooks'][number]): string {
  const name = `${h.id}${h.rev ? ` ${h.rev}` : ''}`;
  if (h.files === null) return `  ${name}: file types unknown to this tool, not run`;
  const files = h.files.length ? h.files.join(', ') : 'no files of this PR';
  return `  ${name}: ${files}${h.run || h.files.length === 0 ? '' : ' (not run by format)'}`;
}

function findingLine(f: FormatFinding): string {
  const where = `${f.path} (${f.origin})`;
  switch (f.status) {
    case 'clean':
      return `ok    ${f.tool}: ${where}${f.detail ? `; note: ${f.detail}` : ''}`;
    case 'differs':
      return `DIFF  ${f.tool}: ${where}${f.detail ? `; note: ${f.detail}` : ''}`;
    case 'not-checked':
      return `n/c   ${f.tool}: ${where}: ${f.detail ?? 'not checked'}`;
  }
}

async function format(options: FormatOptions): Promise<CommandResult<FormatData>> {
  const ctx = await loadContext(options);
  const { run, fixed } = await formatSeries(ctx, { fix: options.fix });
  const { report } = run;
  const problems = versionProblems(report);
  const differs = report.files.filter((f) => f.status === 'differs');
  const skipped = report.files.filter((f) => f.status === 'not-checked').length;
  const failed = differs.length > 0 || problems.length > 0;
  const clean = !failed && skipped === 0;
  const lines: string[] = [];
  if (report.hooks.length) {
    lines.push("MLX's pre-commit hooks at the pinned commit, and the files of this PR each applies to:");
    lines.push(...report.hooks.map(hookLine));
  }
  for (const f of differs) if (f.diff) lines.push(f.diff.trimEnd());
  lines.push(...report.files.map(findingLine));
  if (!report.files.some((f) => f.tool === 'cmake-format') && report.cmakeFormat.reason)
    lines.push(`n/c   cmake-format: ${report.cmakeFormat.reason}`);
  lines.push(...problems.map((p) => `FAIL  ${p}`));
  if (fixed.length) lines.push(`Fixed: ${fixed.join(', ')}`);
  const tools = `clang-format ${report.clangFormat.version ?? '?'}${report.cmakeFormat.version ? `, cmake-format ${report.cmakeFormat.version}` : ''}`;
  if (clean) lines.push(`Formatting clean (${tools}).`);
  else if (differs.length)
    lines.push(
      `${differs.length} file(s) need formatting. Run \`mlx-storage-pr format --fix\` to write the fix into templates/ and patches/.${skipped ? ` ${skipped} file(s) not checked.` : ''}`,
    );
  else if (!failed)
    lines.push(
      `No differences in the files checked (${tools}), but not clean: ${skipped} file(s) not checked (n/c above: install the tool it names).`,
    );
  else lines.push("Not clean: a tool's version is not the one MLX pins (FAIL above).");

  const data: FormatData = {
    command: 'format',
    ...report,
    clean,
    notChecked: skipped,
    fixed,
    problems,
    ...(failed ? { code: 'CHECK_FAILED' as const } : {}),
  };
  return { data, lines, ...(failed ? { exitCode: ExitCode.failure } : {}) };
}
