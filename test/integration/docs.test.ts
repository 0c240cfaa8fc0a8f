import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';

import { execa } from 'execa';
import { beforeEach, describe, expect, it } from 'vitest';

import { createLogger } from '../../src/adapters/log.js';
import { loadContext } from '../../src/series/context.js';
import { VERIFY_CHECK_IDS, VERIFY_GROUPS } from '../../src/readiness/skip.js';
import { buildDocsReport } from '../../src/readiness/docs-build.js';
import { makeProject, makeUpstream, pathWith, runCli, which } from '../support/repos.js';

async function findSphinxBuild(): Promise<string | null> {
  try {
    await execa('sphinx-build', ['--version']);
    return which('sphinx-build');
  } catch {
    return null;
  }
}
const sphinxBuild = await findSphinxBuild();
const skipReason =
  sphinxBuild === null ? ' (skipped: sphinx-build is not on PATH; sudo apt-get install python3-sphinx)' : '';
if (skipReason) console.warn(`docs check${skipReason}`);

const PAGE = 'docs/src/dev/extensions.rst';
const NEW_PAGE = 'docs/src/dev/storage_view.rst';
const PATCH = 'patches/0001-docs.patch';
const TEMPLATE = 'templates/docs/src/dev/storage_view.rst';

let upstream: { dir: string; sha: string };
let project: string;

/** 1-based line of the first line of `file` (in the project or the checkout) that equals `text`. */
function lineOf(file: string, text: string): number {
  const index = readFileSync(file, 'utf8').split('\n').indexOf(text);
  expect(index, `${text} in ${file}`).toBeGreaterThanOrEqual(0);
  return index + 1;
}
/** Replaces one line of a project file; the line count stays, so the patch stays valid. */
function editLine(file: string, from: string, to: string): void {
  const full = path.join(project, file);
  const lines = readFileSync(full, 'utf8').split('\n');
  const index = lines.indexOf(from);
  expect(index, `${from} in ${file}`).toBeGreaterThanOrEqual(0);
  lines[index] = to;
  writeFileSync(full, lines.join('\n'));
}
async function apply(): Promise<void> {
  const result = await runCli(['apply', '--mlx-repo', upstream.dir], { cwd: project });
  expect(result.code, result.stderr).toBe(0);
}
async function docs() {
  const env = { PATH: process.env['PATH'] };
  return buildDocsReport(
    await loadContext({
      cwd: project,
      env,
      platform: process.platform,
      logger: createLogger({ stream: new PassThrough() }),
    }),
    env,
  );
}
const checkout = (file: string) => path.join(project, '.work', 'mlx', file);

beforeEach(async () => {
  upstream = makeUpstream('docs/upstream');
  project = makeProject(upstream.sha, 'docs/project');
  await apply();
});

describe.skipIf(sphinxBuild === null)(`docs check with Sphinx${skipReason}`, () => {
  it('passes a clean addition and does not count the warnings the pinned page already has', async () => {
    const report = await docs();
    expect(report.sphinx?.command).toBe('sphinx-build');
    const byPath = Object.fromEntries(report.files.map((f) => [f.path, f]));
    // The pinned page warns already (an undefined label, a short underline): the same warnings after the patch are not new.
    expect(byPath[PAGE]).toMatchObject({ origins: [PATCH], failure: null, newWarnings: [] });
    expect(byPath[PAGE]?.baseline).toBeGreaterThanOrEqual(2);
    expect(byPath[PAGE]?.patched).toBe(byPath[PAGE]?.baseline);
    expect(byPath[NEW_PAGE]).toMatchObject({
      origins: [TEMPLATE],
      baseline: null,
      patched: 0,
      newWarnings: [],
      failure: null,
    });
  });

  it('fails a section whose underline is too short, naming the file, the line and the patch line', async () => {
    // The pinned page has a short underline of its own: the new one counts because there are more of that message.
    editLine(PATCH, '+{{docs_section_underline}}', '+------');
    await apply();
    const report = await docs();
    const found = report.files.find((f) => f.path === PAGE)?.newWarnings ?? [];
    // docutils names the underline's line (and twice: a repeat at the same place counts once).
    expect(found).toEqual([
      {
        file: PAGE,
        line: lineOf(checkout(PAGE), '------'),
        level: 'WARNING',
        message: 'Title underline too short.',
        origin: { kind: 'series', file: PATCH, line: lineOf(path.join(project, PATCH), '+------') },
        near: null,
      },
    ]);
  });

  it('fails an unknown directive, naming the file, the line and the patch line', async () => {
    editLine(PATCH, '+.. note::', '+.. storagenote::');
    await apply();
    const found = (await docs()).files.find((f) => f.path === PAGE)?.newWarnings ?? [];
    expect(found).toEqual([
      {
        file: PAGE,
        line: lineOf(checkout(PAGE), '.. storagenote::'),
        level: 'ERROR',
        message: 'Unknown directive type "storagenote".',
        origin: { kind: 'series', file: PATCH, line: lineOf(path.join(project, PATCH), '+.. storagenote::') },
        near: null,
      },
    ]);
  });

  it('names the template line for a warning in a page the series adds', async () => {
    editLine(TEMPLATE, '.. code-block:: C++', '.. codeblock:: C++');
    await apply();
    const found = (await docs()).files.find((f) => f.path === NEW_PAGE)?.newWarnings ?? [];
    const line = lineOf(path.join(project, TEMPLATE), '.. codeblock:: C++');
    expect(found).toEqual([
      {
        file: NEW_PAGE,
        line,
        level: 'ERROR',
        message: 'Unknown directive type "codeblock".',
        origin: { kind: 'series', file: TEMPLATE, line },
        near: null,
      },
    ]);
  });

  it('counts a message the pinned page has once more when the patch adds it again, at the patch line', async () => {
    editLine(
      PATCH,
      '+:ref:`custom_extensions` for how operations are built.',
      '+:ref:`cpp_ops` for how operations are built.',
    );
    await apply();
    const found = (await docs()).files.find((f) => f.path === PAGE)?.newWarnings ?? [];
    expect(found).toHaveLength(1);
    // Sphinx names the first line of the paragraph that holds the reference.
    const paragraph = '+The function ``{{export_function}}`` returns a ``{{class_name}}``. See';
    expect(found[0]).toMatchObject({
      file: PAGE,
      level: 'WARNING',
      origin: { kind: 'series', file: PATCH, line: lineOf(path.join(project, PATCH), paragraph) },
    });
    expect(found[0]?.message).toMatch(/^undefined label: '?cpp_ops'?/);
  });

  describe('a :ref: to a label on another page', () => {
    /** The pinned tree gets two more pages with labels; the page the series patches does not define them. */
    const withOtherPages = (dir: string) => {
      mkdirSync(path.join(dir, 'docs/src/python'), { recursive: true });
      writeFileSync(path.join(dir, 'docs/src/python/ops.rst'), '.. _ops:\n\nOperations\n==========\n\nText.\n');
      writeFileSync(
        path.join(dir, 'docs/src/install.rst'),
        'Install\n=======\n\n.. _Python Install:\n\nPython\n------\n\n.. _build_note:\n\nA paragraph.\n',
      );
    };
    beforeEach(async () => {
      upstream = makeUpstream('docs/upstream', withOtherPages);
      project = makeProject(upstream.sha, 'docs/project');
      await apply();
    });
    const REF_LINE = '+:ref:`custom_extensions` for how operations are built.';
    const newOnPage = async () => (await docs()).files.find((f) => f.path === PAGE)?.newWarnings;

    it('is no new warning when another page at the pin defines the label (Sphinx ignores its case)', async () => {
      editLine(PATCH, REF_LINE, '+:ref:`ops` and :ref:`python install` for how operations are built.');
      await apply();
      expect(await newOnPage()).toEqual([]);
    });

    it('is no new warning when the label is on a page the series adds', async () => {
      editLine(PATCH, REF_LINE, '+:ref:`storage_view` for how operations are built.');
      await apply();
      expect(await newOnPage()).toEqual([]);
    });

    it('is still a new warning when no page defines the label', async () => {
      editLine(PATCH, REF_LINE, '+:ref:`ops` and :ref:`no_such_label` for how operations are built.');
      await apply();
      const found = (await newOnPage()) ?? [];
      expect(found.map((w) => w.message)).toEqual(["undefined label: 'no_such_label'"]);
      expect(found[0]?.origin).toMatchObject({ kind: 'series', file: PATCH });
    });

    it('is still a new warning when the label has no title to show and the :ref: gives none', async () => {
      editLine(PATCH, REF_LINE, '+:ref:`build_note` and :ref:`the note <build_note>` for how operations are built.');
      await apply();
      const found = (await newOnPage()) ?? [];
      expect(found.map((w) => w.message)).toEqual([
        "Failed to create a cross reference. A title or caption not found: 'build_note'",
      ]);
    });

    it('reports a label the patch defines again that another page at the pin defines, naming that page', async () => {
      editLine(PATCH, '+.. note::', '+.. _ops:');
      await apply();
      const found = (await newOnPage()) ?? [];
      expect(found).toHaveLength(1);
      expect(found[0]).toMatchObject({
        file: PAGE,
        level: 'WARNING',
        message: 'duplicate label ops, other instance in docs/src/python/ops.rst',
        origin: { kind: 'series', file: PATCH },
      });
    });
  });

  it('shows in verify: ok for the clean series, FAIL with file and patch line for a broken one', async () => {
    // git and sphinx-build but no cmake or compiler on PATH: the build checks fail fast, the docs check runs.
    const bin = pathWith('git');
    symlinkSync(sphinxBuild as string, path.join(bin, 'sphinx-build'));
    const verify = () => runCli(['verify', '--json'], { cwd: project, env: { PATH: bin } });
    const clean = (await verify()).json.checks.find((c: { id: string }) => c.id === 'docs');
    expect(clean).toMatchObject({ status: 'pass', required: true });
    expect(clean.detail).toContain('minimal configuration');

    editLine(PATCH, '+.. note::', '+.. storagenote::');
    await apply();
    const result = await verify();
    expect(result.code).toBe(1);
    const broken = result.json.checks.find((c: { id: string }) => c.id === 'docs');
    expect(broken).toMatchObject({ status: 'fail', required: true });
    const line = lineOf(checkout(PAGE), '.. storagenote::');
    const patchLine = lineOf(path.join(project, PATCH), '+.. storagenote::');
    expect(broken.detail).toContain(
      `${PAGE}:${line} (${PATCH}:${patchLine}): ERROR: Unknown directive type "storagenote".`,
    );
  });

  it('takes sphinx-build from SPHINXBUILD before PATH', async () => {
    const docsItem = async (env: Record<string, string>) =>
      (await runCli(['verify', '--json'], { cwd: project, env })).json.checks.find(
        (c: { id: string }) => c.id === 'docs',
      );
    expect(await docsItem({ PATH: pathWith('git'), SPHINXBUILD: sphinxBuild as string })).toMatchObject({
      status: 'pass',
    });
    const bin = pathWith('git');
    symlinkSync(sphinxBuild as string, path.join(bin, 'sphinx-build'));
    const missing = path.join(bin, 'no-sphinx-build');
    expect(await docsItem({ PATH: bin, SPHINXBUILD: missing })).toMatchObject({
      status: 'not-checked',
      required: true,
      detail: `${PAGE}, ${NEW_PAGE}: not checked: ${missing} not found`,
    });
  });
});

/** verify's arguments that leave out every check but the docs build. */
const ONLY_DOCS = Object.keys(VERIFY_GROUPS)
  .filter((group) => group !== 'docs')
  .flatMap((group) => ['--skip', group]);

describe('docs check without Sphinx', () => {
  it('is not checked, never passed, and fails verify with the install command', async () => {
    // Only git on this PATH: no sphinx-build.
    const PATH = pathWith('git');
    // Every other check is left out, so the exit 1 is the docs check's alone.
    const result = await runCli(['verify', ...ONLY_DOCS, '--json'], { cwd: project, env: { PATH } });
    expect(result.code).toBe(1);
    expect(result.json.ready).toBe(false);
    expect(result.json.skipped).toEqual(VERIFY_CHECK_IDS.filter((id) => id !== 'docs'));
    expect(result.json.checks).toHaveLength(1);
    const check = result.json.checks[0];
    expect(check).toMatchObject({ id: 'docs', status: 'not-checked', required: true });
    expect(check.detail).toBe(`${PAGE}, ${NEW_PAGE}: not checked: sphinx-build not found`);
    expect(check.fix).toContain('sudo apt-get install python3-sphinx');
    const human = await runCli(['verify', ...ONLY_DOCS], { cwd: project, env: { PATH } });
    expect(human.code).toBe(1);
    expect(human.stdout).toContain(
      `n/c  Docs build (Sphinx): ${PAGE}, ${NEW_PAGE}: not checked: sphinx-build not found\n     fix: sudo apt-get install python3-sphinx`,
    );
  });
});
