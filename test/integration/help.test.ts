import { describe, expect, it } from 'vitest';

import { loadCommands } from '../../src/cli.js';
import { REPO_ROOT, runCli } from '../support/repos.js';

const words = (text: string) => text.split(/\s+/).filter(Boolean).sort();
const commands = await loadCommands();
const names = ['', ...commands.map((c) => c.name.split(' ')[0] as string)];

describe('loading commands', () => {
  it('the word of each command loads that command only', async () => {
    for (const name of names.slice(1))
      expect((await loadCommands(name)).map((c) => c.name.split(' ')[0])).toEqual([name]);
  });
  it('a word that names no command loads every command, in the order --help lists them', async () => {
    expect(await loadCommands('aply')).toEqual(commands);
    expect(await loadCommands('--json')).toEqual(commands);
  });
});

// Wrapping only moves line breaks between words: the words of the help text are the same at any
// width. A break inside a word leaves pieces that are not words ("uncommitte" + "d").
describe('--help wraps between words only', () => {
  for (const name of names) {
    it(`${name || 'the top level'}: in a pipe and in terminals 80 and 100 columns wide`, async () => {
      const args = name ? [name, '--help'] : ['--help'];
      const pipe = await runCli(args, { cwd: REPO_ROOT });
      expect(pipe.code).toBe(0);
      expect(pipe.stdout).toContain('Options:');
      for (const columns of [80, 100]) {
        const tty = await runCli(args, { cwd: REPO_ROOT, columns });
        expect(tty.code).toBe(0);
        expect(words(tty.stdout)).toEqual(words(pipe.stdout));
        for (const line of tty.stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(columns);
      }
      for (const line of pipe.stdout.split('\n')) expect(line.length, line).toBeLessThanOrEqual(110);
    });
  }
});

// A command wrapped inside a two-column example ("check-metal --metal-cpp" / "~/Downloads/metal-cpp")
// cannot be copied as it is: the description goes on a line of its own, above the command.
describe('--help examples', () => {
  it('show each command whole on one line, after its description, in a pipe and at 80 and 100 columns', async () => {
    let described = 0;
    for (const name of names.filter(Boolean)) {
      for (const columns of [undefined, 80, 100]) {
        const where = `${name} --help at ${columns ?? 'pipe'}`;
        const help = await runCli([name, '--help'], { cwd: REPO_ROOT, ...(columns ? { columns } : {}) });
        const block = help.stdout.split('\nExamples:\n')[1]?.split('\n\n')[0];
        if (block === undefined) continue;
        if (columns === undefined) described++;
        const lines = block.split('\n').filter(Boolean);
        const isCommand = (line: string) =>
          line === `  mlx-storage-pr ${name}` || line.startsWith(`  mlx-storage-pr ${name} `);
        lines.forEach((line, i) => {
          const next = lines[i + 1];
          // A description (a comment, which may wrap) comes first; nothing continues a command.
          if (i === 0) expect(line, where).toMatch(/^ {2}# \S/);
          if (isCommand(line) && next !== undefined) expect(next, `${where}: after ${line}`).toMatch(/^ {2}# \S/);
        });
        expect(lines.filter(isCommand).length, where).toBe(lines.filter((l) => l.startsWith('  # ')).length);
      }
    }
    expect(described).toBeGreaterThanOrEqual(10);
  });
});

describe('verify --help', () => {
  it('names every group --skip takes', async () => {
    const { VERIFY_GROUPS } = await import('../../src/readiness/skip.js');
    const help = await runCli(['verify', '--help'], { cwd: REPO_ROOT });
    const text = help.stdout.replace(/\s+/g, ' ');
    for (const group of Object.keys(VERIFY_GROUPS))
      expect(text, group).toMatch(new RegExp(`a group \\([^)]*\\b${group}\\b`));
  });
});
