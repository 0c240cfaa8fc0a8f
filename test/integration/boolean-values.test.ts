import { describe, expect, it } from 'vitest';

import { loadCommands } from '../../src/cli.js';
import { Declarations } from '../../src/core/command-line.js';
import { runCli, tempDir } from '../support/repos.js';

const commands = await loadCommands();
/** The yes/no options a command declares, read from its own builder. */
function booleansOf(spec: (typeof commands)[number]): string[] {
  const declared = spec.builder(new Declarations()) as unknown as Declarations;
  return [...declared.options].filter(([, d]) => d.type === 'boolean').map(([name]) => name);
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
