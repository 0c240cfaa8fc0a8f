import { createRequire } from 'node:module';

import { describe, expect, it } from 'vitest';
import type { Argv } from 'yargs';

import { loadCommands } from '../../src/cli.js';
import { runCli, tempDir } from '../support/repos.js';

const commands = await loadCommands();
const yargs = createRequire(import.meta.url)('yargs') as typeof import('yargs').default;

/** The yes/no options a command declares, read from its own yargs builder. */
function booleansOf(spec: (typeof commands)[number]): string[] {
  const built = spec.builder(yargs([]));
  const declared = (built as Argv & { getOptions(): { boolean: string[] } }).getOptions().boolean;
  return [...new Set(declared)].filter((name) => !['help', 'version'].includes(name) && !/[A-Z]/.test(name));
}

/** Arguments a command needs before it looks at anything else. */
const REQUIRED: Record<string, string[]> = { check: ['--against', 'main'] };

describe('a yes/no option given a value', () => {
  it('finds the yes/no options in the declarations (the list below is not hand-made)', () => {
    const all = commands.flatMap((spec) => booleansOf(spec));
    expect(all).toContain('dry-run');
    expect(all).toContain('force');
    expect(all.length).toBeGreaterThan(10);
  });

  for (const spec of commands) {
    const name = spec.name.split(' ')[0] as string;
    for (const option of booleansOf(spec)) {
      it(`${name} --${option}=<not true or false> is a usage error (2) naming the option, before anything runs`, async () => {
        const workdir = tempDir();
        for (const value of ['yes', '1', 'on', 'TRUE', '']) {
          const result = await runCli(
            [name, ...(REQUIRED[name] ?? []), `--${option}=${value}`, '--json', '--workdir', workdir],
            { cwd: tempDir() },
          );
          expect(result.code, `${option}=${value}: ${result.stderr}`).toBe(2);
          expect(result.json.error.message).toContain(`--${option}`);
        }
      });
    }
  }

  it('--flag, --no-flag, --flag=true and --flag=false are accepted', async () => {
    for (const form of ['--dry-run', '--no-dry-run', '--dry-run=true', '--dry-run=false']) {
      const result = await runCli(['clean', form, '--json', '--workdir', tempDir()], { cwd: tempDir() });
      expect(result.code, `${form}: ${result.stderr}`).toBe(0);
    }
  });
});
