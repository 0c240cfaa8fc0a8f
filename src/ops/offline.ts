import { existsSync } from 'node:fs';
import { copyFile, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

import { planOffline, type Dependency, type OfflinePlan } from '../core/offline.js';

const SYSTEM = {
  nlohmann: '/usr/include/nlohmann',
  doctestHeader: '/usr/include/doctest/doctest.h',
  doctestCmake: '/usr/lib/cmake/doctest',
  fmt: '/usr/include/fmt/format.h',
};

/** Looks at --deps-dir and the system packages, then plans the offline mapping. */
export function probeOffline(depsDir: string | undefined, generatedRoot: string, platform: NodeJS.Platform = process.platform): OfflinePlan {
  const all: Dependency[] = ['json', 'doctest', 'fmt', 'gguflib', 'metal_cpp'];
  return planOffline({
    platform,
    depsDir: depsDir ?? null,
    depsDirHas: new Set(depsDir ? all.filter((d) => existsSync(path.join(depsDir, d))) : []),
    system: {
      nlohmannJson: existsSync(path.join(SYSTEM.nlohmann, 'json.hpp')),
      doctest: existsSync(SYSTEM.doctestHeader) && existsSync(path.join(SYSTEM.doctestCmake, 'doctest.cmake')),
      fmt: existsSync(SYSTEM.fmt),
    },
    generatedRoot,
  });
}

/** Creates the stand-in folders that point FetchContent at system packages. */
export async function generateStandIns(plan: OfflinePlan): Promise<void> {
  for (const dep of plan.deps) {
    if (!dep.generate) continue;
    const dir = dep.generate.dir;
    await rm(dir, { recursive: true, force: true });
    if (dep.generate.kind === 'json-from-system') {
      // MLX uses ${json_SOURCE_DIR}/single_include/nlohmann.
      await mkdir(path.join(dir, 'single_include'), { recursive: true });
      await symlink(SYSTEM.nlohmann, path.join(dir, 'single_include', 'nlohmann'));
    } else {
      // MLX links the target `doctest` and includes scripts/cmake/doctest.cmake.
      await mkdir(path.join(dir, 'scripts', 'cmake'), { recursive: true });
      for (const file of ['doctest.cmake', 'doctestAddTests.cmake']) {
        await copyFile(path.join(SYSTEM.doctestCmake, file), path.join(dir, 'scripts', 'cmake', file));
      }
      await writeFile(
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

/** Shared cache folder (stand-in dependency folders); outside the workdir so build paths stay comparable. */
export function cacheRoot(env: Readonly<Record<string, string | undefined>>): string {
  return env['MLX_STORAGE_PR_CACHE'] ?? path.join(env['XDG_CACHE_HOME'] ?? path.join(os.homedir(), '.cache'), 'mlx-storage-pr');
}
