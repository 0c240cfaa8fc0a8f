import { describe, expect, it } from 'vitest';

import {
  describeWarning,
  docsReportItem,
  docsRoot,
  labelsPage,
  locateWarnings,
  newWarnings,
  parseSphinxWarnings,
  patchedLineOrigins,
  relocateLabelWarnings,
  rstLabels,
  sphinxConfig,
  templateLineOrigins,
  type DocsReport,
  type LineOrigin,
  type SphinxWarning,
} from '../../src/readiness/docs-pages.js';
import { seriesSteps } from '../../src/core/patch.js';

const SRC = '/tmp/mlx-storage-pr-sphinx-abc/src';

describe('parseSphinxWarnings', () => {
  it('reads located, multi-line and location-free warnings, with checkout paths', () => {
    const text = [
      `${SRC}/dev/extensions.rst:914: ERROR: Unknown directive type "foo".`,
      '',
      '.. foo:: bar',
      '',
      '   baz',
      `${SRC}/dev/extensions.rst:918: ERROR: Error in "code-block" directive:`,
      'unknown option: "bogus".',
      '',
      '.. code-block:: C++',
      '   :bogus:',
      `${SRC}/dev/extensions.rst: WARNING: document isn't included in any toctree`,
      "WARNING: html_static_path entry '_static' does not exist",
      `${SRC}/dev/extensions.rst:3: SEVERE: Problems with "include" directive path:`,
      `InputError: [Errno 2] No such file or directory: '${SRC}/dev/other.rst'.`,
      `${SRC}/dev/extensions.rst:45: WARNING: undefined label: 'cpp_ops'`,
    ].join('\n');
    expect(parseSphinxWarnings(text, SRC, 'docs/src')).toEqual([
      { file: 'docs/src/dev/extensions.rst', line: 914, level: 'ERROR', message: 'Unknown directive type "foo".' },
      {
        file: 'docs/src/dev/extensions.rst',
        line: 918,
        level: 'ERROR',
        message: 'Error in "code-block" directive: unknown option: "bogus".',
      },
      {
        file: 'docs/src/dev/extensions.rst',
        line: null,
        level: 'WARNING',
        message: "document isn't included in any toctree",
      },
      { file: null, line: null, level: 'WARNING', message: "html_static_path entry '_static' does not exist" },
      {
        file: 'docs/src/dev/extensions.rst',
        line: 3,
        level: 'SEVERE',
        message: `Problems with "include" directive path: InputError: [Errno 2] No such file or directory: 'docs/src/dev/other.rst'.`,
      },
      { file: 'docs/src/dev/extensions.rst', line: 45, level: 'WARNING', message: "undefined label: 'cpp_ops'" },
    ]);
  });

  it('maps a page built at the top of the tree to a checkout path without a folder', () => {
    expect(parseSphinxWarnings(`${SRC}/README.rst:2: WARNING: x`, SRC, '')).toEqual([
      { file: 'README.rst', line: 2, level: 'WARNING', message: 'x' },
    ]);
  });
});

describe('newWarnings', () => {
  const w = (line: number | null, message: string, level = 'WARNING'): SphinxWarning => ({
    file: 'p.rst',
    line,
    level,
    message,
  });

  it('matches by message and count, not by line', () => {
    const baseline = [w(45, "undefined label: 'ops'"), w(100, 'Title underline too short.')];
    // The patch shifts both down by 20 lines and adds nothing new.
    expect(
      newWarnings(baseline, [w(65, "undefined label: 'ops'"), w(120, 'Title underline too short.')], () => false),
    ).toEqual([]);
    // A second short underline is new even though the message is old.
    const patched = [
      w(65, "undefined label: 'ops'"),
      w(80, 'Title underline too short.'),
      w(120, 'Title underline too short.'),
    ];
    expect(newWarnings(baseline, patched, (x) => x.line === 80)).toEqual([w(80, 'Title underline too short.')]);
  });

  it('takes the occurrence on a line the series wrote as the new one', () => {
    const baseline = [w(10, 'same')];
    const patched = [w(10, 'same'), w(30, 'same')];
    expect(newWarnings(baseline, patched, (x) => x.line === 30)).toEqual([w(30, 'same')]);
    expect(newWarnings(baseline, patched, (x) => x.line === 10)).toEqual([w(10, 'same')]);
  });

  it('counts a repeat at the same place once, and tells levels apart', () => {
    expect(
      newWarnings(
        [w(5, 'Title underline too short.'), w(5, 'Title underline too short.')],
        [w(9, 'Title underline too short.'), w(9, 'Title underline too short.')],
        () => true,
      ),
    ).toEqual([]);
    expect(newWarnings([w(5, 'm', 'WARNING')], [w(5, 'm', 'ERROR')], () => false)).toEqual([w(5, 'm', 'ERROR')]);
  });
});

describe('line origins', () => {
  const pinned = ['Title', '=====', '', 'Text.', '', 'Scripts', '-------', ''].join('\n');
  const first = [
    'diff --git a/p.rst b/p.rst',
    '--- a/p.rst',
    '+++ b/p.rst',
    '@@ -3,4 +3,7 @@ Title',
    ' ',
    ' Text.',
    ' ',
    '+{{docs_section_title}}',
    '+{{docs_section_underline}}',
    '+',
    ' Scripts',
    '',
  ].join('\n');
  const second = ['--- a/p.rst', '+++ b/p.rst', '@@ -1,2 +1,3 @@', '+.. _top:', ' Title', ' =====', ''].join('\n');

  it('follow every patch of a file to the line of the patch file that wrote it', () => {
    const steps = seriesSteps(
      [
        { name: '0001-a.patch', raw: first, rendered: first },
        { name: '0002-b.patch', raw: second, rendered: second },
      ],
      new Map([['p.rst', pinned]]),
    );
    const origins = patchedLineOrigins('p.rst', 7, steps);
    const series = (file: string, line: number): LineOrigin => ({ kind: 'series', file, line });
    const mlx = (line: number): LineOrigin => ({ kind: 'mlx', line });
    expect(origins).toEqual([
      series('patches/0002-b.patch', 4),
      mlx(1),
      mlx(2),
      mlx(3),
      mlx(4),
      mlx(5),
      series('patches/0001-a.patch', 8),
      series('patches/0001-a.patch', 9),
      series('patches/0001-a.patch', 10),
      mlx(6),
      mlx(7),
    ]);
    expect(first.split('\n')[7]).toBe('+{{docs_section_title}}');
  });

  it('name the template line for a new page', () => {
    expect(templateLineOrigins('docs/a.rst', 2)).toEqual([
      { kind: 'series', file: 'templates/docs/a.rst', line: 1 },
      { kind: 'series', file: 'templates/docs/a.rst', line: 2 },
    ]);
  });

  it('locate a warning on an MLX line below the nearest series line', () => {
    const origins: LineOrigin[] = [
      { kind: 'mlx', line: 1 },
      { kind: 'series', file: 'patches/a.patch', line: 8 },
      { kind: 'mlx', line: 2 },
    ];
    const [onSeries, onMlx, elsewhere] = locateWarnings(
      [
        { file: 'p.rst', line: 2, level: 'ERROR', message: 'a' },
        { file: 'p.rst', line: 3, level: 'CRITICAL', message: 'Title level inconsistent:' },
        { file: 'q.rst', line: 2, level: 'ERROR', message: 'c' },
      ],
      'p.rst',
      origins,
    );
    expect(describeWarning(onSeries!)).toBe('p.rst:2 (patches/a.patch:8): ERROR: a');
    expect(describeWarning(onMlx!)).toBe(
      "p.rst:3 (MLX's line 2, below patches/a.patch:8): CRITICAL: Title level inconsistent:",
    );
    expect(elsewhere).toMatchObject({ origin: null, near: null });
    expect(describeWarning(elsewhere!)).toBe('q.rst:2: ERROR: c');
  });
});

describe('docs root and configuration', () => {
  it('builds a page in the nearest folder with a conf.py, else in its own folder', () => {
    expect(docsRoot('docs/src/dev/extensions.rst', ['docs/src/conf.py', 'python/conf.py'])).toBe('docs/src');
    expect(docsRoot('docs/src/dev/extensions.rst', [])).toBe('docs/src/dev');
    expect(docsRoot('README.rst', [])).toBe('');
    expect(docsRoot('a/b.rst', ['conf.py'])).toBe('');
  });

  it('makes the page the root document and runs no extension', () => {
    const conf = sphinxConfig('dev/extensions');
    expect(conf).toContain('root_doc = master_doc = "dev/extensions"');
    expect(conf).toContain('extensions = []');
    expect(conf).toContain('"doxygengroup"');
    expect(conf).not.toMatch(/import mlx/);
  });
});

describe('docsReportItem', () => {
  const file = {
    path: 'docs/src/dev/extensions.rst',
    origins: ['patches/0004.patch'],
    baseline: 2,
    patched: 2,
    newWarnings: [],
    failure: null,
  };
  const sphinx = { command: 'sphinx-build', version: '5.3.0' };

  it('passes with no pages, and says what it did not count', () => {
    expect(docsReportItem({ sphinx: null, reason: null, files: [] })).toMatchObject({
      status: 'pass',
      detail: 'no .rst files in the PR',
    });
    const ok = docsReportItem({ sphinx, reason: null, files: [file] });
    expect(ok.status).toBe('pass');
    expect(ok.detail).toContain('sphinx-build 5.3.0 (dummy builder, minimal configuration');
    expect(ok.detail).toContain('2 warning(s) also in the pinned file not counted');
  });

  it('is not checked, and required, without Sphinx', () => {
    const report: DocsReport = {
      sphinx: null,
      reason: 'sphinx-build not found',
      files: [{ ...file, baseline: null, patched: null }],
    };
    expect(docsReportItem(report)).toEqual({
      id: 'docs',
      title: 'Docs build (Sphinx)',
      status: 'not-checked',
      detail: 'docs/src/dev/extensions.rst: not checked: sphinx-build not found',
      fix: 'sudo apt-get install python3-sphinx  (or: pip install sphinx)',
      required: true,
    });
  });

  it('fails on a new warning or a failed build', () => {
    const warning = {
      file: file.path,
      line: 830,
      level: 'ERROR',
      message: 'Unknown directive type "x".',
      origin: { kind: 'series' as const, file: 'patches/0004.patch', line: 12 },
      near: null,
    };
    const failed = docsReportItem({ sphinx, reason: null, files: [{ ...file, newWarnings: [warning] }] });
    expect(failed).toMatchObject({ status: 'fail', required: true });
    expect(failed.detail).toBe(
      '1 new Sphinx warning(s): docs/src/dev/extensions.rst:830 (patches/0004.patch:12): ERROR: Unknown directive type "x".',
    );
    expect(
      docsReportItem({ sphinx, reason: null, files: [{ ...file, failure: 'sphinx-build exited with 2: boom' }] }),
    ).toMatchObject({ status: 'fail', detail: `${file.path}: sphinx-build exited with 2: boom` });
  });
});

describe('labels on other pages', () => {
  const numbered = (text: string) => text.split('\n').map((t, i) => ({ line: i + 1, text: t }));

  it('reads labels, not links or anonymous targets, and knows which ones a title follows (also after a currentmodule)', () => {
    const page = [
      '.. _cpp_ops:', // 1
      '', // 2
      'Operations', // 3
      '==========', // 4
      '', // 5
      '.. _Metal: https://developer.apple.com/metal/', // 6
      '.. _`python install`:', // 7
      '.. _second name:', // 8
      '', // 9
      '######', // 10
      'Python', // 11
      '######', // 12
      '', // 13
      '.. _note_label:', // 14
      '', // 15
      'A paragraph, not a title.', // 16
      'Still the paragraph.', // 17
      '.. __:', // 18
      '.. _nn:', // 19
      '', // 20
      '.. currentmodule:: mlx.nn', // 21
      '', // 22
      'Neural Networks', // 23
      '===============', // 24
    ].join('\n');
    expect(rstLabels('docs/src/a.rst', numbered(page))).toEqual([
      { name: 'cpp_ops', path: 'docs/src/a.rst', line: 1, titled: true },
      { name: 'python install', path: 'docs/src/a.rst', line: 7, titled: true },
      { name: 'second name', path: 'docs/src/a.rst', line: 8, titled: true },
      { name: 'note_label', path: 'docs/src/a.rst', line: 14, titled: false },
      { name: 'nn', path: 'docs/src/a.rst', line: 19, titled: true },
    ]);
  });

  it('reads the lines git grep printed, with gaps between them, as a whole file', () => {
    const lines = [
      { line: 40, text: '.. _ring_section:' },
      { line: 41, text: '' },
      { line: 42, text: 'Ring' },
      { line: 43, text: '----' },
      { line: 90, text: '.. _last:' },
    ];
    expect(rstLabels('p.rst', lines).map((l) => [l.name, l.titled])).toEqual([
      ['ring_section', true],
      ['last', false],
    ]);
  });

  it('writes each label once (Sphinx ignores case), titled ones before a section, and maps warnings back', () => {
    const labels = [
      { name: 'ops', path: 'docs/src/python/ops.rst', line: 1, titled: true },
      { name: 'OPS', path: 'docs/src/cpp/ops.rst', line: 3, titled: true },
      { name: 'a:b', path: 'docs/src/x.rst', line: 9, titled: false },
    ];
    const page = labelsPage(labels);
    const lines = page.content.split('\n');
    expect(lines[0]).toBe(':orphan:');
    const ops = lines.indexOf('.. _ops:');
    expect(lines.slice(ops + 2, ops + 4)).toEqual(['Section 1', '=========']);
    expect(lines).not.toContain('.. _OPS:');
    const ab = lines.indexOf('.. _`a:b`:');
    expect(lines[ab + 2]).toBe('Target.');
    expect(page.lineLabels[ab]).toEqual(labels[2]);

    const stub = 'docs/src/_labels_on_other_pages.rst';
    const moved = relocateLabelWarnings(
      [
        { file: stub, line: ab + 1, level: 'WARNING', message: 'something about a:b' },
        {
          file: 'docs/src/dev/e.rst',
          line: 5,
          level: 'WARNING',
          message: `duplicate label ops, other instance in ${stub}`,
        },
      ],
      stub,
      page,
    );
    expect(moved).toEqual([
      { file: 'docs/src/x.rst', line: 9, level: 'WARNING', message: 'something about a:b' },
      {
        file: 'docs/src/dev/e.rst',
        line: 5,
        level: 'WARNING',
        message: 'duplicate label ops, other instance in docs/src/python/ops.rst',
      },
    ]);
  });
});
