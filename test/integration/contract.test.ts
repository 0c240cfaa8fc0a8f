/**
 * The process contract of every command: its exit code and the shape of its
 * `--json` object (keys, value types and the stable values: statuses, states,
 * error codes, check ids, paths), on the success paths and the documented
 * failure paths. Outputs are normalised first (test/support/contract.ts):
 * temp folders, commit ids, times and build keys become names, and prose
 * (messages, hints, details) becomes `<text>`, so wording can change freely
 * but nothing else can.
 *
 * Cases in one `describe` share a project and run in order, as a user's
 * commands would; a case's name says what it changes or the state it needs.
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { laneToolchain, makeMetalProject, makeMetalUpstream, skipName } from '../support/check-metal-fixtures.js';
import { byOutcome, gitOnlyPath, runJson, runTable, spawnJson, type Names, type Outcome } from '../support/contract.js';
import { makeExportProject, makeExportUpstream } from '../support/export-fixtures.js';
import { stage } from '../support/stages.js';
import { makeFormatProject, makeFormatUpstream } from '../support/format-fixtures.js';
import { makeWorld, MESSAGE, ONLY_PR_TEXT, pushByHand, writePrText, type World } from '../support/fork.js';
import { addMulImplementation, MUL_TEST } from '../support/mul-fixture.js';
import { editConfig, FIXTURES, git, makeProject, makeUpstream, REPO_ROOT, tempDir } from '../support/repos.js';

const COMMANDS = ['apply', 'status', 'reset', 'test', 'doctor', 'format', 'check-metal', 'verify'] as const;

const lane = await laneToolchain();
const freeGiB = (() => {
  const stats = statfsSync(os.tmpdir());
  return (stats.bavail * stats.bsize) / 2 ** 30;
})();
// `test --offline` needs every dependency from system packages; build steps are counted as Ninja counts them, the
// notes depend on ccache, and the disk check passes from 8 GiB free.
const hasBuildTools =
  [
    '/usr/bin/cmake',
    '/usr/bin/ninja',
    '/usr/bin/ccache',
    '/usr/include/doctest/doctest.h',
    '/usr/lib/cmake/doctest/doctest.cmake',
    '/usr/include/nlohmann/json.hpp',
    '/usr/include/fmt/format.h',
  ].every(existsSync) && freeGiB >= 8;
const buildToolsReason =
  'skipped: needs cmake, ninja, ccache, a C++ compiler, doctest-dev, nlohmann-json3-dev, libfmt-dev and 8 GiB free in the temp folder ' +
  '(sudo apt-get install cmake ninja-build ccache g++ doctest-dev nlohmann-json3-dev libfmt-dev)';

function hasCMakeFormat(): boolean {
  try {
    return execFileSync('cmake-format', ['--version'], { encoding: 'utf8' }).trim() === '0.6.13';
  } catch {
    return false;
  }
}
const cmakeFormat = hasCMakeFormat();
const cmakeFormatReason = 'skipped: needs cmake-format 0.6.13 on PATH (pip install cmakelang==0.6.13)';

const doctorReady = process.platform === 'linux' && freeGiB >= 8;
const doctorReason = 'skipped: the doctor checks pinned here are those of Linux with 8 GiB free in the temp folder';
const libraries = (() => {
  try {
    return execFileSync('ldconfig', ['-p'], { encoding: 'utf8' });
  } catch {
    return '';
  }
})();
// BLAS/LAPACK headers and libraries, found where doctor looks for them.
const hasBlas =
  existsSync('/usr/include/lapacke.h') &&
  ['/usr/include/cblas.h', '/usr/include/x86_64-linux-gnu/cblas.h', '/usr/include/aarch64-linux-gnu/cblas.h'].some(
    existsSync,
  ) &&
  /lib(open)?blas\.so/.test(libraries) &&
  /liblapack\.so/.test(libraries);
// Every tool doctor looks for, found the way doctor finds it.
const machineReady =
  doctorReady &&
  hasBuildTools &&
  lane.toolchain !== null &&
  ['/usr/bin/ninja', '/usr/bin/ccache'].every(existsSync) &&
  hasBlas;
const machineReason =
  'skipped: needs every tool doctor checks (cmake, g++, ninja, ccache, BLAS/LAPACK with ldconfig on PATH, clang-19 with libc++-19, the offline packages) and 8 GiB free';

/** A test name that says why the test skips when `ready` is false (and says it on stderr too). */
function withReason(name: string, ready: boolean, reason: string): string {
  if (ready) return name;
  console.warn(`${name}: ${reason}`);
  return `${name} (${reason})`;
}

/** Only the exit codes of a table. */
const codes = (out: Record<string, Outcome>) =>
  Object.fromEntries(Object.entries(out).map(([name, o]) => [name, o.code]));

describe('every command', () => {
  let upstream: { dir: string; sha: string };
  let fresh: string;
  const names = (project: string): Names => ({
    paths: { project, upstream: upstream.dir },
    shas: { pinned: upstream.sha },
  });

  beforeAll(() => {
    upstream = makeUpstream();
    fresh = makeProject(upstream.sha);
  });

  it('exits 2 on an unknown option, an unknown command, no command, an unknown --skip name and CMake arguments before --', async () => {
    const rows: Record<string, string[]> = Object.fromEntries(COMMANDS.map((c) => [c, [c, '--no-such-option']]));
    rows['(none)'] = [];
    rows['no-such-command'] = ['no-such-command'];
    rows['verify --skip no-such-check'] = ['verify', '--skip', 'no-such-check'];
    rows['test -DX=ON'] = ['test', '-DX=ON'];
    const out = await runTable(rows, (args) => runJson(args, { cwd: fresh, names: names(fresh) }));
    // Only the code is pinned: what --json prints for a usage error is not part of the contract yet.
    expect(codes(out)).toMatchInlineSnapshot(`
      {
        "(none)": 2,
        "apply": 2,
        "check-metal": 2,
        "doctor": 2,
        "format": 2,
        "no-such-command": 2,
        "reset": 2,
        "status": 2,
        "test": 2,
        "test -DX=ON": 2,
        "verify": 2,
        "verify --skip no-such-check": 2,
      }
    `);
  });

  it('exits 7 with CONFIG_INVALID when the config is invalid, whatever the command', async () => {
    const broken = makeProject(upstream.sha);
    editConfig(broken, (c) => ((c['upstream'] as Record<string, unknown>)['commit'] = upstream.sha.slice(0, 12)));
    const rows = Object.fromEntries(COMMANDS.map((c) => [c, [c, '--mlx-repo', upstream.dir]]));
    expect(byOutcome(await runTable(rows, (args) => runJson(args, { cwd: broken, names: names(broken) }))))
      .toMatchInlineSnapshot(`
      {
        "apply, status, reset, test, doctor, format, check-metal, verify": {
          "code": 7,
          "json": {
            "error": {
              "code": "CONFIG_INVALID",
              "details": {
                "file": "<project>/mlx-storage-pr.config.json",
                "problems": [
                  "<text>",
                ],
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
      }
    `);
  });

  it('exits 7 on a config that is not JSON, an unknown template variable, a series naming a missing patch and a path out of the checkout', async () => {
    const project = (edit: (dir: string) => void) => {
      const dir = makeProject(upstream.sha);
      edit(dir);
      return dir;
    };
    const cases = {
      'not JSON': project((dir) => writeFileSync(path.join(dir, 'mlx-storage-pr.config.json'), '{ "upstream": ')),
      'unknown variable': project((dir) =>
        writeFileSync(path.join(dir, 'templates/mlx/backend/metal/storage_view.cpp'), '#include "{{header_file}}"\n'),
      ),
      'series names a missing patch': project((dir) =>
        writeFileSync(path.join(dir, 'patches/series'), '0001-metal-cmake.patch\n0009-missing.patch\n'),
      ),
      'path escapes': project((dir) =>
        editConfig(dir, (c) => ((c['variables'] as Record<string, unknown>)['header_path'] = '../../outside.h')),
      ),
    };
    const out: Record<string, Outcome> = {};
    for (const [name, dir] of Object.entries(cases))
      out[name] = await runJson(['apply', '--mlx-repo', upstream.dir], { cwd: dir, names: names(dir) });
    expect(out).toMatchInlineSnapshot(`
      {
        "not JSON": {
          "code": 7,
          "json": {
            "error": {
              "code": "CONFIG_INVALID",
              "details": {
                "column": 15,
                "file": "<project>/mlx-storage-pr.config.json",
                "line": 1,
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "path escapes": {
          "code": 7,
          "json": {
            "error": {
              "code": "PATH_ESCAPES_CHECKOUT",
              "details": {
                "origin": "variables.header_path (used in the path of templates/{{header_path}})",
                "path": "../../outside.h",
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "series names a missing patch": {
          "code": 7,
          "json": {
            "error": {
              "code": "SERIES_INVALID",
              "details": null,
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "unknown variable": {
          "code": 7,
          "json": {
            "error": {
              "code": "TEMPLATE_VARIABLE",
              "details": {
                "closest": "header_path",
                "file": "templates/mlx/backend/metal/storage_view.cpp",
                "line": 1,
                "variable": "header_file",
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
      }
    `);
  });

  it('before the first apply: nothing to show or reset, and the commands that need a checkout say so', async () => {
    const rows = {
      'apply --dry-run': ['apply', '--dry-run'],
      status: ['status'],
      reset: ['reset'],
      test: ['test', '--offline'],
      format: ['format'],
      verify: ['verify'],
    };
    // Only git on this PATH, so the result does not depend on the machine.
    const out = await runTable(rows, (args) =>
      runJson(args, { cwd: fresh, env: { PATH: gitOnlyPath() }, names: names(fresh) }),
    );
    expect(byOutcome(out)).toMatchInlineSnapshot(`
      {
        "apply --dry-run": {
          "code": 0,
          "json": {
            "branch": "mlx-storage-pr",
            "changed": [
              "docs/src/dev/extensions.rst",
              "mlx/backend/metal/CMakeLists.txt",
              "mlx/backend/metal/storage_view.cpp",
              "mlx/backend/metal/storage_view.h",
            ],
            "checkout": "<project>/.work/mlx",
            "command": "apply",
            "fetched": false,
            "files": [
              "mlx/backend/metal/storage_view.cpp",
              "mlx/backend/metal/storage_view.h",
            ],
            "head": null,
            "inputHash": "<hex16>",
            "localEdits": [],
            "ok": true,
            "patches": [
              "0001-metal-cmake.patch",
              "0002-docs.patch",
            ],
            "pinned": "<pinned>",
            "status": "would-clone",
          },
        },
        "reset": {
          "code": 0,
          "json": {
            "checkout": "<project>/.work/mlx",
            "command": "reset",
            "ok": true,
            "pinned": "<pinned>",
            "status": "no-checkout",
          },
        },
        "status": {
          "code": 0,
          "json": {
            "base": null,
            "branch": null,
            "checkout": "<project>/.work/mlx",
            "command": "status",
            "conflicts": [],
            "differs": [],
            "dirty": [],
            "head": null,
            "ok": true,
            "pinned": "<pinned>",
            "pinnedVersion": "0.32.2",
            "source": {
              "location": "https://github.com/ml-explore/mlx.git",
              "origin": "config",
            },
            "state": "no-checkout",
            "unmerged": [],
          },
        },
        "test, format": {
          "code": 1,
          "json": {
            "error": {
              "code": "NOT_APPLIED",
              "details": null,
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "verify": {
          "code": 1,
          "json": {
            "checks": [
              "format-cpp: not-checked, required, fix",
              "format-cmake: not-checked, required, fix",
              "metal-typecheck: not-checked, optional, fix",
              "docs: not-checked, required, fix",
              "pr-files: fail, required, fix",
              "pr-placeholders: pass, required",
              "pr-ai-disclosure: fail, required, fix",
              "linux-build: fail, required, fix",
              "tests-fail-without-implementation: not-checked, optional",
              "metal-twin: not-checked, optional",
              "mutants: not-checked, optional",
            ],
            "command": "verify",
            "notApplicable": [
              "tests-fail-without-implementation",
              "mutants",
            ],
            "ok": false,
            "ready": false,
            "skipped": [],
          },
        },
      }
    `);
    expect(existsSync(path.join(fresh, '.work', 'mlx'))).toBe(false);
  });

  it('a workdir whose mlx/ is not a git checkout: exit 5 with CHECKOUT_INVALID (verify: checks not passing, 1), and the folder is left alone', async () => {
    const project = makeProject(upstream.sha);
    mkdirSync(path.join(project, '.work', 'mlx'), { recursive: true });
    writeFileSync(path.join(project, '.work', 'mlx', 'notes.txt'), 'mine\n');
    const rows = {
      apply: ['apply'],
      status: ['status'],
      reset: ['reset'],
      test: ['test', '--offline'],
      format: ['format'],
      verify: ['verify'],
    };
    const out = await runTable(rows, (args) =>
      runJson([...args, '--mlx-repo', upstream.dir], {
        cwd: project,
        env: { PATH: gitOnlyPath() },
        names: names(project),
      }),
    );
    expect(byOutcome(out)).toMatchInlineSnapshot(`
      {
        "apply, status, reset, test, format": {
          "code": 5,
          "json": {
            "error": {
              "code": "CHECKOUT_INVALID",
              "details": null,
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "verify": {
          "code": 1,
          "json": {
            "checks": [
              "format-cpp: not-checked, required, fix",
              "format-cmake: not-checked, required, fix",
              "metal-typecheck: not-checked, optional, fix",
              "docs: not-checked, required, fix",
              "pr-files: fail, required, fix",
              "pr-placeholders: pass, required",
              "pr-ai-disclosure: fail, required, fix",
              "linux-build: fail, required, fix",
              "tests-fail-without-implementation: not-checked, optional",
              "metal-twin: not-checked, optional",
              "mutants: not-checked, optional",
            ],
            "command": "verify",
            "notApplicable": [
              "tests-fail-without-implementation",
              "mutants",
            ],
            "ok": false,
            "ready": false,
            "skipped": [],
          },
        },
      }
    `);
    expect(readFileSync(path.join(project, '.work', 'mlx', 'notes.txt'), 'utf8')).toBe('mine\n');
  });
});

describe("apply, status and reset through a checkout's life", () => {
  let upstream: { dir: string; sha: string };
  let project: string;
  let checkout: string;
  const run = (...args: string[]) =>
    runJson([...args, '--mlx-repo', upstream.dir], {
      cwd: project,
      names: { paths: { project, upstream: upstream.dir }, shas: { pinned: upstream.sha } },
    });
  const writeProject = (file: string, text: string) => writeFileSync(path.join(project, file), text);
  const writeCheckout = (file: string, text: string) => writeFileSync(path.join(checkout, file), text);

  beforeAll(() => {
    upstream = makeUpstream();
    project = makeProject(upstream.sha);
    checkout = path.join(project, '.work', 'mlx');
  });
  // Each case starts from the state the case before it leaves (the stage of that name), made once.
  const folders = () => [project];
  const fresh = stage(folders, () => undefined);
  const applied = stage(folders, async () => {
    await fresh();
    return run('apply');
  });
  const editedTemplate = stage(folders, async () => {
    await applied();
    writeProject('templates/mlx/backend/metal/storage_view.cpp', '// v2\n');
    const head = git(checkout, 'rev-parse', 'HEAD');
    const out = { status: await run('status'), dryRun: await run('apply', '--dry-run') };
    return { out, head, after: git(checkout, 'rev-parse', 'HEAD') };
  });
  const dirty = stage(folders, async () => {
    await editedTemplate();
    writeCheckout('mlx/backend/metal/storage_view.cpp', '// my edit\n');
    return { apply: await run('apply'), status: await run('status') };
  });
  const forced = stage(folders, async () => {
    await dirty();
    return run('apply', '--force');
  });
  const foreignHead = stage(folders, async () => {
    await forced();
    writeCheckout('mine.txt', 'x\n');
    git(checkout, 'add', 'mine.txt');
    git(checkout, 'commit', '--quiet', '-m', 'my commit');
    writeProject('templates/mlx/backend/metal/storage_view.cpp', '// v3\n');
    return { apply: await run('apply'), status: await run('status') };
  });
  const forcedForeign = stage(folders, async () => {
    await foreignHead();
    return run('apply', '--force');
  });
  const reset = stage(folders, async () => {
    await forcedForeign();
    writeCheckout('mlx/backend/metal/storage_view.h', '// edited\n');
    return { reset: await run('reset'), again: await run('reset'), status: await run('status') };
  });

  it('apply: fetches, applies and reports what it changed (0, applied)', async () => {
    expect(await applied()).toMatchInlineSnapshot(`
      {
        "code": 0,
        "json": {
          "branch": "mlx-storage-pr",
          "changed": [
            "docs/src/dev/extensions.rst",
            "mlx/backend/metal/CMakeLists.txt",
            "mlx/backend/metal/storage_view.cpp",
            "mlx/backend/metal/storage_view.h",
          ],
          "checkout": "<project>/.work/mlx",
          "command": "apply",
          "fetched": true,
          "files": [
            "mlx/backend/metal/storage_view.cpp",
            "mlx/backend/metal/storage_view.h",
          ],
          "head": "<sha1>",
          "inputHash": "<hex16>",
          "localEdits": [],
          "ok": true,
          "patches": [
            "0001-metal-cmake.patch",
            "0002-docs.patch",
          ],
          "pinned": "<pinned>",
          "status": "applied",
        },
      }
    `);
  });

  it('apply again: nothing to do (0, already-applied); status: applied', async () => {
    await applied();
    expect({ apply: await run('apply'), status: await run('status') }).toMatchInlineSnapshot(`
      {
        "apply": {
          "code": 0,
          "json": {
            "branch": "mlx-storage-pr",
            "changed": [],
            "checkout": "<project>/.work/mlx",
            "command": "apply",
            "fetched": false,
            "files": [
              "mlx/backend/metal/storage_view.cpp",
              "mlx/backend/metal/storage_view.h",
            ],
            "head": "<sha1>",
            "inputHash": "<hex16>",
            "localEdits": [],
            "ok": true,
            "patches": [
              "0001-metal-cmake.patch",
              "0002-docs.patch",
            ],
            "pinned": "<pinned>",
            "status": "already-applied",
          },
        },
        "status": {
          "code": 0,
          "json": {
            "base": "<pinned>",
            "branch": "mlx-storage-pr",
            "checkout": "<project>/.work/mlx",
            "command": "status",
            "conflicts": [],
            "differs": [],
            "dirty": [],
            "head": "<sha1>",
            "ok": true,
            "pinned": "<pinned>",
            "pinnedVersion": "0.32.2",
            "source": {
              "location": "<upstream>",
              "origin": "option",
            },
            "state": "applied",
            "unmerged": [],
          },
        },
      }
    `);
  });

  it('after a template edit: status says outdated, apply --dry-run lists the change and writes nothing (0, would-apply)', async () => {
    const { out, head, after } = await editedTemplate();
    expect(out).toMatchInlineSnapshot(`
      {
        "dryRun": {
          "code": 0,
          "json": {
            "branch": "mlx-storage-pr",
            "changed": [
              "mlx/backend/metal/storage_view.cpp",
            ],
            "checkout": "<project>/.work/mlx",
            "command": "apply",
            "fetched": false,
            "files": [
              "mlx/backend/metal/storage_view.cpp",
              "mlx/backend/metal/storage_view.h",
            ],
            "head": "<sha1>",
            "inputHash": "<hex16>",
            "localEdits": [],
            "ok": true,
            "patches": [
              "0001-metal-cmake.patch",
              "0002-docs.patch",
            ],
            "pinned": "<pinned>",
            "status": "would-apply",
          },
        },
        "status": {
          "code": 0,
          "json": {
            "base": "<pinned>",
            "branch": "mlx-storage-pr",
            "checkout": "<project>/.work/mlx",
            "command": "status",
            "conflicts": [],
            "differs": [
              "mlx/backend/metal/storage_view.cpp",
            ],
            "dirty": [],
            "head": "<sha1>",
            "ok": true,
            "pinned": "<pinned>",
            "pinnedVersion": "0.32.2",
            "source": {
              "location": "<upstream>",
              "origin": "option",
            },
            "state": "outdated",
            "unmerged": [],
          },
        },
      }
    `);
    expect(after).toBe(head);
  });

  it('apply refuses uncommitted edits in a file it would change (3, DIRTY_CHECKOUT); status lists them', async () => {
    expect(await dirty()).toMatchInlineSnapshot(`
      {
        "apply": {
          "code": 3,
          "json": {
            "error": {
              "code": "DIRTY_CHECKOUT",
              "details": {
                "dirty": [
                  "mlx/backend/metal/storage_view.cpp",
                ],
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "status": {
          "code": 0,
          "json": {
            "base": "<pinned>",
            "branch": "mlx-storage-pr",
            "checkout": "<project>/.work/mlx",
            "command": "status",
            "conflicts": [],
            "differs": [
              "mlx/backend/metal/storage_view.cpp",
            ],
            "dirty": [
              {
                "code": " M",
                "path": "mlx/backend/metal/storage_view.cpp",
              },
            ],
            "head": "<sha1>",
            "ok": true,
            "pinned": "<pinned>",
            "pinnedVersion": "0.32.2",
            "source": {
              "location": "<upstream>",
              "origin": "option",
            },
            "state": "outdated",
            "unmerged": [],
          },
        },
      }
    `);
  });

  it('apply --force saves the edits and applies (0, applied, saved)', async () => {
    expect(await forced()).toMatchInlineSnapshot(`
      {
        "code": 0,
        "json": {
          "branch": "mlx-storage-pr",
          "changed": [
            "mlx/backend/metal/storage_view.cpp",
          ],
          "checkout": "<project>/.work/mlx",
          "command": "apply",
          "fetched": false,
          "files": [
            "mlx/backend/metal/storage_view.cpp",
            "mlx/backend/metal/storage_view.h",
          ],
          "head": "<sha1>",
          "inputHash": "<hex16>",
          "localEdits": [],
          "ok": true,
          "patches": [
            "0001-metal-cmake.patch",
            "0002-docs.patch",
          ],
          "pinned": "<pinned>",
          "saved": {
            "files": [
              "mlx/backend/metal/storage_view.cpp",
            ],
            "refs": [
              "refs/mlx-storage-pr/backup/<time>-stash",
            ],
            "restore": [
              "git -C <project>/.work/mlx stash apply <sha2>",
            ],
            "stash": "<sha2>",
            "untracked": [],
          },
          "status": "applied",
        },
      }
    `);
  });

  it('apply refuses a HEAD that is neither pinned nor applied (3, FOREIGN_HEAD); status says foreign-head', async () => {
    expect(await foreignHead()).toMatchInlineSnapshot(`
      {
        "apply": {
          "code": 3,
          "json": {
            "error": {
              "code": "FOREIGN_HEAD",
              "details": {
                "head": "<sha1>",
                "pinned": "<pinned>",
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "status": {
          "code": 0,
          "json": {
            "base": "<sha2>",
            "branch": "mlx-storage-pr",
            "checkout": "<project>/.work/mlx",
            "command": "status",
            "conflicts": [],
            "differs": [
              "mlx/backend/metal/storage_view.cpp",
            ],
            "dirty": [],
            "head": "<sha1>",
            "ok": true,
            "pinned": "<pinned>",
            "pinnedVersion": "0.32.2",
            "source": {
              "location": "<upstream>",
              "origin": "option",
            },
            "state": "foreign-head",
            "unmerged": [],
          },
        },
      }
    `);
  });

  it('apply --force keeps the foreign HEAD in a backup ref (0, applied, saved.headBackup)', async () => {
    expect(await forcedForeign()).toMatchInlineSnapshot(`
      {
        "code": 0,
        "json": {
          "branch": "mlx-storage-pr",
          "changed": [
            "mine.txt",
            "mlx/backend/metal/storage_view.cpp",
          ],
          "checkout": "<project>/.work/mlx",
          "command": "apply",
          "fetched": false,
          "files": [
            "mlx/backend/metal/storage_view.cpp",
            "mlx/backend/metal/storage_view.h",
          ],
          "head": "<sha1>",
          "inputHash": "<hex16>",
          "localEdits": [],
          "ok": true,
          "patches": [
            "0001-metal-cmake.patch",
            "0002-docs.patch",
          ],
          "pinned": "<pinned>",
          "saved": {
            "files": [],
            "headBackup": "<sha2>",
            "refs": [
              "refs/mlx-storage-pr/backup/<time>-head",
            ],
            "restore": [
              "git -C <project>/.work/mlx checkout -b my-work <sha2>",
            ],
            "untracked": [],
          },
          "status": "applied",
        },
      }
    `);
  });

  it('reset saves edits and returns to the pinned commit (0, reset); again: already-clean; status: not-applied', async () => {
    expect(await reset()).toMatchInlineSnapshot(`
      {
        "again": {
          "code": 0,
          "json": {
            "checkout": "<project>/.work/mlx",
            "command": "reset",
            "ok": true,
            "pinned": "<pinned>",
            "status": "already-clean",
          },
        },
        "reset": {
          "code": 0,
          "json": {
            "checkout": "<project>/.work/mlx",
            "command": "reset",
            "ok": true,
            "pinned": "<pinned>",
            "saved": {
              "files": [
                "mlx/backend/metal/storage_view.h",
              ],
              "refs": [
                "refs/mlx-storage-pr/backup/<time>-stash",
              ],
              "restore": [
                "git -C <project>/.work/mlx checkout --detach <sha1>^1",
                "git -C <project>/.work/mlx stash apply <sha1>",
              ],
              "stash": "<sha1>",
              "untracked": [],
            },
            "status": "reset",
          },
        },
        "status": {
          "code": 0,
          "json": {
            "base": "<pinned>",
            "branch": null,
            "checkout": "<project>/.work/mlx",
            "command": "status",
            "conflicts": [],
            "differs": [
              "docs/src/dev/extensions.rst",
              "mlx/backend/metal/CMakeLists.txt",
              "mlx/backend/metal/storage_view.cpp",
              "mlx/backend/metal/storage_view.h",
            ],
            "dirty": [],
            "head": "<pinned>",
            "ok": true,
            "pinned": "<pinned>",
            "pinnedVersion": "0.32.2",
            "source": {
              "location": "<upstream>",
              "origin": "option",
            },
            "state": "not-applied",
            "unmerged": [],
          },
        },
      }
    `);
  });

  it('a patch that does not apply: apply exits 4 with PATCH_CONFLICT and the conflicts; status lists them', async () => {
    await reset();
    const patch = path.join(project, 'patches', '0002-docs.patch');
    const original = readFileSync(patch, 'utf8');
    writeFileSync(patch, original.replace(' Text about operations.', ' Text about something else.'));
    const before = git(checkout, 'rev-parse', 'HEAD');
    expect({ apply: await run('apply'), '3way': await run('apply', '--3way'), status: await run('status') })
      .toMatchInlineSnapshot(`
        {
          "3way": {
            "code": 4,
            "json": {
              "error": {
                "code": "PATCH_CONFLICT",
                "details": {
                  "conflicts": [
                    {
                      "detail": "<text>",
                      "file": "docs/src/dev/extensions.rst",
                      "hunk": 1,
                      "hunkHeader": "@@ -6,6 +6,11 @@",
                      "patch": "0002-docs.patch",
                      "reason": "patch_changed",
                    },
                  ],
                },
                "hint": "<text>",
                "message": "<text>",
              },
              "ok": false,
            },
          },
          "apply": {
            "code": 4,
            "json": {
              "error": {
                "code": "PATCH_CONFLICT",
                "details": {
                  "conflicts": [
                    {
                      "detail": "<text>",
                      "file": "docs/src/dev/extensions.rst",
                      "hunk": 1,
                      "hunkHeader": "@@ -6,6 +6,11 @@",
                      "patch": "0002-docs.patch",
                      "reason": "patch_changed",
                    },
                  ],
                },
                "hint": "<text>",
                "message": "<text>",
              },
              "ok": false,
            },
          },
          "status": {
            "code": 0,
            "json": {
              "base": "<pinned>",
              "branch": null,
              "checkout": "<project>/.work/mlx",
              "command": "status",
              "conflicts": [
                {
                  "detail": "<text>",
                  "file": "docs/src/dev/extensions.rst",
                  "hunk": 1,
                  "hunkHeader": "@@ -6,6 +6,11 @@",
                  "patch": "0002-docs.patch",
                  "reason": "patch_changed",
                },
              ],
              "differs": [],
              "dirty": [],
              "head": "<pinned>",
              "ok": true,
              "pinned": "<pinned>",
              "pinnedVersion": "0.32.2",
              "source": {
                "location": "<upstream>",
                "origin": "option",
              },
              "state": "not-applied",
              "unmerged": [],
            },
          },
        }
      `);
    expect(git(checkout, 'rev-parse', 'HEAD')).toBe(before);
    writeFileSync(patch, original);
  });
});

describe('apply and status when the MLX source or the pin changes', () => {
  let upstream: { dir: string; sha: string };
  let project: string;
  let moved: string;
  const names = (): Names => ({ paths: { project, upstream: upstream.dir }, shas: { pinned: upstream.sha, moved } });
  const run = (...args: string[]) => runJson(args, { cwd: project, names: names() });

  beforeAll(() => {
    upstream = makeUpstream();
    project = makeProject(upstream.sha);
    moved = '';
  });

  it('exits 5 when the source does not exist (SOURCE_UNREACHABLE) or lacks the pinned commit (COMMIT_NOT_FOUND)', async () => {
    const absent = '0123456789abcdef0123456789abcdef01234567';
    const other = makeProject(absent);
    const out = {
      missing: await run('apply', '--mlx-repo', path.join(upstream.dir, 'no-such-folder')),
      'no commit': await runJson(['apply', '--mlx-repo', upstream.dir], {
        cwd: other,
        names: { paths: { project: other, upstream: upstream.dir }, shas: { absent } },
      }),
    };
    expect(out).toMatchInlineSnapshot(`
      {
        "missing": {
          "code": 5,
          "json": {
            "error": {
              "code": "SOURCE_UNREACHABLE",
              "details": null,
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "no commit": {
          "code": 5,
          "json": {
            "error": {
              "code": "COMMIT_NOT_FOUND",
              "details": {
                "commit": "<absent>",
                "source": "<upstream>",
                "stderr": "<text>",
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
      }
    `);
    expect(existsSync(path.join(project, '.work', 'mlx'))).toBe(false);
  });

  it('after the pin moves: status says the commit is missing; apply fetches it and exits 4 (upstream_changed); --3way merges (0)', async () => {
    expect((await run('apply', '--mlx-repo', upstream.dir)).code).toBe(0);
    const cmake = path.join(upstream.dir, 'mlx/backend/metal/CMakeLists.txt');
    writeFileSync(cmake, readFileSync(cmake, 'utf8').replace('/allocator.cpp', '/allocators.cpp'));
    git(upstream.dir, 'commit', '--quiet', '-am', 'rename allocator');
    moved = git(upstream.dir, 'rev-parse', 'HEAD').trim();
    editConfig(project, (c) => ((c['upstream'] as Record<string, unknown>)['commit'] = moved));
    const out = {
      'status before': await run('status'),
      apply: await run('apply', '--mlx-repo', upstream.dir),
      'status after fetch': await run('status'),
      '3way': await run('apply', '--3way', '--mlx-repo', upstream.dir),
      'status after 3way': await run('status'),
    };
    expect(out).toMatchInlineSnapshot(`
      {
        "3way": {
          "code": 0,
          "json": {
            "branch": "mlx-storage-pr",
            "changed": [
              "mlx/backend/metal/CMakeLists.txt",
            ],
            "checkout": "<project>/.work/mlx",
            "command": "apply",
            "fetched": false,
            "files": [
              "mlx/backend/metal/storage_view.cpp",
              "mlx/backend/metal/storage_view.h",
            ],
            "head": "<sha1>",
            "inputHash": "<hex16>",
            "localEdits": [],
            "ok": true,
            "patches": [
              "0001-metal-cmake.patch",
              "0002-docs.patch",
            ],
            "pinned": "<moved>",
            "status": "applied",
          },
        },
        "apply": {
          "code": 4,
          "json": {
            "error": {
              "code": "PATCH_CONFLICT",
              "details": {
                "conflicts": [
                  {
                    "detail": "<text>",
                    "file": "mlx/backend/metal/CMakeLists.txt",
                    "hunk": 1,
                    "hunkHeader": "@@ -2,4 +2,5 @@",
                    "patch": "0001-metal-cmake.patch",
                    "reason": "upstream_changed",
                  },
                ],
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "status after 3way": {
          "code": 0,
          "json": {
            "base": "<moved>",
            "branch": "mlx-storage-pr",
            "checkout": "<project>/.work/mlx",
            "command": "status",
            "conflicts": [
              {
                "detail": "<text>",
                "file": "mlx/backend/metal/CMakeLists.txt",
                "hunk": 1,
                "hunkHeader": "@@ -2,4 +2,5 @@",
                "patch": "0001-metal-cmake.patch",
                "reason": "upstream_changed",
              },
            ],
            "differs": [],
            "dirty": [],
            "head": "<sha1>",
            "ok": true,
            "pinned": "<moved>",
            "pinnedVersion": "0.32.2",
            "source": {
              "location": "<upstream>",
              "origin": "apply",
            },
            "state": "applied",
            "unmerged": [],
          },
        },
        "status after fetch": {
          "code": 0,
          "json": {
            "base": "<pinned>",
            "branch": "mlx-storage-pr",
            "checkout": "<project>/.work/mlx",
            "command": "status",
            "conflicts": [
              {
                "detail": "<text>",
                "file": "mlx/backend/metal/CMakeLists.txt",
                "hunk": 1,
                "hunkHeader": "@@ -2,4 +2,5 @@",
                "patch": "0001-metal-cmake.patch",
                "reason": "upstream_changed",
              },
            ],
            "differs": [],
            "dirty": [],
            "head": "<sha1>",
            "ok": true,
            "pinned": "<moved>",
            "pinnedVersion": "0.32.2",
            "source": {
              "location": "<upstream>",
              "origin": "apply",
            },
            "state": "outdated",
            "unmerged": [],
          },
        },
        "status before": {
          "code": 0,
          "json": {
            "base": "<pinned>",
            "branch": "mlx-storage-pr",
            "checkout": "<project>/.work/mlx",
            "command": "status",
            "conflicts": [],
            "differs": [],
            "dirty": [],
            "head": "<sha1>",
            "ok": true,
            "pinned": "<moved>",
            "pinnedVersion": "0.32.2",
            "source": {
              "location": "<upstream>",
              "origin": "apply",
            },
            "state": "missing-pinned-commit",
            "unmerged": [],
          },
        },
      }
    `);
  });
});

describe('the workdir lock', () => {
  let upstream: { dir: string; sha: string };
  let project: string;

  beforeAll(async () => {
    upstream = makeUpstream();
    project = makeProject(upstream.sha);
    expect((await runJson(['apply', '--mlx-repo', upstream.dir], { cwd: project })).code).toBe(0);
  });

  it('apply (even --dry-run) and reset exit 6 with LOCKED while a live process holds the workdir; status still reads (0)', async () => {
    const lock = path.join(project, '.work', '.lock');
    // This test's own process is alive, so the lock is held.
    writeFileSync(lock, JSON.stringify({ pid: process.pid, command: 'test' }));
    const rows = {
      apply: ['apply'],
      'apply --force': ['apply', '--force'],
      'apply --dry-run': ['apply', '--dry-run'],
      reset: ['reset'],
      status: ['status'],
    };
    const out = await runTable(rows, (args) =>
      runJson(args, {
        cwd: project,
        names: { paths: { project, upstream: upstream.dir }, shas: { pinned: upstream.sha }, vary: ['pid'] },
      }),
    );
    rmSync(lock);
    expect(byOutcome(out)).toMatchInlineSnapshot(`
      {
        "apply, apply --force, apply --dry-run, reset": {
          "code": 6,
          "json": {
            "error": {
              "code": "LOCKED",
              "details": {
                "lock": "<project>/.work/.lock",
                "pid": "<number>",
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "status": {
          "code": 0,
          "json": {
            "base": "<pinned>",
            "branch": "mlx-storage-pr",
            "checkout": "<project>/.work/mlx",
            "command": "status",
            "conflicts": [],
            "differs": [],
            "dirty": [],
            "head": "<sha1>",
            "ok": true,
            "pinned": "<pinned>",
            "pinnedVersion": "0.32.2",
            "source": {
              "location": "<upstream>",
              "origin": "apply",
            },
            "state": "applied",
            "unmerged": [],
          },
        },
      }
    `);
  });
});

describe('pr: the branch on the fork', () => {
  let w: World;
  const names = (): Names => ({
    paths: { project: w.project, upstream: w.upstream.dir, fork: w.fork },
    shas: { pinned: w.upstream.sha },
  });
  const run = (...args: string[]) => runJson(['pr', ...args], { cwd: w.project, env: w.env, names: names() });
  const push = (...args: string[]) => run('--push', '--fork', w.fork, ...args);

  beforeAll(async () => {
    w = await makeWorld();
  });
  // Each case starts from the state the case before it leaves (the stage of that name), made once.
  const folders = () => [w.project, w.fork, w.upstream.dir];
  const world = stage(folders, () => undefined);
  const created = stage(folders, async () => {
    await world();
    return { created: await push(...ONLY_PR_TEXT), unchanged: await push('--skip-checks') };
  });
  const refused = stage(folders, async () => {
    await created();
    const out: Record<string, Outcome> = {};
    out['upstream'] = await run('--push', '--fork', 'git@github.com:ml-explore/mlx.git', '--skip-checks');
    writePrText(w.project, 'TODO(user): subject\n');
    out['placeholders'] = await push('--skip-checks');
    writePrText(w.project, MESSAGE, '## Proposed changes\n\nA view.\n');
    out['failing check'] = await push(...ONLY_PR_TEXT);
    writePrText(w.project);
    const file = path.join(w.checkout, 'README.md');
    writeFileSync(file, 'mine\n');
    out['edits in the checkout'] = await push('--skip-checks');
    rmSync(file);
    git(w.fork, 'branch', 'taken', w.upstream.sha);
    out['never pushed by the tool'] = await push('--branch', 'taken', '--skip-checks');
    return out;
  });

  it('usage errors (2): no --push, no --fork, an unknown option; before apply (1, NOT_APPLIED); an invalid config (7)', async () => {
    await world();
    const fresh = makeProject(w.upstream.sha);
    const broken = makeProject(w.upstream.sha);
    editConfig(broken, (c) => ((c['upstream'] as Record<string, unknown>)['commit'] = 'abc'));
    const out = {
      'no --push': await run('--fork', w.fork),
      'no --fork': await run('--push'),
      '--no-such-option': await run('--push', '--no-such-option'),
      'before apply': await runJson(['pr', '--push', '--fork', w.fork], { cwd: fresh, env: w.env, names: names() }),
      'invalid config': await runJson(['pr', '--push', '--fork', w.fork], { cwd: broken, env: w.env, names: names() }),
    };
    expect(codes(out)).toMatchInlineSnapshot(`
      {
        "--no-such-option": 2,
        "before apply": 1,
        "invalid config": 7,
        "no --fork": 2,
        "no --push": 2,
      }
    `);
    expect(
      byOutcome({ 'no --push': out['no --push'], 'no --fork': out['no --fork'], 'before apply': out['before apply'] }),
    ).toMatchInlineSnapshot(`
      {
        "before apply": {
          "code": 1,
          "json": {
            "error": {
              "code": "NOT_APPLIED",
              "details": null,
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "no --push, no --fork": {
          "code": 2,
          "json": {
            "error": {
              "code": "USAGE",
              "details": null,
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
      }
    `);
  });

  it('created, then unchanged (0)', async () => {
    expect(await created()).toMatchInlineSnapshot(`
      {
        "created": {
          "code": 0,
          "json": {
            "author": "Ada Lovelace <ada@example.invalid>",
            "backup": null,
            "branch": "mlx-storage-pr",
            "checks": [
              "pr-files: pass, required",
              "pr-placeholders: pass, required",
              "pr-ai-disclosure: pass, required",
            ],
            "command": "pr",
            "commit": "<sha1>",
            "committer": "Ada Lovelace <ada@example.invalid>",
            "compareUrl": null,
            "leaseRef": "refs/mlx-storage-pr/pushed/mlx-storage-pr",
            "ok": true,
            "previous": null,
            "pullRequest": null,
            "remote": "<fork>",
            "skipped": [
              "format-cpp",
              "format-cmake",
              "metal-typecheck",
              "docs",
              "linux-build",
              "tests-fail-without-implementation",
              "metal-twin",
              "mutants",
              "sanitizer",
            ],
            "status": "created",
            "subject": "Add a read-only Metal storage view",
            "url": "<fork>",
          },
        },
        "unchanged": {
          "code": 0,
          "json": {
            "author": "Ada Lovelace <ada@example.invalid>",
            "backup": null,
            "branch": "mlx-storage-pr",
            "checks": null,
            "command": "pr",
            "commit": "<sha1>",
            "committer": "Ada Lovelace <ada@example.invalid>",
            "compareUrl": null,
            "leaseRef": "refs/mlx-storage-pr/pushed/mlx-storage-pr",
            "ok": true,
            "previous": "<sha1>",
            "pullRequest": null,
            "remote": "<fork>",
            "skipped": [],
            "status": "unchanged",
            "subject": "Add a read-only Metal storage view",
            "url": "<fork>",
          },
        },
      }
    `);
  });

  it('refused before pushing: the upstream repository (2), placeholders (1), edits in the checkout (3), a failing check (1), a branch never pushed by the tool (3)', async () => {
    expect(await refused()).toMatchInlineSnapshot(`
      {
        "edits in the checkout": {
          "code": 3,
          "json": {
            "error": {
              "code": "DIRTY_CHECKOUT",
              "details": {
                "dirty": [
                  "README.md",
                ],
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "failing check": {
          "code": 1,
          "json": {
            "error": {
              "code": "CHECK_FAILED",
              "details": {
                "checks": [
                  "pr-files: pass, required",
                  "pr-placeholders: pass, required",
                  "pr-ai-disclosure: fail, required, fix",
                ],
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "never pushed by the tool": {
          "code": 3,
          "json": {
            "error": {
              "code": "BRANCH_NOT_PUSHED_BY_TOOL",
              "details": {
                "branch": "taken",
                "commits": [],
                "fork": "<fork>",
                "lease": null,
                "tip": "<pinned>",
                "total": 0,
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "placeholders": {
          "code": 1,
          "json": {
            "error": {
              "code": "PR_TEXT_INCOMPLETE",
              "details": {
                "file": "pr/commit-message.txt",
                "placeholders": [
                  {
                    "line": 1,
                    "path": "pr/commit-message.txt",
                    "text": "TODO(user): subject",
                  },
                ],
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "upstream": {
          "code": 2,
          "json": {
            "error": {
              "code": "PUSH_TARGET_UPSTREAM",
              "details": {
                "fork": null,
                "upstream": "https://github.com/ml-explore/mlx.git",
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
      }
    `);
  });

  it('a commit pushed by hand: refused (3) naming it; --force (0) keeps it under a backup ref', async () => {
    await refused();
    const file = path.join(w.project, 'templates/mlx/backend/metal/storage_view.cpp');
    writeFileSync(file, `${readFileSync(file, 'utf8')}// v2\n`);
    expect((await runJson(['apply'], { cwd: w.project, env: w.env })).code).toBe(0);
    const hand = pushByHand(w.fork, 'A change made by hand');
    const withHand = (...args: string[]) =>
      runJson(['pr', '--push', '--fork', w.fork, ...args], {
        cwd: w.project,
        env: w.env,
        names: { ...names(), shas: { pinned: w.upstream.sha, hand } },
      });
    expect({
      refused: await withHand('--skip-checks'),
      forced: await withHand('--skip-checks', '--force'),
    }).toMatchInlineSnapshot(`
      {
        "forced": {
          "code": 0,
          "json": {
            "author": "Ada Lovelace <ada@example.invalid>",
            "backup": {
              "commit": "<hand>",
              "ref": "refs/mlx-storage-pr/backup/mlx-storage-pr/<time>",
              "restore": [
                "git fetch <fork> refs/mlx-storage-pr/backup/mlx-storage-pr/<time>",
                "git push --force <fork> FETCH_HEAD:refs/heads/mlx-storage-pr",
              ],
            },
            "branch": "mlx-storage-pr",
            "checks": null,
            "command": "pr",
            "commit": "<sha1>",
            "committer": "Ada Lovelace <ada@example.invalid>",
            "compareUrl": null,
            "leaseRef": "refs/mlx-storage-pr/pushed/mlx-storage-pr",
            "ok": true,
            "previous": "<hand>",
            "pullRequest": null,
            "remote": "<fork>",
            "skipped": [],
            "status": "updated",
            "subject": "Add a read-only Metal storage view",
            "url": "<fork>",
          },
        },
        "refused": {
          "code": 3,
          "json": {
            "error": {
              "code": "BRANCH_MOVED",
              "details": {
                "branch": "mlx-storage-pr",
                "commits": [
                  {
                    "author": "Fixture <fixture@example.invalid>",
                    "commit": "<hand>",
                    "subject": "A change made by hand",
                  },
                ],
                "fork": "<fork>",
                "lease": "<sha1>",
                "tip": "<hand>",
                "total": 1,
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
      }
    `);
  });
});

// The test fixture's series gains an implementation and a test of it (addMulImplementation, MUL_TEST),
// so that verify's "new tests fail without the implementation" can pass.
describe.skipIf(!hasBuildTools)(
  withReason('test and verify on the CMake + doctest fixture', hasBuildTools, buildToolsReason),
  () => {
    let upstream: { dir: string; sha: string };
    let project: string;
    let env: Record<string, string>;
    const names = (): Names => ({
      paths: { project, upstream: upstream.dir, cache: env['MLX_STORAGE_PR_CACHE'] as string },
      shas: { pinned: upstream.sha },
      vary: ['buildSeconds', 'buildSteps', 'pid', 'errors', 'compiler.version'],
    });
    const run = (...args: string[]) => runJson(args, { cwd: project, env, names: names() });
    const write = (file: string, text: string) => {
      mkdirSync(path.dirname(path.join(project, file)), { recursive: true });
      writeFileSync(path.join(project, file), text);
    };

    beforeAll(async () => {
      // With MLX's .clang-format and pre-commit pins, so that the formatting checks of verify can pass.
      upstream = makeUpstream('cmake-project/upstream', (dir) => {
        for (const file of ['.clang-format', '.pre-commit-config.yaml'])
          copyFileSync(path.join(FIXTURES, 'format', 'upstream', file), path.join(dir, file));
      });
      project = makeProject(upstream.sha, 'cmake-project/project');
      env = { MLX_STORAGE_PR_CACHE: tempDir('msp-cache-'), CCACHE_DIR: tempDir('msp-ccache-'), MLX_REPO: upstream.dir };
      addMulImplementation(project);
      write('templates/tests/new_tests.cpp', MUL_TEST);
      expect((await run('apply')).code).toBe(0);
    });
    // Each case starts from the state it names (a stage), made once: applied, built, or built with a failing test.
    const folders = () => [project, env['MLX_STORAGE_PR_CACHE'] as string, env['CCACHE_DIR'] as string];
    const applied = stage(folders, () => undefined);
    const built = stage(folders, async () => {
      await applied();
      return run('test', '--offline');
    });
    const failing = stage(folders, async () => {
      await built();
      write('templates/tests/new_tests.cpp', MUL_TEST.replace('42', '43'));
      expect((await run('apply')).code).toBe(0);
      return run('test', '--offline');
    });

    it('test without --offline: the download hosts cannot be reached (1, DOWNLOADS_UNREACHABLE, before CMake runs)', async () => {
      await applied();
      expect(await run('test')).toMatchInlineSnapshot(`
      {
        "code": 1,
        "json": {
          "error": {
            "code": "DOWNLOADS_UNREACHABLE",
            "details": {
              "buildDir": "<project>/.work/build-release-<key>",
              "hosts": [
                {
                  "file": "tests/CMakeLists.txt",
                  "reason": "ECONNREFUSED",
                  "target": "127.0.0.1:9",
                  "url": "http://127.0.0.1:9/doctest.git",
                },
              ],
            },
            "hint": "<text>",
            "message": "<text>",
          },
          "ok": false,
        },
      }
    `);
    });

    it('test --offline: builds, runs and classifies every case against the baseline (0)', async () => {
      expect(await built()).toMatchInlineSnapshot(`
        {
          "code": 0,
          "json": {
            "baseline": {
              "buildDir": "<project>/.work/baseline/build-release-<key>",
              "buildSeconds": "<number>",
              "cached": false,
              "summary": {
                "assertions": {
                  "failed": 1,
                  "passed": 1,
                },
                "byClass": {
                  "fixed": 0,
                  "new-failure": 0,
                  "new-test-failed": 0,
                  "new-test-passed": 0,
                  "passed": 1,
                  "pre-existing-failure": 1,
                  "skipped": 0,
                },
                "cases": 2,
                "failed": 1,
                "passed": 1,
                "skipped": 0,
              },
              "used": true,
            },
            "buildDir": "<project>/.work/build-release-<key>",
            "cases": [
              {
                "baseline": "passed",
                "classification": "passed",
                "failures": [],
                "name": "test add",
                "status": "passed",
              },
              {
                "baseline": "failed",
                "classification": "pre-existing-failure",
                "failures": [
                  {
                    "file": "../mlx/tests/lib_tests.cpp",
                    "line": 9,
                    "message": "<text>",
                    "origin": null,
                  },
                ],
                "name": "test known failure",
                "status": "failed",
              },
              {
                "baseline": null,
                "classification": "new-test-passed",
                "failures": [],
                "name": "test mul",
                "status": "passed",
              },
            ],
            "command": "test",
            "compiler": {
              "chosenBy": "default",
              "command": null,
              "version": "<string>",
            },
            "dependencies": [
              {
                "dep": "json",
                "source": "system nlohmann-json3-dev (/usr/include/nlohmann)",
              },
              {
                "dep": "doctest",
                "source": "system doctest-dev (/usr/include/doctest)",
              },
              {
                "dep": "fmt",
                "source": "system libfmt-dev (USE_SYSTEM_FMT=ON)",
              },
              {
                "dep": "gguflib",
                "source": "none: GGUF support disabled (MLX_BUILD_GGUF=OFF)",
              },
            ],
            "localEdits": [],
            "logs": {
              "build": "<project>/.work/build-release-<key>/mlx-storage-pr-build.log",
              "configure": "<project>/.work/build-release-<key>/mlx-storage-pr-configure.log",
              "test": "<project>/.work/build-release-<key>/mlx-storage-pr-test.log",
            },
            "notes": [
              "<text>",
            ],
            "ok": true,
            "patched": {
              "buildSeconds": "<number>",
              "buildSteps": "<number>",
              "complete": true,
              "configured": true,
              "crashes": [],
            },
            "sanitizer": null,
            "suiteRan": true,
            "summary": {
              "assertions": {
                "failed": 1,
                "passed": 2,
              },
              "byClass": {
                "fixed": 0,
                "new-failure": 0,
                "new-test-failed": 0,
                "new-test-passed": 1,
                "passed": 1,
                "pre-existing-failure": 1,
                "skipped": 0,
              },
              "cases": 3,
              "failed": 1,
              "passed": 2,
              "skipped": 0,
            },
            "twin": null,
          },
        }
      `);
    });

    it('test --tests runs a subset (0); a filter that matches nothing is a usage error (2, USAGE, close names); --no-baseline counts the known failure as new (8)', async () => {
      await built();
      const out = {
        '--tests': await run('test', '--offline', '--tests', '*mul*'),
        '--tests (no match)': await run('test', '--offline', '--tests', 'no such case*'),
        '--no-baseline': await run('test', '--offline', '--no-baseline'),
      };
      expect(out).toMatchInlineSnapshot(`
        {
          "--no-baseline": {
            "code": 8,
            "json": {
              "baseline": {
                "buildDir": null,
                "buildSeconds": "<number>",
                "cached": false,
                "summary": null,
                "used": false,
              },
              "buildDir": "<project>/.work/build-release-<key>",
              "cases": [
                {
                  "baseline": null,
                  "classification": "passed",
                  "failures": [],
                  "name": "test add",
                  "status": "passed",
                },
                {
                  "baseline": null,
                  "classification": "new-failure",
                  "failures": [
                    {
                      "file": "../mlx/tests/lib_tests.cpp",
                      "line": 9,
                      "message": "<text>",
                      "origin": null,
                    },
                  ],
                  "name": "test known failure",
                  "status": "failed",
                },
                {
                  "baseline": null,
                  "classification": "passed",
                  "failures": [],
                  "name": "test mul",
                  "status": "passed",
                },
              ],
              "command": "test",
              "compiler": {
                "chosenBy": "default",
                "command": null,
                "version": "<string>",
              },
              "dependencies": [
                {
                  "dep": "json",
                  "source": "system nlohmann-json3-dev (/usr/include/nlohmann)",
                },
                {
                  "dep": "doctest",
                  "source": "system doctest-dev (/usr/include/doctest)",
                },
                {
                  "dep": "fmt",
                  "source": "system libfmt-dev (USE_SYSTEM_FMT=ON)",
                },
                {
                  "dep": "gguflib",
                  "source": "none: GGUF support disabled (MLX_BUILD_GGUF=OFF)",
                },
              ],
              "localEdits": [],
              "logs": {
                "build": "<project>/.work/build-release-<key>/mlx-storage-pr-build.log",
                "configure": "<project>/.work/build-release-<key>/mlx-storage-pr-configure.log",
                "test": "<project>/.work/build-release-<key>/mlx-storage-pr-test.log",
              },
              "notes": [
                "<text>",
              ],
              "ok": false,
              "patched": {
                "buildSeconds": "<number>",
                "buildSteps": "<number>",
                "complete": true,
                "configured": false,
                "crashes": [],
              },
              "sanitizer": null,
              "suiteRan": true,
              "summary": {
                "assertions": {
                  "failed": 1,
                  "passed": 2,
                },
                "byClass": {
                  "fixed": 0,
                  "new-failure": 1,
                  "new-test-failed": 0,
                  "new-test-passed": 0,
                  "passed": 2,
                  "pre-existing-failure": 0,
                  "skipped": 0,
                },
                "cases": 3,
                "failed": 1,
                "passed": 2,
                "skipped": 0,
              },
              "twin": null,
            },
          },
          "--tests": {
            "code": 0,
            "json": {
              "baseline": {
                "buildDir": "<project>/.work/baseline/build-release-<key>",
                "buildSeconds": "<number>",
                "cached": true,
                "summary": {
                  "assertions": {
                    "failed": 1,
                    "passed": 1,
                  },
                  "byClass": {
                    "fixed": 0,
                    "new-failure": 0,
                    "new-test-failed": 0,
                    "new-test-passed": 0,
                    "passed": 1,
                    "pre-existing-failure": 1,
                    "skipped": 0,
                  },
                  "cases": 2,
                  "failed": 1,
                  "passed": 1,
                  "skipped": 0,
                },
                "used": true,
              },
              "buildDir": "<project>/.work/build-release-<key>",
              "cases": [
                {
                  "baseline": null,
                  "classification": "new-test-passed",
                  "failures": [],
                  "name": "test mul",
                  "status": "passed",
                },
              ],
              "command": "test",
              "compiler": {
                "chosenBy": "default",
                "command": null,
                "version": "<string>",
              },
              "dependencies": [
                {
                  "dep": "json",
                  "source": "system nlohmann-json3-dev (/usr/include/nlohmann)",
                },
                {
                  "dep": "doctest",
                  "source": "system doctest-dev (/usr/include/doctest)",
                },
                {
                  "dep": "fmt",
                  "source": "system libfmt-dev (USE_SYSTEM_FMT=ON)",
                },
                {
                  "dep": "gguflib",
                  "source": "none: GGUF support disabled (MLX_BUILD_GGUF=OFF)",
                },
              ],
              "localEdits": [],
              "logs": {
                "build": "<project>/.work/build-release-<key>/mlx-storage-pr-build.log",
                "configure": "<project>/.work/build-release-<key>/mlx-storage-pr-configure.log",
                "test": "<project>/.work/build-release-<key>/mlx-storage-pr-test.log",
              },
              "notes": [
                "<text>",
              ],
              "ok": true,
              "patched": {
                "buildSeconds": "<number>",
                "buildSteps": "<number>",
                "complete": true,
                "configured": false,
                "crashes": [],
              },
              "sanitizer": null,
              "suiteRan": true,
              "summary": {
                "assertions": {
                  "failed": 0,
                  "passed": 1,
                },
                "byClass": {
                  "fixed": 0,
                  "new-failure": 0,
                  "new-test-failed": 0,
                  "new-test-passed": 1,
                  "passed": 0,
                  "pre-existing-failure": 0,
                  "skipped": 0,
                },
                "cases": 1,
                "failed": 0,
                "passed": 1,
                "skipped": 0,
              },
              "twin": null,
            },
          },
          "--tests (no match)": {
            "code": 2,
            "json": {
              "error": {
                "code": "USAGE",
                "details": {
                  "close": [
                    "test known failure",
                  ],
                  "filter": "no such case*",
                },
                "hint": "<text>",
                "message": "<text>",
              },
              "ok": false,
            },
          },
        }
      `);
    });

    it('test while another run holds the workdir (6, LOCKED)', async () => {
      await built();
      const lock = path.join(project, '.work', '.lock');
      writeFileSync(lock, JSON.stringify({ pid: process.pid, command: 'test' }));
      const out = await run('test', '--offline');
      rmSync(lock);
      expect(out).toMatchInlineSnapshot(`
      {
        "code": 6,
        "json": {
          "error": {
            "code": "LOCKED",
            "details": {
              "lock": "<project>/.work/.lock",
              "pid": "<number>",
            },
            "hint": "<text>",
            "message": "<text>",
          },
          "ok": false,
        },
      }
    `);
    });

    it('test with no build tools on PATH (9, TOOL_MISSING)', async () => {
      await built();
      expect(
        await spawnJson(['test', '--offline'], { cwd: project, env: { ...env, PATH: gitOnlyPath() }, names: names() }),
      ).toMatchInlineSnapshot(`
        {
          "code": 9,
          "json": {
            "error": {
              "code": "TOOL_MISSING",
              "details": {
                "checks": [
                  "cmake: fail, required, fix",
                  "compiler: fail, required, fix",
                  "ninja: warn, optional, fix",
                  "ccache: warn, optional, fix",
                  "disk: pass, required, fix",
                  "twin: warn, optional, fix",
                ],
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        }
      `);
    });

    it.skipIf(!cmakeFormat)(
      withReason('verify --offline --skip pr-text: every check passes (0, ready)', cmakeFormat, cmakeFormatReason),
      async () => {
        await built();
        expect(await run('verify', '--offline', '--skip', 'pr-text')).toMatchInlineSnapshot(`
          {
            "code": 0,
            "json": {
              "checks": [
                "format-cpp: pass, required",
                "format-cmake: pass, required",
                "metal-typecheck: not-checked, optional, fix",
                "docs: pass, required",
                "linux-build: pass, required, fix",
                "tests-fail-without-implementation: pass, required",
                "metal-twin: not-checked, optional",
                "mutants: not-checked, optional",
              ],
              "command": "verify",
              "notApplicable": [
                "mutants",
              ],
              "ok": true,
              "ready": true,
              "skipped": [
                "pr-files",
                "pr-placeholders",
                "pr-ai-disclosure",
              ],
            },
          }
        `);
      },
    );

    it('a failing new test: test exits 8 (new-test-failed)', async () => {
      expect(await failing()).toMatchInlineSnapshot(`
        {
          "code": 8,
          "json": {
            "baseline": {
              "buildDir": "<project>/.work/baseline/build-release-<key>",
              "buildSeconds": "<number>",
              "cached": true,
              "summary": {
                "assertions": {
                  "failed": 1,
                  "passed": 1,
                },
                "byClass": {
                  "fixed": 0,
                  "new-failure": 0,
                  "new-test-failed": 0,
                  "new-test-passed": 0,
                  "passed": 1,
                  "pre-existing-failure": 1,
                  "skipped": 0,
                },
                "cases": 2,
                "failed": 1,
                "passed": 1,
                "skipped": 0,
              },
              "used": true,
            },
            "buildDir": "<project>/.work/build-release-<key>",
            "cases": [
              {
                "baseline": "passed",
                "classification": "passed",
                "failures": [],
                "name": "test add",
                "status": "passed",
              },
              {
                "baseline": "failed",
                "classification": "pre-existing-failure",
                "failures": [
                  {
                    "file": "../mlx/tests/lib_tests.cpp",
                    "line": 9,
                    "message": "<text>",
                    "origin": null,
                  },
                ],
                "name": "test known failure",
                "status": "failed",
              },
              {
                "baseline": null,
                "classification": "new-test-failed",
                "failures": [
                  {
                    "file": "../mlx/tests/new_tests.cpp",
                    "line": 5,
                    "message": "<text>",
                    "origin": "templates/tests/new_tests.cpp:5",
                  },
                ],
                "name": "test mul",
                "status": "failed",
              },
            ],
            "command": "test",
            "compiler": {
              "chosenBy": "default",
              "command": null,
              "version": "<string>",
            },
            "dependencies": [
              {
                "dep": "json",
                "source": "system nlohmann-json3-dev (/usr/include/nlohmann)",
              },
              {
                "dep": "doctest",
                "source": "system doctest-dev (/usr/include/doctest)",
              },
              {
                "dep": "fmt",
                "source": "system libfmt-dev (USE_SYSTEM_FMT=ON)",
              },
              {
                "dep": "gguflib",
                "source": "none: GGUF support disabled (MLX_BUILD_GGUF=OFF)",
              },
            ],
            "localEdits": [],
            "logs": {
              "build": "<project>/.work/build-release-<key>/mlx-storage-pr-build.log",
              "configure": "<project>/.work/build-release-<key>/mlx-storage-pr-configure.log",
              "test": "<project>/.work/build-release-<key>/mlx-storage-pr-test.log",
            },
            "notes": [
              "<text>",
            ],
            "ok": false,
            "patched": {
              "buildSeconds": "<number>",
              "buildSteps": "<number>",
              "complete": true,
              "configured": false,
              "crashes": [],
            },
            "sanitizer": null,
            "suiteRan": true,
            "summary": {
              "assertions": {
                "failed": 2,
                "passed": 1,
              },
              "byClass": {
                "fixed": 0,
                "new-failure": 0,
                "new-test-failed": 1,
                "new-test-passed": 0,
                "passed": 1,
                "pre-existing-failure": 1,
                "skipped": 0,
              },
              "cases": 3,
              "failed": 2,
              "passed": 1,
              "skipped": 0,
            },
            "twin": null,
          },
        }
      `);
    });

    it.skipIf(!cmakeFormat)(
      withReason('a failing new test: verify is not ready (1, linux-build fails)', cmakeFormat, cmakeFormatReason),
      async () => {
        await failing();
        expect(await run('verify', '--offline', '--skip', 'pr-text')).toMatchInlineSnapshot(`
          {
            "code": 1,
            "json": {
              "checks": [
                "format-cpp: pass, required",
                "format-cmake: pass, required",
                "metal-typecheck: not-checked, optional, fix",
                "docs: pass, required",
                "linux-build: fail, required, fix",
                "tests-fail-without-implementation: fail, required, fix",
                "metal-twin: not-checked, optional",
                "mutants: not-checked, optional",
              ],
              "command": "verify",
              "notApplicable": [
                "mutants",
              ],
              "ok": false,
              "ready": false,
              "skipped": [
                "pr-files",
                "pr-placeholders",
                "pr-ai-disclosure",
              ],
            },
          }
        `);
      },
    );

    it('a compile error: test exits 1 (BUILD_FAILED)', async () => {
      await failing();
      write('templates/tests/new_tests.cpp', `${MUL_TEST}\nint broken( {\n`);
      expect((await run('apply')).code).toBe(0);
      expect(await run('test', '--offline')).toMatchInlineSnapshot(`
      {
        "code": 1,
        "json": {
          "error": {
            "code": "BUILD_FAILED",
            "details": {
              "errors": "<array>",
              "log": "<project>/.work/build-release-<key>/mlx-storage-pr-build.log",
            },
            "hint": "<text>",
            "message": "<text>",
          },
          "ok": false,
        },
      }
    `);
    });

    // verify takes --upstream-ci as pr does: its build items then build as MLX's Linux CI does.
    it("verify --upstream-ci: the build items build as MLX's Linux CI (0); with --sanitize it is a usage error (2, USAGE)", async () => {
      await built();
      const skip = ['--skip', 'format', 'metal-typecheck', 'docs', 'pr-text', 'mutants'];
      expect({
        'verify --upstream-ci': await run('verify', '--offline', '--upstream-ci', ...skip),
        'with --sanitize': await run('verify', '--offline', '--upstream-ci', '--sanitize', 'asan', ...skip),
      }).toMatchInlineSnapshot(`
        {
          "verify --upstream-ci": {
            "code": 0,
            "json": {
              "checks": [
                "linux-build: pass, required, fix",
                "tests-fail-without-implementation: pass, required",
                "metal-twin: not-checked, optional",
              ],
              "command": "verify",
              "notApplicable": [],
              "ok": true,
              "ready": true,
              "skipped": [
                "format-cpp",
                "format-cmake",
                "metal-typecheck",
                "docs",
                "pr-files",
                "pr-placeholders",
                "pr-ai-disclosure",
                "mutants",
              ],
            },
          },
          "with --sanitize": {
            "code": 2,
            "json": {
              "error": {
                "code": "USAGE",
                "details": null,
                "hint": "<text>",
                "message": "<text>",
              },
              "ok": false,
            },
          },
        }
      `);
      // The build item's tree is the Debug one MLX's Linux CI builds, not the Release one of `test`.
      expect(readdirSync(path.join(project, '.work')).filter((f) => /^build-debug-/.test(f))).toHaveLength(1);
    });
  },
);

// The twin also needs binutils' nm and objcopy (it weakens the stub's symbols in a copy of the library).
const hasTwinTools = hasBuildTools && ['/usr/bin/nm', '/usr/bin/objcopy'].every(existsSync);
const twinToolsReason = `${buildToolsReason}, and binutils (sudo apt-get install binutils)`;

describe.skipIf(!hasTwinTools)(
  withReason('test --metal-twin on the twin fixture', hasTwinTools, twinToolsReason),
  () => {
    let upstream: { dir: string; sha: string };
    let project: string;
    let env: Record<string, string>;
    const names = (): Names => ({
      paths: { project, upstream: upstream.dir, cache: env['MLX_STORAGE_PR_CACHE'] as string },
      shas: { pinned: upstream.sha },
      vary: ['buildSeconds', 'buildSteps', 'pid', 'errors', 'compiler.version'],
    });
    const run = (...args: string[]) => runJson(args, { cwd: project, env, names: names() });

    beforeAll(async () => {
      upstream = makeUpstream('twin/upstream');
      project = makeProject(upstream.sha, 'twin/project');
      env = { MLX_STORAGE_PR_CACHE: tempDir('msp-cache-'), CCACHE_DIR: tempDir('msp-ccache-'), MLX_REPO: upstream.dir };
      expect((await run('apply')).code).toBe(0);
    });

    it('test --offline --metal-twin: the suite against the baseline, and the Metal-only cases on the twin (0)', async () => {
      expect(await run('test', '--offline', '--metal-twin')).toMatchInlineSnapshot(`
        {
          "code": 0,
          "json": {
            "baseline": {
              "buildDir": "<project>/.work/baseline/build-release-<key>",
              "buildSeconds": "<number>",
              "cached": false,
              "summary": {
                "assertions": {
                  "failed": 0,
                  "passed": 1,
                },
                "byClass": {
                  "fixed": 0,
                  "new-failure": 0,
                  "new-test-failed": 0,
                  "new-test-passed": 0,
                  "passed": 1,
                  "pre-existing-failure": 0,
                  "skipped": 0,
                },
                "cases": 1,
                "failed": 0,
                "passed": 1,
                "skipped": 0,
              },
              "used": true,
            },
            "buildDir": "<project>/.work/build-release-<key>",
            "cases": [
              {
                "baseline": "passed",
                "classification": "passed",
                "failures": [],
                "name": "test buffer bytes follow the length",
                "status": "passed",
              },
              {
                "baseline": null,
                "classification": "new-test-passed",
                "failures": [],
                "name": "test stub length",
                "status": "passed",
              },
            ],
            "command": "test",
            "compiler": {
              "chosenBy": "default",
              "command": null,
              "version": "<string>",
            },
            "dependencies": [
              {
                "dep": "json",
                "source": "system nlohmann-json3-dev (/usr/include/nlohmann)",
              },
              {
                "dep": "doctest",
                "source": "system doctest-dev (/usr/include/doctest)",
              },
              {
                "dep": "fmt",
                "source": "system libfmt-dev (USE_SYSTEM_FMT=ON)",
              },
              {
                "dep": "gguflib",
                "source": "none: GGUF support disabled (MLX_BUILD_GGUF=OFF)",
              },
            ],
            "localEdits": [],
            "logs": {
              "build": "<project>/.work/build-release-<key>/mlx-storage-pr-build.log",
              "configure": "<project>/.work/build-release-<key>/mlx-storage-pr-configure.log",
              "test": "<project>/.work/build-release-<key>/mlx-storage-pr-test.log",
            },
            "notes": [
              "<text>",
            ],
            "ok": true,
            "patched": {
              "buildSeconds": "<number>",
              "buildSteps": "<number>",
              "complete": true,
              "configured": true,
              "crashes": [],
            },
            "sanitizer": null,
            "suiteRan": true,
            "summary": {
              "assertions": {
                "failed": 0,
                "passed": 2,
              },
              "byClass": {
                "fixed": 0,
                "new-failure": 0,
                "new-test-failed": 0,
                "new-test-passed": 1,
                "passed": 1,
                "pre-existing-failure": 0,
                "skipped": 0,
              },
              "cases": 2,
              "failed": 0,
              "passed": 2,
              "skipped": 0,
            },
            "twin": {
              "alone": null,
              "binary": "<project>/.work/build-release-<key>/mlx-storage-pr-twin/metal-twin-tests",
              "buildSeconds": "<number>",
              "buildSteps": "<number>",
              "cannotShow": "<text>",
              "cases": [
                {
                  "classification": "new-test-passed",
                  "failures": [],
                  "name": "test twin length",
                  "status": "passed",
                },
                {
                  "classification": "new-test-passed",
                  "failures": [],
                  "name": "test twin contents",
                  "status": "passed",
                },
              ],
              "complete": true,
              "crashes": [],
              "logs": {
                "build": "<project>/.work/build-release-<key>/mlx-storage-pr-twin-build.log",
                "test": "<project>/.work/build-release-<key>/mlx-storage-pr-twin-test.log",
              },
              "shows": "<text>",
              "summary": {
                "assertions": {
                  "failed": 0,
                  "passed": 2,
                },
                "byClass": {
                  "fixed": 0,
                  "new-failure": 0,
                  "new-test-failed": 0,
                  "new-test-passed": 2,
                  "passed": 0,
                  "pre-existing-failure": 0,
                  "skipped": 0,
                },
                "cases": 2,
                "failed": 0,
                "passed": 2,
                "skipped": 0,
              },
              "weakened": [
                {
                  "member": "no_metal.cpp.o",
                  "symbol": "_Z13buffer_lengthPv",
                },
                {
                  "member": "no_metal.cpp.o",
                  "symbol": "_Z15buffer_contentsPv",
                },
              ],
            },
          },
        }
      `);
    });

    it('test --metal-twin -- -DBUILD_SHARED_LIBS=ON: refused (2, USAGE)', async () => {
      expect(await run('test', '--offline', '--metal-twin', '--', '-DBUILD_SHARED_LIBS=ON')).toMatchInlineSnapshot(`
        {
          "code": 2,
          "json": {
            "error": {
              "code": "USAGE",
              "details": null,
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        }
      `);
    });
  },
);

describe.skipIf(!cmakeFormat)(
  withReason('format and verify on the mis-formatted fixture', cmakeFormat, cmakeFormatReason),
  () => {
    let upstream: { dir: string; sha: string };
    let project: string;
    // Only git on this PATH, in the cases that use it: sphinx-build, clang and cmake-format are missing.
    let bare: { PATH: string };
    const run = (args: string[], env: Record<string, string | undefined> = {}) =>
      runJson(args, {
        cwd: project,
        env,
        names: { paths: { project, upstream: upstream.dir }, shas: { pinned: upstream.sha }, vary: ['diff', 'pid'] },
      });

    beforeAll(async () => {
      upstream = makeFormatUpstream();
      project = makeFormatProject(upstream.sha);
      bare = { PATH: gitOnlyPath() };
      expect((await run(['apply', '--mlx-repo', upstream.dir])).code).toBe(0);
    });
    // Each case starts from the state it names (a stage), made once: applied, or after format --fix.
    const applied = stage(
      () => [project],
      () => undefined,
    );
    const fixed = stage(
      () => [project],
      async () => {
        await applied();
        return {
          '--fix': await run(['format', '--fix']),
          again: await run(['format']),
          'no cmake-format': await run(['format'], bare),
        };
      },
    );

    it('format finds files to fix (1, CHECK_FAILED); without cmake-format the CMake file is not-checked', async () => {
      await applied();
      expect({ format: await run(['format']), 'no cmake-format': await run(['format'], bare) }).toMatchInlineSnapshot(`
      {
        "format": {
          "code": 1,
          "json": {
            "black": {
              "pinned": "26.1.0",
              "reason": "no Python files in the PR",
              "version": null,
            },
            "checkout": "<project>/.work/mlx",
            "clangFormat": {
              "pinned": "21.1.8",
              "reason": null,
              "version": "21.1.8",
            },
            "clean": false,
            "cmakeFormat": {
              "pinned": "0.6.13",
              "reason": null,
              "version": "0.6.13",
            },
            "code": "CHECK_FAILED",
            "command": "format",
            "files": [
              {
                "detail": null,
                "diff": "<string>",
                "origin": "templates/mlx/backend/metal/storage_view.cpp",
                "path": "mlx/backend/metal/storage_view.cpp",
                "status": "differs",
                "tool": "clang-format",
              },
              {
                "detail": null,
                "diff": "<string>",
                "origin": "templates/{{header_path}}",
                "path": "mlx/backend/metal/storage_view.h",
                "status": "differs",
                "tool": "clang-format",
              },
              {
                "detail": "<text>",
                "diff": "<string>",
                "origin": "patches/0001-metal-header.patch",
                "path": "mlx/backend/metal/metal.h",
                "status": "differs",
                "tool": "clang-format",
              },
              {
                "detail": null,
                "diff": "<string>",
                "origin": "patches/0002-metal-cmake.patch",
                "path": "mlx/backend/metal/CMakeLists.txt",
                "status": "differs",
                "tool": "cmake-format",
              },
            ],
            "fixed": [],
            "hooks": [
              {
                "files": [],
                "id": "check-yaml",
                "rev": "6.0.0",
                "run": false,
              },
              {
                "files": [
                  "mlx/backend/metal/metal.h",
                  "mlx/backend/metal/storage_view.cpp",
                  "mlx/backend/metal/storage_view.h",
                ],
                "id": "clang-format",
                "rev": "21.1.8",
                "run": true,
              },
              {
                "files": [],
                "id": "black",
                "rev": "26.1.0",
                "run": true,
              },
              {
                "files": [],
                "id": "isort",
                "rev": "7.0.0",
                "run": true,
              },
              {
                "files": [
                  "mlx/backend/metal/CMakeLists.txt",
                ],
                "id": "cmake-format",
                "rev": "0.6.13",
                "run": true,
              },
            ],
            "isort": {
              "pinned": "7.0.0",
              "reason": "no Python files in the PR",
              "version": null,
            },
            "notChecked": 0,
            "ok": false,
            "problems": [],
          },
        },
        "no cmake-format": {
          "code": 1,
          "json": {
            "black": {
              "pinned": "26.1.0",
              "reason": "no Python files in the PR",
              "version": null,
            },
            "checkout": "<project>/.work/mlx",
            "clangFormat": {
              "pinned": "21.1.8",
              "reason": null,
              "version": "21.1.8",
            },
            "clean": false,
            "cmakeFormat": {
              "pinned": "0.6.13",
              "reason": "<text>",
              "version": null,
            },
            "code": "CHECK_FAILED",
            "command": "format",
            "files": [
              {
                "detail": null,
                "diff": "<string>",
                "origin": "templates/mlx/backend/metal/storage_view.cpp",
                "path": "mlx/backend/metal/storage_view.cpp",
                "status": "differs",
                "tool": "clang-format",
              },
              {
                "detail": null,
                "diff": "<string>",
                "origin": "templates/{{header_path}}",
                "path": "mlx/backend/metal/storage_view.h",
                "status": "differs",
                "tool": "clang-format",
              },
              {
                "detail": "<text>",
                "diff": "<string>",
                "origin": "patches/0001-metal-header.patch",
                "path": "mlx/backend/metal/metal.h",
                "status": "differs",
                "tool": "clang-format",
              },
              {
                "detail": "<text>",
                "diff": "<null>",
                "origin": "patches/0002-metal-cmake.patch",
                "path": "mlx/backend/metal/CMakeLists.txt",
                "status": "not-checked",
                "tool": "cmake-format",
              },
            ],
            "fixed": [],
            "hooks": [
              {
                "files": [],
                "id": "check-yaml",
                "rev": "6.0.0",
                "run": false,
              },
              {
                "files": [
                  "mlx/backend/metal/metal.h",
                  "mlx/backend/metal/storage_view.cpp",
                  "mlx/backend/metal/storage_view.h",
                ],
                "id": "clang-format",
                "rev": "21.1.8",
                "run": true,
              },
              {
                "files": [],
                "id": "black",
                "rev": "26.1.0",
                "run": true,
              },
              {
                "files": [],
                "id": "isort",
                "rev": "7.0.0",
                "run": true,
              },
              {
                "files": [
                  "mlx/backend/metal/CMakeLists.txt",
                ],
                "id": "cmake-format",
                "rev": "0.6.13",
                "run": true,
              },
            ],
            "isort": {
              "pinned": "7.0.0",
              "reason": "no Python files in the PR",
              "version": null,
            },
            "notChecked": 1,
            "ok": false,
            "problems": [],
          },
        },
      }
    `);
    });

    it('verify reports every check and is not ready (1); --require-metal makes the Metal type-check required', async () => {
      await applied();
      expect({ verify: await run(['verify'], bare), '--require-metal': await run(['verify', '--require-metal'], bare) })
        .toMatchInlineSnapshot(`
          {
            "--require-metal": {
              "code": 1,
              "json": {
                "checks": [
                  "format-cpp: fail, required, fix",
                  "format-cmake: not-checked, required, fix",
                  "metal-typecheck: not-checked, required, fix",
                  "docs: pass, required",
                  "pr-files: fail, required, fix",
                  "pr-placeholders: pass, required",
                  "pr-ai-disclosure: fail, required, fix",
                  "linux-build: fail, required, fix",
                  "tests-fail-without-implementation: not-checked, optional",
                  "metal-twin: not-checked, optional",
                  "mutants: not-checked, optional",
                ],
                "command": "verify",
                "notApplicable": [
                  "tests-fail-without-implementation",
                  "mutants",
                ],
                "ok": false,
                "ready": false,
                "skipped": [],
              },
            },
            "verify": {
              "code": 1,
              "json": {
                "checks": [
                  "format-cpp: fail, required, fix",
                  "format-cmake: not-checked, required, fix",
                  "metal-typecheck: not-checked, optional, fix",
                  "docs: pass, required",
                  "pr-files: fail, required, fix",
                  "pr-placeholders: pass, required",
                  "pr-ai-disclosure: fail, required, fix",
                  "linux-build: fail, required, fix",
                  "tests-fail-without-implementation: not-checked, optional",
                  "metal-twin: not-checked, optional",
                  "mutants: not-checked, optional",
                ],
                "command": "verify",
                "notApplicable": [
                  "tests-fail-without-implementation",
                  "mutants",
                ],
                "ok": false,
                "ready": false,
                "skipped": [],
              },
            },
          }
        `);
    });

    it('format --fix writes the fixes (0); then format is clean (0), and still exits 0 when cmake-format is missing', async () => {
      expect(await fixed()).toMatchInlineSnapshot(`
      {
        "--fix": {
          "code": 0,
          "json": {
            "black": {
              "pinned": "26.1.0",
              "reason": "no Python files in the PR",
              "version": null,
            },
            "checkout": "<project>/.work/mlx",
            "clangFormat": {
              "pinned": "21.1.8",
              "reason": null,
              "version": "21.1.8",
            },
            "clean": true,
            "cmakeFormat": {
              "pinned": "0.6.13",
              "reason": null,
              "version": "0.6.13",
            },
            "command": "format",
            "files": [
              {
                "detail": null,
                "diff": "<null>",
                "origin": "templates/mlx/backend/metal/storage_view.cpp",
                "path": "mlx/backend/metal/storage_view.cpp",
                "status": "clean",
                "tool": "clang-format",
              },
              {
                "detail": null,
                "diff": "<null>",
                "origin": "templates/{{header_path}}",
                "path": "mlx/backend/metal/storage_view.h",
                "status": "clean",
                "tool": "clang-format",
              },
              {
                "detail": "<text>",
                "diff": "<null>",
                "origin": "patches/0001-metal-header.patch",
                "path": "mlx/backend/metal/metal.h",
                "status": "clean",
                "tool": "clang-format",
              },
              {
                "detail": null,
                "diff": "<null>",
                "origin": "patches/0002-metal-cmake.patch",
                "path": "mlx/backend/metal/CMakeLists.txt",
                "status": "clean",
                "tool": "cmake-format",
              },
            ],
            "fixed": [
              "templates/mlx/backend/metal/storage_view.cpp",
              "templates/{{header_path}}",
              "patches/0001-metal-header.patch",
              "patches/0002-metal-cmake.patch",
            ],
            "hooks": [
              {
                "files": [],
                "id": "check-yaml",
                "rev": "6.0.0",
                "run": false,
              },
              {
                "files": [
                  "mlx/backend/metal/metal.h",
                  "mlx/backend/metal/storage_view.cpp",
                  "mlx/backend/metal/storage_view.h",
                ],
                "id": "clang-format",
                "rev": "21.1.8",
                "run": true,
              },
              {
                "files": [],
                "id": "black",
                "rev": "26.1.0",
                "run": true,
              },
              {
                "files": [],
                "id": "isort",
                "rev": "7.0.0",
                "run": true,
              },
              {
                "files": [
                  "mlx/backend/metal/CMakeLists.txt",
                ],
                "id": "cmake-format",
                "rev": "0.6.13",
                "run": true,
              },
            ],
            "isort": {
              "pinned": "7.0.0",
              "reason": "no Python files in the PR",
              "version": null,
            },
            "notChecked": 0,
            "ok": true,
            "problems": [],
          },
        },
        "again": {
          "code": 0,
          "json": {
            "black": {
              "pinned": "26.1.0",
              "reason": "no Python files in the PR",
              "version": null,
            },
            "checkout": "<project>/.work/mlx",
            "clangFormat": {
              "pinned": "21.1.8",
              "reason": null,
              "version": "21.1.8",
            },
            "clean": true,
            "cmakeFormat": {
              "pinned": "0.6.13",
              "reason": null,
              "version": "0.6.13",
            },
            "command": "format",
            "files": [
              {
                "detail": null,
                "diff": "<null>",
                "origin": "templates/mlx/backend/metal/storage_view.cpp",
                "path": "mlx/backend/metal/storage_view.cpp",
                "status": "clean",
                "tool": "clang-format",
              },
              {
                "detail": null,
                "diff": "<null>",
                "origin": "templates/{{header_path}}",
                "path": "mlx/backend/metal/storage_view.h",
                "status": "clean",
                "tool": "clang-format",
              },
              {
                "detail": "<text>",
                "diff": "<null>",
                "origin": "patches/0001-metal-header.patch",
                "path": "mlx/backend/metal/metal.h",
                "status": "clean",
                "tool": "clang-format",
              },
              {
                "detail": null,
                "diff": "<null>",
                "origin": "patches/0002-metal-cmake.patch",
                "path": "mlx/backend/metal/CMakeLists.txt",
                "status": "clean",
                "tool": "cmake-format",
              },
            ],
            "fixed": [],
            "hooks": [
              {
                "files": [],
                "id": "check-yaml",
                "rev": "6.0.0",
                "run": false,
              },
              {
                "files": [
                  "mlx/backend/metal/metal.h",
                  "mlx/backend/metal/storage_view.cpp",
                  "mlx/backend/metal/storage_view.h",
                ],
                "id": "clang-format",
                "rev": "21.1.8",
                "run": true,
              },
              {
                "files": [],
                "id": "black",
                "rev": "26.1.0",
                "run": true,
              },
              {
                "files": [],
                "id": "isort",
                "rev": "7.0.0",
                "run": true,
              },
              {
                "files": [
                  "mlx/backend/metal/CMakeLists.txt",
                ],
                "id": "cmake-format",
                "rev": "0.6.13",
                "run": true,
              },
            ],
            "isort": {
              "pinned": "7.0.0",
              "reason": "no Python files in the PR",
              "version": null,
            },
            "notChecked": 0,
            "ok": true,
            "problems": [],
          },
        },
        "no cmake-format": {
          "code": 0,
          "json": {
            "black": {
              "pinned": "26.1.0",
              "reason": "no Python files in the PR",
              "version": null,
            },
            "checkout": "<project>/.work/mlx",
            "clangFormat": {
              "pinned": "21.1.8",
              "reason": null,
              "version": "21.1.8",
            },
            "clean": false,
            "cmakeFormat": {
              "pinned": "0.6.13",
              "reason": "<text>",
              "version": null,
            },
            "command": "format",
            "files": [
              {
                "detail": null,
                "diff": "<null>",
                "origin": "templates/mlx/backend/metal/storage_view.cpp",
                "path": "mlx/backend/metal/storage_view.cpp",
                "status": "clean",
                "tool": "clang-format",
              },
              {
                "detail": null,
                "diff": "<null>",
                "origin": "templates/{{header_path}}",
                "path": "mlx/backend/metal/storage_view.h",
                "status": "clean",
                "tool": "clang-format",
              },
              {
                "detail": "<text>",
                "diff": "<null>",
                "origin": "patches/0001-metal-header.patch",
                "path": "mlx/backend/metal/metal.h",
                "status": "clean",
                "tool": "clang-format",
              },
              {
                "detail": "<text>",
                "diff": "<null>",
                "origin": "patches/0002-metal-cmake.patch",
                "path": "mlx/backend/metal/CMakeLists.txt",
                "status": "not-checked",
                "tool": "cmake-format",
              },
            ],
            "fixed": [],
            "hooks": [
              {
                "files": [],
                "id": "check-yaml",
                "rev": "6.0.0",
                "run": false,
              },
              {
                "files": [
                  "mlx/backend/metal/metal.h",
                  "mlx/backend/metal/storage_view.cpp",
                  "mlx/backend/metal/storage_view.h",
                ],
                "id": "clang-format",
                "rev": "21.1.8",
                "run": true,
              },
              {
                "files": [],
                "id": "black",
                "rev": "26.1.0",
                "run": true,
              },
              {
                "files": [],
                "id": "isort",
                "rev": "7.0.0",
                "run": true,
              },
              {
                "files": [
                  "mlx/backend/metal/CMakeLists.txt",
                ],
                "id": "cmake-format",
                "rev": "0.6.13",
                "run": true,
              },
            ],
            "isort": {
              "pinned": "7.0.0",
              "reason": "no Python files in the PR",
              "version": null,
            },
            "notChecked": 1,
            "ok": true,
            "problems": [],
          },
        },
      }
    `);
    });

    it('verify --skip leaves checks out and is ready when the rest pass (0)', async () => {
      await fixed();
      expect(await run(['verify', '--skip', 'build', 'pr-text', 'docs', 'format-cmake'], bare)).toMatchInlineSnapshot(`
        {
          "code": 0,
          "json": {
            "checks": [
              "format-cpp: pass, required",
              "metal-typecheck: not-checked, optional, fix",
            ],
            "command": "verify",
            "notApplicable": [],
            "ok": true,
            "ready": true,
            "skipped": [
              "format-cmake",
              "docs",
              "pr-files",
              "pr-placeholders",
              "pr-ai-disclosure",
              "linux-build",
              "tests-fail-without-implementation",
              "metal-twin",
              "mutants",
              "sanitizer",
            ],
          },
        }
      `);
    });

    it('format --fix while another run holds the workdir (6, LOCKED), leaving templates/ as they were', async () => {
      await fixed();
      const header = path.join(project, 'templates', '{{header_path}}');
      writeFileSync(header, readFileSync(header, 'utf8').replace('class', 'class   '));
      const before = readFileSync(header, 'utf8');
      const lock = path.join(project, '.work', '.lock');
      writeFileSync(lock, JSON.stringify({ pid: process.pid, command: 'test' }));
      const out = await run(['format', '--fix']);
      rmSync(lock);
      expect(readFileSync(header, 'utf8')).toBe(before);
      expect(out).toMatchInlineSnapshot(`
      {
        "code": 6,
        "json": {
          "error": {
            "code": "LOCKED",
            "details": {
              "lock": "<project>/.work/.lock",
              "pid": "<number>",
            },
            "hint": "<text>",
            "message": "<text>",
          },
          "ok": false,
        },
      }
    `);
    });
  },
);

/** metal-cpp as far as the fixture TUs use it: enough for them to type-check, nothing more. */
const METAL_HPP = `#pragma once
namespace NS {
using UInteger = unsigned long;
class String {
 public:
  UInteger length() const;
};
template <class T>
class SharedPtr {
 public:
  T* operator->() const;
};
template <class T>
SharedPtr<T> TransferPtr(T* object);
} // namespace NS
namespace MTL {
enum : NS::UInteger { ResourceStorageModeShared = 0, ResourceHazardTrackingModeUntracked = 1 << 8 };
class Buffer {
 public:
  void* contents();
  NS::UInteger length() const;
};
class Device {
 public:
  NS::String* name() const;
  Buffer* newBuffer(NS::UInteger length, NS::UInteger options);
};
} // namespace MTL
`;

describe('check-metal without clang >= 19', () => {
  it('exits 9 with TOOL_MISSING and the toolchain checks', async () => {
    const upstream = makeMetalUpstream('http://127.0.0.1:9/metal-cpp_26.zip');
    const project = makeMetalProject(upstream.sha);
    const names = { paths: { project, upstream: upstream.dir }, shas: { pinned: upstream.sha } };
    const out = await runTable(
      { 'check-metal': ['check-metal'], '--self-test': ['check-metal', '--self-test'] },
      (args) => runJson(args, { cwd: project, env: { PATH: gitOnlyPath() }, names }),
    );
    expect(byOutcome(out)).toMatchInlineSnapshot(`
      {
        "check-metal, --self-test": {
          "code": 9,
          "json": {
            "error": {
              "code": "TOOL_MISSING",
              "details": {
                "checks": [
                  "metal-clang: fail, required, fix",
                  "metal-libcxx: not-checked, required, fix",
                ],
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
      }
    `);
  });
});

describe.skipIf(lane.toolchain === null)(skipName('check-metal with clang >= 19 and libc++', [lane.reason]), () => {
  let upstream: { dir: string; sha: string };
  let project: string;
  let metalCpp: string;
  const names = (): Names => ({
    paths: { project, upstream: upstream.dir, metalCpp, repo: REPO_ROOT },
    literals: { clang: lane.toolchain?.command ?? 'clang++' },
    shas: { pinned: upstream.sha },
    vary: ['seconds', 'errors', 'errorCount', 'clang.version', 'clang.major', 'clang.libcxx', 'pid'],
  });
  const run = (...args: string[]) => runJson(args, { cwd: project, names: names() });

  beforeAll(() => {
    upstream = makeMetalUpstream('http://127.0.0.1:9/metal-cpp_26.zip');
    project = makeMetalProject(upstream.sha);
    metalCpp = tempDir('msp-metal-cpp-');
    mkdirSync(path.join(metalCpp, 'Metal'));
    writeFileSync(path.join(metalCpp, 'Metal', 'Metal.hpp'), METAL_HPP);
  });
  // Each case starts from the state it names (a stage), made once: before or after apply.
  const fresh = stage(
    () => [project],
    () => undefined,
  );
  const applied = stage(
    () => [project],
    async () => {
      await fresh();
      return run('apply', '--mlx-repo', upstream.dir);
    },
  );

  it('before apply (1, NOT_APPLIED)', async () => {
    await fresh();
    expect(await run('check-metal', '--metal-cpp', metalCpp)).toMatchInlineSnapshot(`
      {
        "code": 1,
        "json": {
          "error": {
            "code": "NOT_APPLIED",
            "details": null,
            "hint": "<text>",
            "message": "<text>",
          },
          "ok": false,
        },
      }
    `);
  });

  it('metal-cpp that cannot be downloaded, or a folder that is not metal-cpp (9, TOOL_MISSING)', async () => {
    expect((await applied()).code).toBe(0);
    expect({ download: await run('check-metal'), '--metal-cpp': await run('check-metal', '--metal-cpp', FIXTURES) })
      .toMatchInlineSnapshot(`
      {
        "--metal-cpp": {
          "code": 9,
          "json": {
            "error": {
              "code": "TOOL_MISSING",
              "details": null,
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "download": {
          "code": 9,
          "json": {
            "error": {
              "code": "TOOL_MISSING",
              "details": null,
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
      }
    `);
  });

  it('the PR TUs type-check against a stand-in metal-cpp (0)', async () => {
    await applied();
    expect(await run('check-metal', '--metal-cpp', metalCpp, '--jobs', '2')).toMatchInlineSnapshot(`
      {
        "code": 0,
        "json": {
          "blindSpots": [
            "<text>",
            "<text>",
            "<text>",
          ],
          "clang": {
            "apple": false,
            "command": "<clang>",
            "libcxx": "<string>",
            "major": "<number>",
            "version": "<string>",
          },
          "command": "check-metal",
          "compileCommand": "<clang> -std=c++20 -stdlib=libc++ -fsyntax-only -fblocks -DMLX_STATIC -DFMT_HEADER_ONLY '-DMETAL_PATH="/usr/local/lib/mlx.metallib"' -I <project>/.work/mlx -I <metalCpp> -isystem <repo>/shims/include <file.cpp>",
          "failed": 0,
          "hint": null,
          "logDir": "<project>/.work/check-metal/logs",
          "metalCpp": "<metalCpp>",
          "mlx": null,
          "mode": "pr",
          "ok": true,
          "outcomes": [
            {
              "errorCount": "<number>",
              "errors": "<array>",
              "exitCode": 0,
              "expect": "pass",
              "good": true,
              "label": "mlx/backend/metal/probe.cpp",
              "seconds": "<number>",
            },
            {
              "errorCount": "<number>",
              "errors": "<array>",
              "exitCode": 0,
              "expect": "pass",
              "good": true,
              "label": "tests/metal_probe_tests.cpp",
              "seconds": "<number>",
            },
          ],
          "passed": 2,
        },
      }
    `);
  });

  it('a PR TU that does not type-check (1, CHECK_FAILED)', async () => {
    await applied();
    const template = path.join(project, 'templates', '{{metal_test_file}}');
    const original = readFileSync(template, 'utf8');
    const broken = original.replace('name->length()', 'name->size()');
    expect(broken).not.toBe(original);
    writeFileSync(template, broken);
    expect((await run('apply')).code).toBe(0);
    expect(await run('check-metal', '--metal-cpp', metalCpp, '--jobs', '2')).toMatchInlineSnapshot(`
      {
        "code": 1,
        "json": {
          "blindSpots": [
            "<text>",
            "<text>",
            "<text>",
          ],
          "clang": {
            "apple": false,
            "command": "<clang>",
            "libcxx": "<string>",
            "major": "<number>",
            "version": "<string>",
          },
          "code": "CHECK_FAILED",
          "command": "check-metal",
          "compileCommand": "<clang> -std=c++20 -stdlib=libc++ -fsyntax-only -fblocks -DMLX_STATIC -DFMT_HEADER_ONLY '-DMETAL_PATH="/usr/local/lib/mlx.metallib"' -I <project>/.work/mlx -I <metalCpp> -isystem <repo>/shims/include <file.cpp>",
          "failed": 1,
          "hint": null,
          "logDir": "<project>/.work/check-metal/logs",
          "metalCpp": "<metalCpp>",
          "mlx": null,
          "mode": "pr",
          "ok": false,
          "outcomes": [
            {
              "errorCount": "<number>",
              "errors": "<array>",
              "exitCode": 0,
              "expect": "pass",
              "good": true,
              "label": "mlx/backend/metal/probe.cpp",
              "seconds": "<number>",
            },
            {
              "errorCount": "<number>",
              "errors": "<array>",
              "exitCode": 1,
              "expect": "pass",
              "good": false,
              "label": "tests/metal_probe_tests.cpp",
              "seconds": "<number>",
            },
          ],
          "passed": 1,
        },
      }
    `);
    writeFileSync(template, original);
    expect((await run('apply')).code).toBe(0);
  });

  it('--self-test fails on the fixture, which is not MLX and has only a stand-in metal-cpp (1, CHECK_FAILED); while locked (6, LOCKED)', async () => {
    await applied();
    const selfTest = await run('check-metal', '--self-test', '--metal-cpp', metalCpp, '--jobs', '2');
    const lock = path.join(project, '.work', '.lock');
    writeFileSync(lock, JSON.stringify({ pid: process.pid, command: 'test' }));
    const locked = await run('check-metal', '--self-test', '--metal-cpp', metalCpp);
    rmSync(lock);
    expect({ '--self-test': selfTest, locked }).toMatchInlineSnapshot(`
      {
        "--self-test": {
          "code": 1,
          "json": {
            "blindSpots": [
              "<text>",
              "<text>",
              "<text>",
            ],
            "clang": {
              "apple": false,
              "command": "<clang>",
              "libcxx": "<string>",
              "major": "<number>",
              "version": "<string>",
            },
            "code": "CHECK_FAILED",
            "command": "check-metal",
            "compileCommand": "<clang> -std=c++20 -stdlib=libc++ -fsyntax-only -fblocks -DMLX_STATIC -DFMT_HEADER_ONLY '-DMETAL_PATH="/usr/local/lib/mlx.metallib"' -I <project>/.work/check-metal/pinned-<pinned:12> -I <metalCpp> -isystem <repo>/shims/include <file.cpp>",
            "failed": 3,
            "hint": "<text>",
            "logDir": "<project>/.work/check-metal/self-test-logs",
            "metalCpp": "<metalCpp>",
            "mlx": {
              "ok": 0,
              "total": 1,
            },
            "mode": "self-test",
            "ok": false,
            "outcomes": [
              {
                "errorCount": "<number>",
                "errors": "<array>",
                "exitCode": 1,
                "expect": "pass",
                "good": false,
                "label": "mlx/backend/metal/no_metal.cpp",
                "seconds": "<number>",
              },
              {
                "errorCount": "<number>",
                "errors": "<array>",
                "exitCode": 1,
                "expect": "pass",
                "good": false,
                "label": "shims/selftest/apis_ok.cpp",
                "seconds": "<number>",
              },
              {
                "errorCount": "<number>",
                "errors": "<array>",
                "exitCode": 1,
                "expect": "fail",
                "good": true,
                "label": "shims/selftest/broken.cpp",
                "seconds": "<number>",
              },
              {
                "errorCount": "<number>",
                "errors": "<array>",
                "exitCode": 1,
                "expect": "verify",
                "good": false,
                "label": "shims/selftest/broken.cpp [-verify]",
                "seconds": "<number>",
              },
            ],
            "passed": 1,
          },
        },
        "locked": {
          "code": 6,
          "json": {
            "error": {
              "code": "LOCKED",
              "details": {
                "lock": "<project>/.work/.lock",
                "pid": "<number>",
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
      }
    `);
  });
});

describe.skipIf(!doctorReady)(withReason('doctor', doctorReady, doctorReason), () => {
  let project: string;
  let deps: string;

  beforeAll(() => {
    project = makeProject(makeUpstream().sha);
    deps = tempDir('msp-deps-');
    for (const dep of ['json', 'doctest', 'fmt', 'gguflib']) mkdirSync(path.join(deps, dep));
  });

  it('with no tools on PATH: every required tool fails (9); --deps-dir provides the offline dependencies', async () => {
    const out = await spawnJson(['doctor', '--deps-dir', deps], {
      cwd: project,
      // A proxy on a closed port: metal-cpp cannot be downloaded, whatever this machine's network.
      env: { PATH: gitOnlyPath(), HTTPS_PROXY: 'http://127.0.0.1:9', https_proxy: 'http://127.0.0.1:9' },
      names: { paths: { project, deps } },
    });
    // BLAS is found by its files, not on PATH: its status is this machine's.
    const json = out.json as { checks: string[] };
    const blas = json.checks.findIndex((c) => c.startsWith('blas: '));
    expect(json.checks[blas]).toBe(`blas: ${hasBlas ? 'pass' : 'fail'}, required, fix`);
    json.checks[blas] = 'blas: <this machine>, required, fix';
    expect(out).toMatchInlineSnapshot(`
      {
        "code": 9,
        "json": {
          "asked": [
            "apply",
            "test",
            "format",
            "check-metal",
            "verify",
          ],
          "checks": [
            "git: pass, required",
            "cmake: fail, required, fix",
            "compiler: fail, required, fix",
            "blas: <this machine>, required, fix",
            "disk: pass, required, fix",
            "ninja: warn, optional, fix",
            "ccache: warn, optional, fix",
            "gxx-11: warn, optional, fix",
            "sanitizers: warn, optional, fix",
            "twin: warn, required, fix",
            "offline-json: pass, required",
            "offline-doctest: pass, required",
            "offline-fmt: pass, required",
            "offline-gguflib: pass, required",
            "clang-format: pass, required",
            "cmake-format: fail, required, fix",
            "sphinx: fail, required, fix",
            "metal-clang: fail, required, fix",
            "metal-libcxx: not-checked, required, fix",
            "metal-cpp: fail, required, fix",
          ],
          "command": "doctor",
          "commands": [
            {
              "command": "apply",
              "missing": [],
              "optionalMissing": [],
              "ready": true,
            },
            {
              "command": "test",
              "missing": [
                "cmake",
                "compiler",
              ],
              "optionalMissing": [
                "ninja",
                "ccache",
                "gxx-11",
                "sanitizers",
                "twin",
              ],
              "ready": false,
            },
            {
              "command": "format",
              "missing": [],
              "optionalMissing": [
                "cmake-format",
              ],
              "ready": true,
            },
            {
              "command": "check-metal",
              "missing": [
                "metal-clang",
                "metal-libcxx",
                "metal-cpp",
              ],
              "optionalMissing": [],
              "ready": false,
            },
            {
              "command": "verify",
              "missing": [
                "cmake",
                "compiler",
                "twin",
                "cmake-format",
                "sphinx",
              ],
              "optionalMissing": [
                "ninja",
                "ccache",
                "gxx-11",
                "sanitizers",
                "metal-clang",
                "metal-libcxx",
                "metal-cpp",
              ],
              "ready": false,
            },
          ],
          "ok": false,
          "ready": false,
          "workdir": "<project>/.work",
        },
      }
    `);
  });
});

describe.skipIf(!machineReady)(withReason('doctor on a machine with every tool', machineReady, machineReason), () => {
  it('every check passes (0), --offline with the system packages too', async () => {
    const project = makeProject(makeUpstream().sha);
    // metal-cpp as check-metal leaves it in the workdir: no download needed.
    const metalCpp = path.join(project, '.work', 'metal-cpp', 'metal-cpp_26', 'metal-cpp', 'Metal');
    mkdirSync(metalCpp, { recursive: true });
    writeFileSync(path.join(metalCpp, 'Metal.hpp'), '// stand-in\n');
    const out = await runTable({ doctor: ['doctor'], '--offline': ['doctor', '--offline'] }, (args) =>
      runJson(args, {
        cwd: project,
        env: { MLX_STORAGE_PR_CACHE: tempDir('msp-cache-') },
        names: { paths: { project } },
      }),
    );
    expect(out).toMatchInlineSnapshot(`
      {
        "--offline": {
          "code": 0,
          "json": {
            "asked": [
              "apply",
              "test",
              "format",
              "check-metal",
              "verify",
            ],
            "checks": [
              "git: pass, required",
              "cmake: pass, required, fix",
              "compiler: pass, required, fix",
              "blas: pass, required, fix",
              "disk: pass, required, fix",
              "ninja: pass, optional",
              "ccache: pass, optional",
              "gxx-11: pass, optional",
              "sanitizers: pass, optional",
              "twin: pass, required",
              "offline-json: pass, required",
              "offline-doctest: pass, required",
              "offline-fmt: pass, required",
              "offline-gguflib: pass, required",
              "clang-format: pass, required",
              "cmake-format: pass, required",
              "sphinx: pass, required",
              "metal-clang: pass, required",
              "metal-libcxx: pass, required",
              "metal-cpp: pass, required",
            ],
            "command": "doctor",
            "commands": [
              {
                "command": "apply",
                "missing": [],
                "optionalMissing": [],
                "ready": true,
              },
              {
                "command": "test",
                "missing": [],
                "optionalMissing": [],
                "ready": true,
              },
              {
                "command": "format",
                "missing": [],
                "optionalMissing": [],
                "ready": true,
              },
              {
                "command": "check-metal",
                "missing": [],
                "optionalMissing": [],
                "ready": true,
              },
              {
                "command": "verify",
                "missing": [],
                "optionalMissing": [],
                "ready": true,
              },
            ],
            "ok": true,
            "ready": true,
            "workdir": "<project>/.work",
          },
        },
        "doctor": {
          "code": 0,
          "json": {
            "asked": [
              "apply",
              "test",
              "format",
              "check-metal",
              "verify",
            ],
            "checks": [
              "git: pass, required",
              "cmake: pass, required, fix",
              "compiler: pass, required, fix",
              "blas: pass, required, fix",
              "disk: pass, required, fix",
              "ninja: pass, optional",
              "ccache: pass, optional",
              "gxx-11: pass, optional",
              "sanitizers: pass, optional",
              "twin: pass, required",
              "offline-json: pass, optional",
              "offline-doctest: pass, optional",
              "offline-fmt: pass, optional",
              "offline-gguflib: pass, optional",
              "clang-format: pass, required",
              "cmake-format: pass, required",
              "sphinx: pass, required",
              "metal-clang: pass, required",
              "metal-libcxx: pass, required",
              "metal-cpp: pass, required",
            ],
            "command": "doctor",
            "commands": [
              {
                "command": "apply",
                "missing": [],
                "optionalMissing": [],
                "ready": true,
              },
              {
                "command": "test",
                "missing": [],
                "optionalMissing": [],
                "ready": true,
              },
              {
                "command": "format",
                "missing": [],
                "optionalMissing": [],
                "ready": true,
              },
              {
                "command": "check-metal",
                "missing": [],
                "optionalMissing": [],
                "ready": true,
              },
              {
                "command": "verify",
                "missing": [],
                "optionalMissing": [],
                "ready": true,
              },
            ],
            "ok": true,
            "ready": true,
            "workdir": "<project>/.work",
          },
        },
      }
    `);
  });
});

describe('check', () => {
  let upstream: { dir: string; sha: string };
  let project: string;
  const commits: Record<string, string> = {};
  const names = (): Names => ({
    paths: { project, upstream: upstream.dir },
    shas: { pinned: upstream.sha, ...commits },
  });
  const run = (...args: string[]) =>
    runJson(['check', '--mlx-repo', upstream.dir, ...args], { cwd: project, names: names() });

  beforeAll(() => {
    upstream = makeUpstream();
    project = makeProject(upstream.sha);
    const on = (branch: string, file: string, from: string, to: string) => {
      git(upstream.dir, 'checkout', '--quiet', '-B', branch, upstream.sha);
      const full = path.join(upstream.dir, file);
      writeFileSync(full, readFileSync(full, 'utf8').replace(from, to));
      git(upstream.dir, 'commit', '--quiet', '-am', branch);
      commits[branch] = git(upstream.dir, 'rev-parse', 'HEAD').trim();
    };
    on('context', 'mlx/backend/metal/CMakeLists.txt', '/allocator.cpp', '/allocators.cpp');
    on('clash', 'docs/src/dev/extensions.rst', 'Text about operations.\n\n', 'Text about operations.\n\nMore.\n\n');
  });

  it('check --against: a three-way merge is reported and exits 0; a conflict exits 4 with the report', async () => {
    const out = {
      'three-way': await run('--against', 'context'),
      conflict: await run('--against', 'clash'),
    };
    expect(out).toMatchInlineSnapshot(`
      {
        "conflict": {
          "code": 4,
          "json": {
            "command": "check",
            "ok": false,
            "pinned": "<pinned>",
            "pinnedVersion": "0.32.2",
            "refs": [
              {
                "commit": "<clash>",
                "date": "2025-01-01T00:00:00+00:00",
                "patches": [
                  {
                    "files": [
                      "mlx/backend/metal/CMakeLists.txt",
                    ],
                    "kind": "patch",
                    "name": "0001-metal-cmake.patch",
                    "reasons": [],
                    "status": "clean",
                  },
                  {
                    "files": [
                      "docs/src/dev/extensions.rst",
                    ],
                    "kind": "patch",
                    "name": "0002-docs.patch",
                    "reasons": [
                      {
                        "detail": "<text>",
                        "file": "docs/src/dev/extensions.rst",
                        "hunk": 1,
                        "hunkHeader": "@@ -6,6 +6,11 @@",
                        "patch": "0002-docs.patch",
                        "reason": "upstream_changed",
                      },
                    ],
                    "status": "conflict",
                  },
                ],
                "ref": "clash",
                "status": "conflict",
                "templates": [
                  {
                    "files": [
                      "mlx/backend/metal/storage_view.cpp",
                    ],
                    "kind": "template",
                    "name": "templates/mlx/backend/metal/storage_view.cpp",
                    "reasons": [],
                    "status": "clean",
                  },
                  {
                    "files": [
                      "mlx/backend/metal/storage_view.h",
                    ],
                    "kind": "template",
                    "name": "templates/{{header_path}}",
                    "reasons": [],
                    "status": "clean",
                  },
                ],
                "upstreamChanged": [
                  "docs/src/dev/extensions.rst",
                ],
              },
            ],
            "source": "<upstream>",
          },
        },
        "three-way": {
          "code": 0,
          "json": {
            "command": "check",
            "ok": true,
            "pinned": "<pinned>",
            "pinnedVersion": "0.32.2",
            "refs": [
              {
                "commit": "<context>",
                "date": "2025-01-01T00:00:00+00:00",
                "patches": [
                  {
                    "files": [
                      "mlx/backend/metal/CMakeLists.txt",
                    ],
                    "kind": "patch",
                    "name": "0001-metal-cmake.patch",
                    "reasons": [
                      {
                        "detail": "<text>",
                        "file": "mlx/backend/metal/CMakeLists.txt",
                        "hunk": 1,
                        "hunkHeader": "@@ -2,4 +2,5 @@",
                        "patch": "0001-metal-cmake.patch",
                        "reason": "upstream_changed",
                      },
                    ],
                    "status": "three-way",
                  },
                  {
                    "files": [
                      "docs/src/dev/extensions.rst",
                    ],
                    "kind": "patch",
                    "name": "0002-docs.patch",
                    "reasons": [],
                    "status": "clean",
                  },
                ],
                "ref": "context",
                "status": "three-way",
                "templates": [
                  {
                    "files": [
                      "mlx/backend/metal/storage_view.cpp",
                    ],
                    "kind": "template",
                    "name": "templates/mlx/backend/metal/storage_view.cpp",
                    "reasons": [],
                    "status": "clean",
                  },
                  {
                    "files": [
                      "mlx/backend/metal/storage_view.h",
                    ],
                    "kind": "template",
                    "name": "templates/{{header_path}}",
                    "reasons": [],
                    "status": "clean",
                  },
                ],
                "upstreamChanged": [
                  "mlx/backend/metal/CMakeLists.txt",
                ],
              },
            ],
            "source": "<upstream>",
          },
        },
      }
    `);
  });

  it('check: an unknown ref (5, REF_NOT_FOUND); no --against, build options without --build, --jobs 0 (2)', async () => {
    const out = {
      'unknown ref': await run('--against', 'no-such-ref'),
      'no --against': await run(),
      '--offline without --build': await run('--against', 'context', '--offline'),
      '--jobs 0': await run('--against', 'context', '--jobs', '0'),
    };
    expect(out).toMatchInlineSnapshot(`
      {
        "--jobs 0": {
          "code": 2,
          "json": {
            "error": {
              "code": "USAGE",
              "details": null,
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "--offline without --build": {
          "code": 2,
          "json": {
            "error": {
              "code": "USAGE",
              "details": null,
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "no --against": {
          "code": 2,
          "json": {
            "error": {
              "code": "USAGE",
              "details": null,
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "unknown ref": {
          "code": 5,
          "json": {
            "error": {
              "code": "REF_NOT_FOUND",
              "details": {
                "ref": "no-such-ref",
                "source": "<upstream>",
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
      }
    `);
  });
});

describe('export and bump through edits and a pin move', () => {
  let upstream: { dir: string; sha: string };
  let project: string;
  let checkout: string;
  let target = '';
  const names = (): Names => ({
    paths: { project, upstream: upstream.dir },
    shas: { pinned: upstream.sha, target },
  });
  const run = (...args: string[]) => runJson([...args, '--mlx-repo', upstream.dir], { cwd: project, names: names() });
  const edit = (dir: string, file: string, change: (text: string) => string) =>
    writeFileSync(path.join(dir, file), change(readFileSync(path.join(dir, file), 'utf8')));

  beforeAll(() => {
    upstream = makeExportUpstream();
    project = makeExportProject(upstream.sha);
    checkout = path.join(project, '.work', 'mlx');
  });
  // Each case starts from the state the case before it leaves (the stage of that name), made once.
  const folders = () => [project, upstream.dir];
  const fresh = stage(folders, () => undefined);
  const exported = stage(folders, async () => {
    await fresh();
    expect((await run('apply')).code).toBe(0);
    const out: Record<string, Outcome> = {};
    out['no edits'] = await run('export');
    edit(checkout, 'mlx/backend/metal/storage_view.cpp', (t) => t.replace('  return 0;', '  return 1;'));
    out['--dry-run'] = await run('export', '--dry-run');
    out['export'] = await run('export');
    edit(checkout, 'mlx/backend/metal/storage_view.h', (t) =>
      t.replace('  int size() const;', '  int size() const;\n  MetalStorageView copy() const;'),
    );
    out['ambiguous value'] = await run('export');
    git(checkout, 'checkout', '--', 'mlx/backend/metal/storage_view.h');
    return out;
  });
  const aborted = stage(folders, async () => {
    await exported();
    edit(upstream.dir, 'mlx/version.h', (t) => t.replace('MLX_VERSION_MINOR 32', 'MLX_VERSION_MINOR 33'));
    edit(upstream.dir, 'mlx/backend/metal/no_metal.cpp', (t) =>
      t.replace('without metal backend");\n}\n\n', 'without metal backend");\n}\n\nvoid reset_peak_memory() {}\n\n'),
    );
    git(upstream.dir, 'commit', '--quiet', '-am', 'upstream change');
    target = git(upstream.dir, 'rev-parse', 'HEAD').trim();
    const out: Record<string, Outcome> = {};
    out['bump --to main'] = await run('bump', '--to', 'main');
    out['status'] = await run('status');
    out['apply'] = await run('apply');
    out['bump --to main again'] = await run('bump', '--to', 'main');
    out['bump --continue before export'] = await run('bump', '--continue');
    out['bump --abort'] = await run('bump', '--abort');
    return { out, target };
  });

  it('usage errors (2), an invalid config (7), and export before apply (1, NOT_APPLIED)', async () => {
    await fresh();
    const broken = makeExportProject(upstream.sha);
    editConfig(broken, (c) => ((c['upstream'] as Record<string, unknown>)['commit'] = 'abc'));
    const rows = {
      'export --no-such-option': ['export', '--no-such-option'],
      'bump --no-such-option': ['bump', '--no-such-option'],
      bump: ['bump'],
      'bump --to x --continue': ['bump', '--to', 'x', '--continue'],
      'bump --continue': ['bump', '--continue'],
      'bump --abort': ['bump', '--abort'],
      export: ['export'],
    };
    const out = await runTable(rows, (args) => run(...args));
    out['export (invalid config)'] = await runJson(['export'], { cwd: broken, names: { paths: { project: broken } } });
    out['bump --to x (invalid config)'] = await runJson(['bump', '--to', 'x'], {
      cwd: broken,
      names: { paths: { project: broken } },
    });
    expect(byOutcome(out)).toMatchInlineSnapshot(`
      {
        "bump --continue, bump --abort": {
          "code": 2,
          "json": {
            "error": {
              "code": "NO_BUMP",
              "details": null,
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "export": {
          "code": 1,
          "json": {
            "error": {
              "code": "NOT_APPLIED",
              "details": null,
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "export (invalid config), bump --to x (invalid config)": {
          "code": 7,
          "json": {
            "error": {
              "code": "CONFIG_INVALID",
              "details": {
                "file": "<project>/mlx-storage-pr.config.json",
                "problems": [
                  "<text>",
                ],
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "export --no-such-option, bump --no-such-option, bump, bump --to x --continue": {
          "code": 2,
          "json": {
            "error": {
              "code": "USAGE",
              "details": null,
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
      }
    `);
  });

  it('export: nothing to export (0); --dry-run with edits (0, would-export); export (0, exported); an edit it cannot place (1, EXPORT_REFUSED)', async () => {
    expect(await exported()).toMatchInlineSnapshot(`
      {
        "--dry-run": {
          "code": 0,
          "json": {
            "base": "<pinned>",
            "bump": false,
            "command": "export",
            "diff": "--- a/templates/mlx/backend/metal/storage_view.cpp
      +++ b/templates/mlx/backend/metal/storage_view.cpp
      @@ -5,7 +5,7 @@
       namespace {{namespace}} {
       
       int {{class_name}}::size() const {
      -  return 0;
      +  return 1;
       }
       
       } // namespace {{namespace}}
      ",
            "exported": [
              {
                "into": [
                  "templates/mlx/backend/metal/storage_view.cpp",
                ],
                "path": "mlx/backend/metal/storage_view.cpp",
              },
            ],
            "head": null,
            "notExported": [],
            "ok": true,
            "removed": [],
            "source": "<project>/.work/mlx",
            "status": "would-export",
            "written": [
              "templates/mlx/backend/metal/storage_view.cpp",
            ],
          },
        },
        "ambiguous value": {
          "code": 1,
          "json": {
            "error": {
              "code": "EXPORT_REFUSED",
              "details": {
                "line": 11,
                "names": [
                  "class_name",
                ],
                "origin": "templates/{{header_path}}",
                "value": "MetalStorageView",
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "export": {
          "code": 0,
          "json": {
            "base": "<pinned>",
            "bump": false,
            "command": "export",
            "diff": "--- a/templates/mlx/backend/metal/storage_view.cpp
      +++ b/templates/mlx/backend/metal/storage_view.cpp
      @@ -5,7 +5,7 @@
       namespace {{namespace}} {
       
       int {{class_name}}::size() const {
      -  return 0;
      +  return 1;
       }
       
       } // namespace {{namespace}}
      ",
            "exported": [
              {
                "into": [
                  "templates/mlx/backend/metal/storage_view.cpp",
                ],
                "path": "mlx/backend/metal/storage_view.cpp",
              },
            ],
            "head": "<sha1>",
            "notExported": [],
            "ok": true,
            "removed": [],
            "source": "<project>/.work/mlx",
            "status": "exported",
            "written": [
              "templates/mlx/backend/metal/storage_view.cpp",
            ],
          },
        },
        "no edits": {
          "code": 0,
          "json": {
            "base": "<pinned>",
            "bump": false,
            "command": "export",
            "diff": "",
            "exported": [],
            "head": null,
            "notExported": [],
            "ok": true,
            "removed": [],
            "source": "<project>/.work/mlx",
            "status": "nothing-to-export",
            "written": [],
          },
        },
      }
    `);
  });

  it('bump: a conflict (4, BUMP_CONFLICT) shows in status; apply and another bump wait (3); --abort (0, aborted)', async () => {
    const { out } = await aborted();
    expect(out).toMatchInlineSnapshot(`
      {
        "apply": {
          "code": 3,
          "json": {
            "error": {
              "code": "BUMP_IN_PROGRESS",
              "details": null,
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "bump --abort": {
          "code": 0,
          "json": {
            "command": "bump",
            "from": {
              "commit": "<pinned>",
              "version": "0.32.2",
            },
            "head": "<sha1>",
            "ok": true,
            "patches": [],
            "ref": "main",
            "removed": [],
            "saved": {
              "project": null,
              "worktree": null,
            },
            "status": "aborted",
            "to": {
              "commit": "<target>",
              "version": "0.33.2",
            },
            "written": [
              "mlx-storage-pr.config.json",
              "templates/",
              "patches/",
            ],
          },
        },
        "bump --continue before export": {
          "code": 4,
          "json": {
            "error": {
              "code": "BUMP_CONFLICT",
              "details": {
                "conflicts": [
                  {
                    "count": 1,
                    "file": "mlx/backend/metal/no_metal.cpp",
                    "patch": "0002-no-metal-stub.patch",
                  },
                ],
                "from": {
                  "commit": "<pinned>",
                  "version": "0.32.2",
                },
                "next": [
                  "Resolve each <<<<<<< ... >>>>>>> block in <project>/.work/bump/mlx/mlx/backend/metal/no_metal.cpp",
                  "mlx-storage-pr export",
                  "mlx-storage-pr bump --continue",
                ],
                "patches": [],
                "ref": "main",
                "resumable": true,
                "to": {
                  "commit": "<target>",
                  "version": "0.33.2",
                },
                "worktree": "<project>/.work/bump/mlx",
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "bump --to main": {
          "code": 4,
          "json": {
            "error": {
              "code": "BUMP_CONFLICT",
              "details": {
                "conflicts": [
                  {
                    "count": 1,
                    "file": "mlx/backend/metal/no_metal.cpp",
                    "patch": "0002-no-metal-stub.patch",
                  },
                ],
                "from": {
                  "commit": "<pinned>",
                  "version": "0.32.2",
                },
                "next": [
                  "Resolve each <<<<<<< ... >>>>>>> block in <project>/.work/bump/mlx/mlx/backend/metal/no_metal.cpp",
                  "mlx-storage-pr export",
                  "mlx-storage-pr bump --continue",
                ],
                "patches": [
                  {
                    "conflicts": 0,
                    "file": "mlx/backend/metal/no_metal.cpp",
                    "patch": "0001-no-metal-include.patch",
                    "result": "clean",
                  },
                  {
                    "conflicts": 1,
                    "file": "mlx/backend/metal/no_metal.cpp",
                    "patch": "0002-no-metal-stub.patch",
                    "result": "conflict",
                  },
                  {
                    "conflicts": 0,
                    "file": "docs/src/dev/extensions.rst",
                    "patch": "0003-docs.patch",
                    "result": "clean",
                  },
                ],
                "ref": "main",
                "resumable": true,
                "to": {
                  "commit": "<target>",
                  "version": "0.33.2",
                },
                "worktree": "<project>/.work/bump/mlx",
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "bump --to main again": {
          "code": 3,
          "json": {
            "error": {
              "code": "BUMP_IN_PROGRESS",
              "details": null,
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "status": {
          "code": 0,
          "json": {
            "base": "<pinned>",
            "branch": "mlx-storage-pr",
            "bump": {
              "conflicts": [
                {
                  "count": 1,
                  "file": "mlx/backend/metal/no_metal.cpp",
                  "patch": "0002-no-metal-stub.patch",
                },
              ],
              "from": {
                "commit": "<pinned>",
                "version": "0.32.2",
              },
              "ref": "main",
              "to": {
                "commit": "<target>",
                "version": "0.33.2",
              },
              "worktree": "<project>/.work/bump/mlx",
            },
            "checkout": "<project>/.work/mlx",
            "command": "status",
            "conflicts": [],
            "differs": [],
            "dirty": [],
            "head": "<sha1>",
            "ok": true,
            "pinned": "<pinned>",
            "pinnedVersion": "0.32.2",
            "source": {
              "location": "<upstream>",
              "origin": "option",
            },
            "state": "applied",
            "unmerged": [],
          },
        },
      }
    `);
  });

  it('bump: after resolving, export (0, exported, bump) and --continue (0, continued); a bump to the pinned commit (0, already-pinned); an unknown ref (5)', async () => {
    target = (await aborted()).target;
    expect((await run('bump', '--to', 'main')).code).toBe(4);
    const worktree = path.join(project, '.work', 'bump', 'mlx');
    edit(worktree, 'mlx/backend/metal/no_metal.cpp', (t) =>
      t.replace(/<<<<<<< .*\n([\s\S]*?)=======\n([\s\S]*?)>>>>>>> .*\n/, '$1\n$2'),
    );
    const out: Record<string, Outcome> = {};
    out['export'] = await run('export');
    out['bump --continue'] = await run('bump', '--continue');
    out['bump --to main'] = await run('bump', '--to', 'main');
    out['bump --to no-such-ref'] = await run('bump', '--to', 'no-such-ref');
    expect(out).toMatchInlineSnapshot(`
      {
        "bump --continue": {
          "code": 0,
          "json": {
            "command": "bump",
            "from": {
              "commit": "<pinned>",
              "version": "0.32.2",
            },
            "head": "<sha1>",
            "ok": true,
            "patches": [],
            "ref": "main",
            "removed": [],
            "status": "continued",
            "to": {
              "commit": "<target>",
              "version": "0.33.2",
            },
            "written": [
              "mlx-storage-pr.config.json",
            ],
          },
        },
        "bump --to main": {
          "code": 0,
          "json": {
            "command": "bump",
            "from": {
              "commit": "<target>",
              "version": "0.33.2",
            },
            "head": "<sha1>",
            "ok": true,
            "patches": [],
            "ref": "main",
            "removed": [],
            "status": "already-pinned",
            "to": {
              "commit": "<target>",
              "version": "0.33.2",
            },
            "written": [],
          },
        },
        "bump --to no-such-ref": {
          "code": 5,
          "json": {
            "error": {
              "code": "COMMIT_NOT_FOUND",
              "details": {
                "ref": "no-such-ref",
                "source": "<upstream>",
                "stderr": "<text>",
              },
              "hint": "<text>",
              "message": "<text>",
            },
            "ok": false,
          },
        },
        "export": {
          "code": 0,
          "json": {
            "base": "<target>",
            "bump": true,
            "command": "export",
            "diff": "--- a/patches/0001-no-metal-include.patch
      +++ b/patches/0001-no-metal-include.patch
      @@ -1,5 +1,5 @@
       diff --git a/mlx/backend/metal/no_metal.cpp b/mlx/backend/metal/no_metal.cpp
      -index 2f531c6..2690afb 100644
      +index f21d12b..61d449c 100644
       --- a/mlx/backend/metal/no_metal.cpp
       +++ b/mlx/backend/metal/no_metal.cpp
       @@ -3,6 +3,7 @@
      --- a/patches/0002-no-metal-stub.patch
      +++ b/patches/0002-no-metal-stub.patch
      @@ -1,11 +1,11 @@
       diff --git a/mlx/backend/metal/no_metal.cpp b/mlx/backend/metal/no_metal.cpp
      -index 2690afb..3b10958 100644
      +index 61d449c..d90d3dd 100644
       --- a/mlx/backend/metal/no_metal.cpp
       +++ b/mlx/backend/metal/no_metal.cpp
      -@@ -20,6 +20,13 @@ const std::string& get_metallib_path() {
      -       "[metal::get_metallib_path] Cannot get metallib path without metal backend");
      - }
      +@@ -22,6 +22,13 @@ const std::string& get_metallib_path() {
        
      + void reset_peak_memory() {}
      + 
       +{{status_enum}} {{try_export_function}}(
       +    const array&,
       +    {{class_name}}*,
      ",
            "exported": [
              {
                "into": [
                  "patches/0001-no-metal-include.patch",
                  "patches/0002-no-metal-stub.patch",
                ],
                "path": "mlx/backend/metal/no_metal.cpp",
              },
            ],
            "head": null,
            "notExported": [],
            "ok": true,
            "removed": [],
            "source": "<project>/.work/bump/mlx",
            "status": "exported",
            "written": [
              "patches/0001-no-metal-include.patch",
              "patches/0002-no-metal-stub.patch",
            ],
          },
        },
      }
    `);
  });
});
