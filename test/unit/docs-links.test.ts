import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DOCS = path.join(ROOT, 'docs');

/** README.md and every page in docs/, as absolute paths. */
const pages = (): string[] => [
  path.join(ROOT, 'README.md'),
  ...readdirSync(DOCS)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => path.join(DOCS, f)),
];

/** The lines of a Markdown file outside fenced code blocks, with inline code spans emptied. */
function proseLines(text: string): { line: number; text: string }[] {
  const lines: { line: number; text: string }[] = [];
  let fenced = false;
  text.split('\n').forEach((line, i) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return;
    }
    if (!fenced) lines.push({ line: i + 1, text: line.replace(/`[^`]*`/g, '``') });
  });
  return lines;
}

/** GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[`*]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown file's headings; a repeated heading gets -1, -2, ... as on GitHub. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = slug(heading[1] as string);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Every relative link and #anchor in a Markdown file that does not resolve, as `file:line: target (why)`. */
function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  const name = path.relative(ROOT, file);
  for (const { line, text } of proseLines(readFileSync(file, 'utf8'))) {
    for (const match of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      const target = match[1] as string;
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
      const [pathPart = '', anchor] = target.split('#', 2);
      const resolved = pathPart === '' ? file : path.resolve(path.dirname(file), decodeURIComponent(pathPart));
      if (!existsSync(resolved)) {
        broken.push(`${name}:${line}: ${target} (no such file)`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!resolved.endsWith('.md')) {
        broken.push(`${name}:${line}: ${target} (an anchor in a file that is not Markdown)`);
      } else if (!anchorsOf(resolved).has(anchor)) {
        broken.push(`${name}:${line}: ${target} (no heading with that anchor)`);
      }
    }
  }
  return broken;
}

describe('links in README.md and docs/', () => {
  it('every relative link and #anchor in README.md and docs/*.md resolves', () => {
    const files = pages();
    expect(files.length).toBeGreaterThan(1);
    expect(files.flatMap(brokenLinks)).toEqual([]);
  });

  it('the check finds a missing file, a missing anchor and a missing anchor in another page', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'docs-links-'));
    try {
      writeFileSync(path.join(dir, 'other.md'), '# Other page\n\n## The Metal twin: `test --metal-twin`\n');
      writeFileSync(
        path.join(dir, 'page.md'),
        [
          '# A page',
          '',
          "## Sanitizers and MLX's compiler (`test --sanitize`, `--cxx`)",
          '',
          '[ok](#sanitizers-and-mlxs-compiler-test---sanitize---cxx) [ok](other.md#the-metal-twin-test---metal-twin)',
          '[web](https://example.com/x#y) `[code](missing.md)`',
          '```',
          '[in a code block](missing.md)',
          '```',
          '[gone](missing.md) [no anchor](#nowhere) [other](other.md#nowhere)',
        ].join('\n'),
      );
      expect(brokenLinks(path.join(dir, 'page.md')).map((b) => b.replace(/^.*?:(\d+): /, '$1: '))).toEqual([
        '10: missing.md (no such file)',
        '10: #nowhere (no heading with that anchor)',
        '10: other.md#nowhere (no heading with that anchor)',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('anchors follow GitHub: markup and punctuation dropped, repeated headings numbered', () => {
    expect(slug('One report: `verify`')).toBe('one-report-verify');
    expect(slug("Sanitizers and MLX's compiler (`test --sanitize`, `--cxx`)")).toBe(
      'sanitizers-and-mlxs-compiler-test---sanitize---cxx',
    );
    expect(slug('Your own MLX change: `init --from`')).toBe('your-own-mlx-change-init---from');
    expect(slug('`ci.yml`')).toBe('ciyml');
  });

  it('README.md links every page of docs/', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const linked = new Set([...readme.matchAll(/\]\(docs\/([^)#]+\.md)(#[^)]*)?\)/g)].map((m) => m[1]));
    const missing = readdirSync(DOCS).filter((f) => f.endsWith('.md') && !linked.has(f));
    expect(missing).toEqual([]);
  });

  it('every docs/ page that src/ or a workflow names exists', () => {
    const named = new Set<string>();
    const scan = (dir: string, ext: RegExp) => {
      for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
        if (!entry.isFile() || !ext.test(entry.name)) continue;
        const text = readFileSync(path.join(entry.parentPath, entry.name), 'utf8');
        for (const m of text.matchAll(/\bdocs\/([a-z0-9-]+\.md)\b/g)) named.add(m[1] as string);
      }
    };
    scan(path.join(ROOT, 'src'), /\.ts$/);
    scan(path.join(ROOT, '.github'), /\.ya?ml$/);
    expect(named.size).toBeGreaterThan(0);
    expect([...named].filter((page) => !existsSync(path.join(DOCS, page)))).toEqual([]);
  });
});

describe('README.md', () => {
  it('stays short: at most 250 lines', () => {
    expect(readFileSync(path.join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(250);
  });

  it('its test command is the one .ci/run runs: npm test', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    expect(readme).toContain('```sh\nnpm test\n```');
    const ci = readFileSync(path.join(ROOT, '.ci/run'), 'utf8');
    expect(ci).toMatch(/^\s+npm test$/m);
  });
});
