import { existsSync } from 'node:fs';
import path from 'node:path';

import { describe, expect, it } from 'vitest';

import { checkBlas } from '../../src/ops/doctor.js';
import { FIXTURES, runCli, tempDir } from '../support/repos.js';

const byId = (json: { checks: Array<{ id: string; status: string }> }) => Object.fromEntries(json.checks.map((c) => [c.id, c]));

const blasInstalled = process.platform === 'linux' && ['/usr/include/x86_64-linux-gnu/cblas.h', '/usr/include/aarch64-linux-gnu/cblas.h', '/usr/include/cblas.h'].some(existsSync) && existsSync('/usr/include/lapacke.h');
const blasReason = 'skipped: needs Linux with libopenblas-dev and liblapacke-dev installed';
if (!blasInstalled) console.warn(`doctor BLAS/LAPACK: ${blasReason}`);

describe.skipIf(!blasInstalled)(blasInstalled ? 'doctor on Linux with BLAS/LAPACK installed' : `doctor BLAS/LAPACK (${blasReason})`, () => {
  it('finds the libraries on a user PATH without /sbin, where ldconfig lives', async () => {
    const result = await runCli(['doctor', '--json'], { cwd: FIXTURES, env: { PATH: '/usr/local/bin:/usr/bin:/bin' } });
    expect(byId(result.json)['blas']).toMatchObject({ status: 'pass', detail: 'cblas.h, lapacke.h, libblas, liblapack' });
  });
});

describe.skipIf(process.platform !== 'linux')(process.platform === 'linux' ? 'doctor BLAS/LAPACK check' : 'doctor BLAS/LAPACK check (skipped: Linux only; macOS uses Accelerate)', () => {
  it('names what is missing and the packages that provide it', async () => {
    const empty = tempDir();
    const check = await checkBlas({ PATH: '/usr/bin:/bin' }, { headerDirs: [empty], libDirs: [empty], ldconfig: [path.join(empty, 'ldconfig')] });
    expect(check).toMatchObject({ status: 'fail', detail: 'missing cblas.h, lapacke.h, libblas, liblapack', fix: 'sudo apt-get install libopenblas-dev liblapacke-dev', required: true });
  });
});
