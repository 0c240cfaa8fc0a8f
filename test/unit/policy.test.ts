import { readFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { formatItems } from '../../src/core/report-items.js';
import { disclosureText, findPlaceholders, policyItems, type PolicyFile } from '../../src/readiness/policy.js';
import { FIXTURES } from '../support/repos.js';

// A copy of the templates the package ships in pr/. The user writes over pr/ (the README says so),
// so tests never read it.
const shipped = (name: string): PolicyFile => ({
  path: `pr/${name}`,
  text: readFileSync(path.join(FIXTURES, 'pr', name), 'utf8'),
});
const byId = (files: PolicyFile[]) => Object.fromEntries(policyItems(files).map((c) => [c.id, c]));

const written = `## Proposed changes

Adds a read-only view of the Metal buffer behind an evaluated array.

## AI usage disclosure

- ☑️ I understand it is strictly prohibited to use AI to write PR description
- AI usage disclosure: I used an assistant to draft the test scaffolding and reviewed every line.
`;
const message: PolicyFile = {
  path: 'pr/commit-message.txt',
  text: 'Add Metal storage export view\n\nLets extensions borrow the MTL::Buffer of an array.\n',
};

describe('PR policy checks', () => {
  it('fail on the templates as shipped and name every placeholder by file and line', () => {
    const files = [shipped('description.md'), shipped('commit-message.txt')];
    const places = findPlaceholders(files).map((p) => `${p.path}:${p.line}`);
    expect(places).toEqual([
      'pr/description.md:3',
      'pr/description.md:7',
      'pr/description.md:12',
      'pr/commit-message.txt:1',
      'pr/commit-message.txt:3',
    ]);
    const checks = byId(files);
    expect(checks['pr-placeholders']).toMatchObject({ status: 'fail', required: true });
    expect(checks['pr-placeholders']?.detail).toContain('pr/description.md:3');
    expect(checks['pr-ai-disclosure']).toMatchObject({ status: 'fail' });
  });

  it('pass once the user wrote the text, including the disclosure', () => {
    const checks = byId([{ path: 'pr/description.md', text: written }, message]);
    expect(Object.values(checks).map((c) => `${c.id}:${c.status}`)).toEqual([
      'pr-files:pass',
      'pr-placeholders:pass',
      'pr-ai-disclosure:pass',
    ]);
  });

  it("fail without a disclosure, even when MLX's acknowledgement line is kept", () => {
    const text = written.replace(/- AI usage disclosure:.*\n/, '- AI usage disclosure:\n');
    expect(byId([{ path: 'pr/description.md', text }, message])['pr-ai-disclosure']?.status).toBe('fail');
    const noSection = '## Proposed changes\n\nAdds a view.\n';
    expect(byId([{ path: 'pr/description.md', text: noSection }, message])['pr-ai-disclosure']).toMatchObject({
      status: 'fail',
      required: true,
    });
  });

  it("accept a disclosure heading with text under it, or MLX's template line alone", () => {
    expect(
      disclosureText('# Title\n\n### Disclosure of AI use\n\nNone: written by hand.\n\n## Next\n\nmore').text,
    ).toBe('None: written by hand.');
    expect(disclosureText('Adds a view.\n\n- AI usage disclosure: no AI was used.\n').text).toBe('no AI was used.');
    expect(disclosureText('## AI usage disclosure\n\n<!-- WRITE: how -->\n').text).toBe('');
  });

  it('fail when a file is missing or empty', () => {
    expect(byId([message])['pr-files']).toMatchObject({ status: 'fail', detail: 'missing pr/description.md' });
    expect(
      byId([
        { path: 'pr/description.md', text: written },
        { path: 'pr/commit-message.txt', text: '\n' },
      ])['pr-placeholders']?.detail,
    ).toContain('no text yet in pr/commit-message.txt');
  });

  it('never prints an ok line about the files that FAIL lines below it are about', () => {
    const lines = formatItems(policyItems([shipped('description.md'), shipped('commit-message.txt')]));
    const failing = lines.filter((l) => l.startsWith('FAIL'));
    expect(failing.length).toBeGreaterThan(0);
    for (const ok of lines.filter((l) => l.startsWith('ok'))) {
      expect(ok).not.toMatch(/pr\/description\.md|pr\/commit-message\.txt|PR description and commit message/);
    }
    expect(lines[0]).toBe('ok   PR text files present: a description and 1 commit message in pr/');
  });
});
