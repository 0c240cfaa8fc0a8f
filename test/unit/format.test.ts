import { describe, expect, it } from 'vitest';

import { UserError } from '../../src/core/errors.js';
import { isCMakeFile, isCppFile, nearestStyleFile, preCommitPins } from '../../src/readiness/format-report.js';
import { preCommitHooks } from '../../src/readiness/pre-commit.js';
import { joinPatch, seriesSteps, splitPatch } from '../../src/core/patch.js';
import { renderDeclared } from '../../src/series/render.js';
import { mapFormattedBack } from '../../src/series/template-map.js';
import { RFC_VARIABLES } from '../support/variables.js';

const variables = RFC_VARIABLES;

const render = (lines: string[]) => renderDeclared(lines.join('\n'), variables).split('\n');

describe('file selection', () => {
  it('picks the files MLX pre-commit formats', () => {
    expect(['a.h', 'b.cpp', 'c.hpp', 'd.cc', 'e.cpp.in'].filter(isCppFile)).toEqual(['a.h', 'b.cpp']);
    expect(['CMakeLists.txt', 'mlx/CMakeLists.txt', 'cmake/x.cmake', 'CMakeLists.txt.bak'].filter(isCMakeFile)).toEqual(
      ['CMakeLists.txt', 'mlx/CMakeLists.txt', 'cmake/x.cmake'],
    );
  });

  it('uses the nearest .clang-format, as --style=file does', () => {
    const files = ['.clang-format', 'docs/.clang-format', 'mlx/3rdparty/.clang-format'];
    expect(nearestStyleFile('mlx/backend/metal/x.h', files)).toBe('.clang-format');
    expect(nearestStyleFile('mlx/3rdparty/pocketfft.h', files)).toBe('mlx/3rdparty/.clang-format');
    expect(nearestStyleFile('docs/src/x.cpp', files)).toBe('docs/.clang-format');
    expect(nearestStyleFile('x.cpp', [])).toBeNull();
  });

  it('reads the pinned tool versions from .pre-commit-config.yaml', async () => {
    const text =
      'repos:\n-   repo: https://github.com/pre-commit/mirrors-clang-format\n    rev: v21.1.8\n    hooks: [{id: clang-format}]\n- repo: https://github.com/cheshirekow/cmake-format-precommit\n  rev: v0.6.13\n  hooks: [{id: cmake-format}]\n';
    expect(preCommitPins(await preCommitHooks(text))).toEqual({ clangFormat: '21.1.8', cmakeFormat: '0.6.13' });
    expect(preCommitPins([])).toEqual({ clangFormat: null, cmakeFormat: null });
  });
});

describe('mapFormattedBack', () => {
  it('keeps placeholders through rewrapping, and maps an added namespace comment', () => {
    const raw = [
      'namespace {{namespace}} {',
      '{{status_enum}} {{try_export_function}}(const {{class_name}}& view, {{options_struct}} options, int extra_argument);',
      '}',
    ];
    const formatted = [
      'namespace mlx::core::metal {',
      'StorageExportStatus try_export_metal_storage(',
      '    const MetalStorageView& view,',
      '    StorageExportOptions options,',
      '    int extra_argument);',
      '} // namespace mlx::core::metal',
    ];
    expect(mapFormattedBack(raw, render(raw), formatted, variables, 't')).toEqual([
      'namespace {{namespace}} {',
      '{{status_enum}} {{try_export_function}}(',
      '    const {{class_name}}& view,',
      '    {{options_struct}} options,',
      '    int extra_argument);',
      '} // namespace {{namespace}}',
    ]);
  });

  it('keeps literal text literal when the counts match, in token order', () => {
    const raw = ['// MetalStorageView is the name of {{class_name}}.', 'class {{class_name}} {  int  x; };'];
    const formatted = [
      '// MetalStorageView is the name of MetalStorageView.',
      'class MetalStorageView {',
      '  int x;',
      '};',
    ];
    expect(mapFormattedBack(raw, render(raw), formatted, variables, 't')).toEqual([
      '// MetalStorageView is the name of {{class_name}}.',
      'class {{class_name}} {',
      '  int x;',
      '};',
    ]);
  });

  it('follows include sorting, which reorders lines', () => {
    const raw = ['#include "{{header_include}}"', '#include <vector>', '#include "mlx/array.h"'];
    const formatted = ['#include <vector>', '#include "mlx/array.h"', '#include "mlx/backend/metal/storage_view.h"'];
    expect(mapFormattedBack(raw, render(raw), formatted, variables, 't')).toEqual([
      '#include <vector>',
      '#include "mlx/array.h"',
      '#include "{{header_include}}"',
    ]);
  });

  it('refuses when an added occurrence could be the placeholder or the literal text', () => {
    const raw = ['// mlx::core::metal holds it', 'namespace {{namespace}} {', 'int  x;', '}'];
    const formatted = [
      '// mlx::core::metal holds it',
      'namespace mlx::core::metal {',
      'int x;',
      '} // namespace mlx::core::metal',
    ];
    let error: unknown;
    try {
      mapFormattedBack(raw, render(raw), formatted, variables, 'templates/x.h');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UserError);
    expect((error as UserError).message).toContain('templates/x.h: cannot map formatted line 4');
    expect((error as UserError).message).toContain('{{namespace}}');
    expect((error as UserError).hint).toContain('by hand');
  });
});

describe('patches', () => {
  const raw = [
    'From: someone',
    'diff --git a/x.h b/x.h',
    'index 1111111..2222222 100644',
    '--- a/x.h',
    '+++ b/x.h',
    '@@ -1,3 +1,4 @@',
    ' int a;',
    '--- not a header, a removed line',
    '+class {{class_name}};',
    '+int  b;',
    ' int c;',
    'diff --git a/y.txt b/y.txt',
    '--- a/y.txt',
    '+++ b/y.txt',
    '@@ -1 +1 @@',
    '-old',
    '+new',
    '',
  ].join('\n');

  it('splits by hunk line counts and joins back byte for byte', () => {
    const split = splitPatch(raw, 'p');
    expect(split.preamble).toEqual(['From: someone']);
    expect(split.sections.map((s) => s.hunks.length)).toEqual([1, 1]);
    expect(split.sections[0]?.hunks[0]?.lines).toHaveLength(5);
    expect(joinPatch(split)).toBe(raw);
  });

  it('applies the series in memory with the raw lines in step', () => {
    const pinned = new Map<string, string | null>([
      ['x.h', 'int a;\n-- not a header, a removed line\nint c;\n'],
      ['y.txt', 'old\n'],
    ]);
    const steps = seriesSteps([{ name: '0001.patch', raw, rendered: renderDeclared(raw, variables) }], pinned);
    expect(steps.map((s) => s.path)).toEqual(['x.h', 'y.txt']);
    expect(steps[0]?.post.rendered).toEqual(['int a;', 'class MetalStorageView;', 'int  b;', 'int c;']);
    expect(steps[0]?.post.raw).toEqual(['int a;', 'class {{class_name}};', 'int  b;', 'int c;']);
    expect(steps[0]?.added).toEqual([[2, 3]]);
    // Added lines name their line in the patch file (the `+` lines are lines 9 and 10 of `raw`).
    expect(steps[0]?.sources).toEqual([{ pre: 0 }, { patchLine: 9 }, { patchLine: 10 }, { pre: 2 }]);
    expect(raw.split('\n')[8]).toBe('+class {{class_name}};');
    expect(steps[1]?.sources).toEqual([{ patchLine: 17 }]);
    expect(raw.split('\n')[16]).toBe('+new');
  });
});
