import { writeFileSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { runCli, tempDir } from '../support/repos.js';

describe('a --workdir that is not a folder', () => {
  const file = path.join(tempDir(), 'notes.txt');
  writeFileSync(file, 'mine\n');
  const commands: Record<string, string[]> = {
    apply: ['apply'],
    check: ['check', '--against', 'main'],
    status: ['status'],
  };
  for (const [name, argv] of Object.entries(commands)) {
    it(`${name}: a file, or a path below a file, is a usage error (2) naming it; no internal error, the file untouched`, async () => {
      for (const workdir of [file, path.join(file, 'sub')]) {
        const result = await runCli([...argv, '--workdir', workdir, '--json', '--mlx-repo', tempDir()], {
          cwd: tempDir(),
        });
        expect(result.code, result.stderr).toBe(2);
        expect(result.json.error).toMatchObject({ code: 'WORKDIR_INVALID', details: { file } });
        expect(result.json.error.message).toContain('not a folder');
        expect(result.stderr).not.toContain('No checkout');
      }
    });
  }
});
