import { ExitCode } from '../core/errors.js';
import type { FormatFinding, FormatReport } from '../readiness/formatting.js';
import { type CommandResult, defineCommand, exampleLines, type GlobalOptions } from './spec.js';

interface FormatOptions extends GlobalOptions {
  fix: boolean;
}

export const formatCommand = defineCommand({
  name: 'format',
  describe:
    "Check the PR's C++ with clang-format 21.1.8 and its CMake with cmake-format 0.6.13, as MLX's pre-commit does",
  builder: (y) =>
    y
      .option('fix', {
        type: 'boolean',
        default: false,
        describe:
          'Write the formatting into templates/ and patches/ (placeholders kept, only the lines a patch adds), then apply again',
      })
      .example(...exampleLines('$0 format', 'print a diff of what clang-format and cmake-format would change'))
      .example(...exampleLines('$0 format --fix', 'fix templates/ and patches/ and refresh the checkout'))
      .epilog(
        'New files are formatted whole; patched MLX files only on the lines the patch adds (clang-format line ranges), ' +
          "so MLX's own lines are never reformatted. Style comes from the checkout's .clang-format files at the pinned commit. " +
          'CMake files need cmake-format 0.6.13 on PATH (pip install cmakelang==0.6.13) or uvx/pipx; without it they are reported as not checked.',
      ),
  run: (o) => format(o),
});

export interface FormatData extends FormatReport {
  command: 'format';
  /** True when every checked file is formatted and no tool version differs from MLX's pins. */
  clean: boolean;
  /** Project files `--fix` rewrote. */
  fixed: string[];
  /** Set when the command fails. */
  code?: 'CHECK_FAILED';
  problems: string[];
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
  const [{ loadContext }, { versionProblems }, { formatSeries }] = await Promise.all([
    import('../series/context.js'),
    import('../readiness/format-versions.js'),
    import('../readiness/formatting.js'),
  ]);
  const ctx = await loadContext(options);
  const { run, fixed } = await formatSeries(ctx, { fix: options.fix });
  const { report } = run;
  const problems = versionProblems(report);
  const differs = report.files.filter((f) => f.status === 'differs');
  const clean = differs.length === 0 && problems.length === 0;
  const lines: string[] = [];
  for (const f of differs) if (f.diff) lines.push(f.diff.trimEnd());
  lines.push(...report.files.map(findingLine));
  if (!report.files.some((f) => f.tool === 'cmake-format') && report.cmakeFormat.reason)
    lines.push(`n/c   cmake-format: ${report.cmakeFormat.reason}`);
  lines.push(...problems.map((p) => `FAIL  ${p}`));
  if (fixed.length) lines.push(`Fixed: ${fixed.join(', ')}`);
  const skipped = report.files.filter((f) => f.status === 'not-checked').length;
  const tools = `clang-format ${report.clangFormat.version ?? '?'}${report.cmakeFormat.version ? `, cmake-format ${report.cmakeFormat.version}` : ''}`;
  lines.push(
    clean
      ? `Formatting clean (${tools})${skipped ? `; ${skipped} file(s) not checked` : ''}.`
      : `${differs.length} file(s) need formatting. Run \`mlx-storage-pr format --fix\` to write the fix into templates/ and patches/.`,
  );

  const data: FormatData = {
    command: 'format',
    ...report,
    clean,
    fixed,
    problems,
    ...(clean ? {} : { code: 'CHECK_FAILED' as const }),
  };
  return { data, lines, ...(clean ? {} : { exitCode: ExitCode.failure }) };
}
