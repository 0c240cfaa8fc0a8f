import { existsSync, statSync } from 'node:fs';
import { mkdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';

import { ifAbsent } from '../adapters/files.js';
import { UserError } from '../core/errors.js';
import { planOffline, type Dependency, type OfflinePlan } from './offline-plan.js';

const DEPENDENCIES: Dependency[] = ['json', 'doctest', 'fmt', 'gguflib', 'metal_cpp'];

/**
 * `--deps-dir` as an absolute path, after checking that it is a folder with
 * at least one dependency in it: a mistyped path would otherwise fall back to
 * system packages without a word.
 */
export function verifyDepsDir(cwd: string, option: string | undefined): string | undefined {
  if (option === undefined) return undefined;
  const dir = path.resolve(cwd, option);
  const layout = `one subfolder per dependency: ${DEPENDENCIES.join(', ')}`;
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new UserError('USAGE', `--deps-dir ${option}: no such folder.`, {
      hint: `Pass a folder with ${layout}; or leave --deps-dir out and use --offline with system packages.`,
    });
  }
  if (!DEPENDENCIES.some((d) => existsSync(path.join(dir, d)))) {
    throw new UserError('USAGE', `--deps-dir ${option} holds none of ${DEPENDENCIES.join(', ')}.`, {
      hint: `Pass a folder with ${layout}; or leave --deps-dir out and use --offline with system packages.`,
    });
  }
  return dir;
}

const SYSTEM = {
  nlohmann: '/usr/include/nlohmann',
  doctestHeader: '/usr/include/doctest/doctest.h',
  doctestCmake: '/usr/lib/cmake/doctest',
  fmt: '/usr/include/fmt/format.h',
};

/** Looks at --deps-dir and the system packages, then plans the offline mapping. */
export function probeOffline(
  depsDir: string | undefined,
  generatedRoot: string,
  platform: NodeJS.Platform,
): OfflinePlan {
  return planOffline({
    platform,
    depsDir: depsDir ?? null,
    depsDirHas: new Set(depsDir ? DEPENDENCIES.filter((d) => existsSync(path.join(depsDir, d))) : []),
    system: {
      nlohmannJson: existsSync(path.join(SYSTEM.nlohmann, 'json.hpp')),
      doctest: existsSync(SYSTEM.doctestHeader) && existsSync(path.join(SYSTEM.doctestCmake, 'doctest.cmake')),
      fmt: existsSync(SYSTEM.fmt),
    },
    generatedRoot,
  });
}

/**
 * Creates the stand-in folders that point FetchContent at system packages.
 * Files are written only when their content changes: a newer file would make
 * CMake configure again on every build.
 */
export async function generateStandIns(plan: OfflinePlan): Promise<void> {
  for (const dep of plan.deps) {
    if (!dep.generate) continue;
    const dir = dep.generate.dir;
    if (dep.generate.kind === 'json-from-system') {
      // MLX uses ${json_SOURCE_DIR}/single_include/nlohmann.
      const link = path.join(dir, 'single_include', 'nlohmann');
      if ((await ifAbsent(readlink(link), null)) !== SYSTEM.nlohmann) {
        await rm(link, { recursive: true, force: true });
        await mkdir(path.dirname(link), { recursive: true });
        await symlink(SYSTEM.nlohmann, link);
      }
    } else {
      // MLX links the target `doctest` and includes scripts/cmake/doctest.cmake.
      for (const file of ['doctest.cmake', 'doctestAddTests.cmake']) {
        await writeIfChanged(
          path.join(dir, 'scripts', 'cmake', file),
          await readFile(path.join(SYSTEM.doctestCmake, file), 'utf8'),
        );
      }
      await writeIfChanged(
        path.join(dir, 'CMakeLists.txt'),
        [
          'cmake_minimum_required(VERSION 3.16)',
          'project(doctest_system LANGUAGES CXX)',
          'add_library(doctest INTERFACE)',
          `target_include_directories(doctest INTERFACE ${path.dirname(path.dirname(SYSTEM.doctestHeader))})`,
          '',
        ].join('\n'),
      );
    }
  }
}

async function writeIfChanged(file: string, content: string): Promise<void> {
  if ((await ifAbsent(readFile(file, 'utf8'), null)) === content) return;
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}
