import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';

import { projectFiles } from '../support/export-fixtures.js';
import { git, makeProject, makeUpstream, runCli, snapshot, tempDir } from '../support/repos.js';

/**
 * A full disk, for real: the workdir or the project on a small tmpfs (root
 * only), so git and the tool get ENOSPC ("No space left on device") where they
 * write. Space is "freed" by growing the tmpfs, or by removing a filler file.
 */

const mounted: string[] = [];
afterEach(async () => {
  for (const dir of mounted.splice(0)) await execa('umount', ['-l', dir]);
});

/** Mounts a tmpfs of `size` (mount's units: 1m, 512k) on a new folder; the skip reason when that is not possible. */
async function smallDisk(size: string): Promise<{ dir: string } | { skip: string }> {
  if (process.getuid?.() !== 0) return { skip: 'mounting a tmpfs needs root' };
  const dir = path.join(tempDir('msp-disk-'), 'disk');
  mkdirSync(dir);
  try {
    await execa('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  } catch (error) {
    return { skip: `mount -t tmpfs failed: ${String((error as { stderr?: unknown }).stderr ?? error).trim()}` };
  }
  mounted.push(dir);
  return { dir };
}

async function resize(dir: string, size: string): Promise<void> {
  await execa('mount', ['-o', `remount,size=${size}`, dir]);
}

/** Fills the disk of `dir` up to `pages` free blocks, with one file. */
function fillLeaving(dir: string, pages: number): string {
  const { bavail, bsize } = statfsSync(dir);
  const filler = path.join(dir, 'filler');
  writeFileSync(filler, Buffer.alloc(Math.max(0, Number(bavail) - pages) * Number(bsize)));
  return filler;
}

/** The fixture upstream with a 2 MB file that does not compress (last in git's order): its fetch and its checkout each need 2 MB. */
const bigUpstream = () =>
  makeUpstream('upstream', (dir) => {
    mkdirSync(path.join(dir, 'zz'));
    writeFileSync(path.join(dir, 'zz', 'big.bin'), randomBytes(2 * 1024 * 1024));
  });

interface ErrorJson {
  error: { code: string; message: string; hint: string };
}

/** Each case runs apply or export twice on a loaded machine: more time than the default. */
const TWO_RUNS = 120_000;

describe('a full disk', () => {
  it(
    'during a cold apply\'s fetch: NO_SPACE (exit 12) naming free space and the command to run, not "the source does not contain the pinned commit"; nothing left behind',
    async (ctx) => {
      const disk = await smallDisk('1m');
      if ('skip' in disk) return ctx.skip();
      const upstream = bigUpstream();
      const project = makeProject(upstream.sha);
      const result = await runCli(['apply', '--mlx-repo', upstream.dir, '--workdir', disk.dir, '--json'], {
        cwd: project,
      });
      expect(result.code, result.stderr).toBe(12);
      const { error } = result.json as ErrorJson;
      expect(error.code).toBe('NO_SPACE');
      expect(error.message).toMatch(/No space left on device/);
      expect(error.hint).toMatch(/[Ff]ree space/);
      expect(error.hint).toContain('mlx-storage-pr apply');
      expect(readdirSync(disk.dir).filter((e) => e === 'mlx' || e.startsWith('mlx.partial-'))).toEqual([]);
    },
    TWO_RUNS,
  );

  it(
    'during the first checkout: NO_SPACE (exit 12), and once there is space `apply` finishes the checkout',
    async (ctx) => {
      const disk = await smallDisk('3m');
      if ('skip' in disk) return ctx.skip();
      const upstream = bigUpstream();
      const project = makeProject(upstream.sha);
      const apply = (...args: string[]) =>
        runCli(['apply', '--mlx-repo', upstream.dir, '--workdir', disk.dir, '--json', ...args], { cwd: project });
      const failed = await apply();
      expect(failed.code, failed.stderr).toBe(12);
      expect((failed.json as ErrorJson).error.code).toBe('NO_SPACE');

      await resize(disk.dir, '16m');
      const again = await apply();
      expect(again.code, again.stderr).toBe(0);
      const checkout = path.join(disk.dir, 'mlx');
      expect(readFileSync(path.join(checkout, 'zz', 'big.bin'))).toEqual(
        readFileSync(path.join(upstream.dir, 'zz', 'big.bin')),
      );
      expect(git(checkout, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    },
    TWO_RUNS,
  );

  it(
    'during the switch of an existing checkout: NO_SPACE (exit 12) and the checkout is as it was (no file half switched); with space, apply switches',
    async (ctx) => {
      const disk = await smallDisk('2m');
      if ('skip' in disk) return ctx.skip();
      const upstream = makeUpstream();
      const project = makeProject(upstream.sha);
      const apply = (...args: string[]) =>
        runCli(['apply', '--mlx-repo', upstream.dir, '--workdir', disk.dir, '--json', ...args], { cwd: project });
      expect((await apply()).code).toBe(0);
      const checkout = path.join(disk.dir, 'mlx');
      const before = snapshot(checkout);
      // A changed header (written first) and a new 3 MB file (written last; git stores it in a few KB).
      const header = path.join(project, 'templates', '{{header_path}}');
      writeFileSync(
        header,
        readFileSync(header, 'utf8').replace('class {{class_name}} {};', 'class {{class_name}} { int x; };'),
      );
      writeFileSync(path.join(project, 'templates', 'zz-big.txt'), 'a line of text\n'.repeat(200_000));

      const failed = await apply();
      expect(failed.code, failed.stderr).toBe(12);
      expect((failed.json as ErrorJson).error.code).toBe('NO_SPACE');
      expect(snapshot(checkout)).toBe(before);

      await resize(disk.dir, '16m');
      const again = await apply();
      expect(again.code, again.stderr).toBe(0);
      expect(readFileSync(path.join(checkout, 'mlx/backend/metal/storage_view.h'), 'utf8')).toContain('int x;');
    },
    TWO_RUNS,
  );

  it(
    'while export writes the project: NO_SPACE (exit 12), no project file changed and no draft left; with space, export writes it all',
    async (ctx) => {
      const disk = await smallDisk('1m');
      if ('skip' in disk) return ctx.skip();
      const upstream = makeUpstream();
      const project = path.join(disk.dir, 'project');
      cpSync(makeProject(upstream.sha), project, { recursive: true });
      const workdir = path.join(tempDir('msp-work-'), 'work');
      const cli = (...args: string[]) =>
        runCli([...args, '--mlx-repo', upstream.dir, '--workdir', workdir, '--json'], { cwd: project });
      expect((await cli('apply')).code).toBe(0);
      const checkout = path.join(workdir, 'mlx');
      // A new file (written first, as templates/mlx/zz_new.h: two pages, which take the last free space) and an edit
      // of a template-made file (written second: its draft finds no space).
      const header = path.join(checkout, 'mlx/backend/metal/storage_view.h');
      writeFileSync(
        header,
        readFileSync(header, 'utf8').replace('class MetalStorageView {};', 'class MetalStorageView { int x; };'),
      );
      writeFileSync(path.join(checkout, 'mlx', 'zz_new.h'), '// a new header\n'.repeat(375));
      const before = projectFiles(project);
      const filler = fillLeaving(disk.dir, 2);

      const failed = await cli('export', '--include-new');
      expect(failed.code, failed.stderr).toBe(12);
      expect((failed.json as ErrorJson).error.code).toBe('NO_SPACE');
      expect((failed.json as ErrorJson).error.hint).toContain('mlx-storage-pr export');
      expect(projectFiles(project)).toEqual(before);

      rmSync(filler);
      const again = await cli('export', '--include-new');
      expect(again.code, again.stderr).toBe(0);
      expect(existsSync(path.join(project, 'templates', 'mlx', 'zz_new.h'))).toBe(true);
      expect(readFileSync(path.join(project, 'templates', '{{header_path}}'), 'utf8')).toContain('int x;');
    },
    TWO_RUNS,
  );
});

describe('a first checkout that never finished (the disk filled, or the run was killed in it)', () => {
  /**
   * The state git leaves: HEAD on a branch that does not exist yet, no index,
   * some files written (untracked), one cut off half-way, others not written;
   * plus a file of the user's at a path MLX does not have.
   */
  async function halfCheckedOut() {
    const upstream = makeUpstream();
    const project = makeProject(upstream.sha);
    const workdir = path.join(tempDir('msp-work-'), 'work');
    const cli = (...args: string[]) =>
      runCli([...args, '--mlx-repo', upstream.dir, '--workdir', workdir, '--json'], { cwd: project });
    expect((await cli('apply')).code).toBe(0);
    const checkout = path.join(workdir, 'mlx');
    const applied = snapshot(checkout);
    git(checkout, 'symbolic-ref', 'HEAD', 'refs/heads/master');
    rmSync(path.join(checkout, '.git', 'index'));
    rmSync(path.join(checkout, 'tests', 'CMakeLists.txt'));
    const cut = path.join(checkout, 'docs', 'src', 'dev', 'extensions.rst');
    writeFileSync(cut, readFileSync(cut, 'utf8').slice(0, 20));
    writeFileSync(path.join(checkout, 'notes.txt'), 'mine\n');
    return { cli, checkout, applied, cutText: readFileSync(cut, 'utf8') };
  }

  it("apply finishes it: the checkout holds the series, the cut-off file is saved under a backup ref, the user's file stays", async () => {
    const { cli, checkout, applied, cutText } = await halfCheckedOut();
    const result = await cli('apply');
    expect(result.code, result.stderr).toBe(0);
    rmSync(path.join(checkout, 'notes.txt'));
    expect(snapshot(checkout)).toBe(applied);
    const saved = (result.json as { saved: { refs: string[] } }).saved;
    expect(git(checkout, 'show', `${saved.refs[0]}:docs/src/dev/extensions.rst`)).toBe(cutText);
  });

  it("reset finishes it on the pinned commit and saves what is not MLX's (the cut-off file, the user's file)", async () => {
    const { cli, checkout, cutText } = await halfCheckedOut();
    const result = await cli('reset');
    expect(result.code, result.stderr).toBe(0);
    expect(git(checkout, 'status', '--porcelain', '--untracked-files=all')).toBe('');
    const saved = (result.json as { saved: { refs: string[] } }).saved;
    expect(git(checkout, 'show', `${saved.refs[0]}:docs/src/dev/extensions.rst`)).toBe(cutText);
    expect(git(checkout, 'show', `${saved.refs[0]}:notes.txt`)).toBe('mine\n');
  });
});
