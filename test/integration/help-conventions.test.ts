import { describe, expect, it } from 'vitest';

import { loadCommands } from '../../src/cli.js';
import { packageVersion } from '../../src/adapters/package-root.js';
import { REPO_ROOT, runCli } from '../support/repos.js';

const cwd = REPO_ROOT;
const commands = await loadCommands();
const names = commands.map((c) => c.name.split(' ')[0] as string);

// As in git, gh, npm and cmake: -h, help, help <command>, a bare run, -v.
describe('help and usage as in git and gh', () => {
  it('-h is --help, at the top and for every command', async () => {
    const top = await runCli(['--help'], { cwd });
    expect(await runCli(['-h'], { cwd })).toEqual(top);
    for (const name of names) {
      const long = await runCli([name, '--help'], { cwd });
      expect(long.code, name).toBe(0);
      expect(await runCli([name, '-h'], { cwd }), name).toEqual(long);
    }
  });

  it('help and help <command> print the same help, exit 0', async () => {
    expect(await runCli(['help'], { cwd })).toEqual(await runCli(['--help'], { cwd }));
    expect(await runCli(['help', 'apply'], { cwd })).toEqual(await runCli(['apply', '--help'], { cwd }));
    const typo = await runCli(['help', 'aply'], { cwd });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('Did you mean apply?');
  });

  it('a bare run lists every command with its line on stderr and exits 2', async () => {
    const bare = await runCli([], { cwd });
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe('');
    for (const name of names) expect(bare.stderr).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
    expect(bare.stderr).toContain('mlx-storage-pr help <command>');
  });

  it('-v and --version print the version', async () => {
    for (const flag of ['-v', '--version']) {
      const out = await runCli([flag], { cwd });
      expect(out.code).toBe(0);
      expect(out.stdout).toBe(`${packageVersion()}\n`);
    }
  });

  it('a mistyped option gets a suggestion', async () => {
    for (const typo of ['--dryrun', '--dry-rn', '--DRY-RUN']) {
      const out = await runCli(['apply', typo], { cwd });
      expect(out.code, typo).toBe(2);
      expect(out.stderr, typo).toContain('Did you mean --dry-run?');
    }
  });

  it('a command in capitals gets a suggestion', async () => {
    const out = await runCli(['APPLY'], { cwd });
    expect(out.code).toBe(2);
    expect(out.stderr).toContain('Did you mean apply?');
  });
});

describe('--help shows values, defaults and choices; own options first, global ones last', () => {
  it('test --help', async () => {
    const help = (await runCli(['test', '--help'], { cwd })).stdout;
    expect(help).toMatch(/--tests <filter>/);
    expect(help).toMatch(/--sanitize <asan\|ubsan>/);
    expect(help).toMatch(/-j, --jobs <n>/);
    expect((await runCli(['verify', '--help'], { cwd })).stdout).toMatch(/-j, --jobs <n> .*\[default: \d+\]/s);
    expect(help).toMatch(/--mlx-repo <url\|path>/);
    expect(help).toMatch(/--workdir <dir>/);
    expect(help.indexOf('--tests')).toBeLessThan(help.indexOf('--mlx-repo'));
    expect(help.indexOf('--mlx-repo')).toBeLessThan(help.indexOf('--help'));
    expect(help).toMatch(/Global options:/);
  });
  it('pr --help lists its own options before the global ones', async () => {
    const help = (await runCli(['pr', '--help'], { cwd })).stdout;
    expect(help.indexOf('--fork')).toBeLessThan(help.indexOf('Global options:'));
    expect(help.indexOf('--mlx-repo')).toBeGreaterThan(help.indexOf('Global options:'));
  });
});
