/**
 * Maps each FetchContent dependency of MLX to a local folder, so the build
 * needs no network. Pure: what exists on disk comes in through `probe`.
 */

export type Dependency = 'json' | 'doctest' | 'fmt' | 'gguflib' | 'metal_cpp';

export interface OfflineProbe {
  platform: NodeJS.Platform;
  /** Subfolders of --deps-dir that exist, by dependency name. */
  depsDir: string | null;
  depsDirHas: ReadonlySet<Dependency>;
  /** System packages found on the machine. */
  system: { nlohmannJson: boolean; doctest: boolean; fmt: boolean };
  /** Where generated stand-in folders go. */
  generatedRoot: string;
}

export interface DependencySource {
  dep: Dependency;
  source: string;
  cmakeArgs: string[];
  /** A stand-in folder the adapter must create before configuring. */
  generate?: { kind: 'json-from-system' | 'doctest-from-system'; dir: string };
}

export interface OfflinePlan {
  deps: DependencySource[];
  missing: Array<{ dep: Dependency; fix: string }>;
  notes: string[];
  cmakeArgs: string[];
}

export function planOffline(probe: OfflineProbe): OfflinePlan {
  const deps: DependencySource[] = [];
  const missing: OfflinePlan['missing'] = [];
  const notes: string[] = [];
  const fromDir = (dep: Dependency) =>
    probe.depsDir !== null && probe.depsDirHas.has(dep) ? `${probe.depsDir}/${dep}` : null;
  const upper = (dep: Dependency) => dep.toUpperCase();

  const json = fromDir('json');
  if (json) deps.push({ dep: 'json', source: json, cmakeArgs: [`-DFETCHCONTENT_SOURCE_DIR_JSON=${json}`] });
  else if (probe.system.nlohmannJson) {
    const dir = `${probe.generatedRoot}/json`;
    deps.push({
      dep: 'json',
      source: 'system nlohmann-json3-dev (/usr/include/nlohmann)',
      cmakeArgs: [`-DFETCHCONTENT_SOURCE_DIR_JSON=${dir}`],
      generate: { kind: 'json-from-system', dir },
    });
  } else
    missing.push({
      dep: 'json',
      fix: 'sudo apt-get install nlohmann-json3-dev, or put nlohmann json 3.11.3 in <deps-dir>/json',
    });

  const doctest = fromDir('doctest');
  if (doctest)
    deps.push({ dep: 'doctest', source: doctest, cmakeArgs: [`-DFETCHCONTENT_SOURCE_DIR_DOCTEST=${doctest}`] });
  else if (probe.system.doctest) {
    const dir = `${probe.generatedRoot}/doctest`;
    deps.push({
      dep: 'doctest',
      source: 'system doctest-dev (/usr/include/doctest)',
      cmakeArgs: [`-DFETCHCONTENT_SOURCE_DIR_DOCTEST=${dir}`],
      generate: { kind: 'doctest-from-system', dir },
    });
  } else
    missing.push({
      dep: 'doctest',
      fix: 'sudo apt-get install doctest-dev, or put doctest 2.4.12 in <deps-dir>/doctest',
    });

  const fmt = fromDir('fmt');
  if (fmt) deps.push({ dep: 'fmt', source: fmt, cmakeArgs: [`-DFETCHCONTENT_SOURCE_DIR_FMT=${fmt}`] });
  else if (probe.system.fmt)
    deps.push({ dep: 'fmt', source: 'system libfmt-dev (USE_SYSTEM_FMT=ON)', cmakeArgs: ['-DUSE_SYSTEM_FMT=ON'] });
  else missing.push({ dep: 'fmt', fix: 'sudo apt-get install libfmt-dev, or put fmt 12.1.0 in <deps-dir>/fmt' });

  const gguf = fromDir('gguflib');
  if (gguf)
    deps.push({ dep: 'gguflib', source: gguf, cmakeArgs: [`-DFETCHCONTENT_SOURCE_DIR_${upper('gguflib')}=${gguf}`] });
  else {
    deps.push({
      dep: 'gguflib',
      source: 'none: GGUF support disabled (MLX_BUILD_GGUF=OFF)',
      cmakeArgs: ['-DMLX_BUILD_GGUF=OFF'],
    });
    notes.push(
      'gguflib is not available offline, so GGUF is off; the gguf test cases fail on the baseline too and count as pre-existing.',
    );
  }

  if (probe.platform === 'darwin') {
    const metal = fromDir('metal_cpp');
    if (metal)
      deps.push({ dep: 'metal_cpp', source: metal, cmakeArgs: [`-DFETCHCONTENT_SOURCE_DIR_METAL_CPP=${metal}`] });
    else missing.push({ dep: 'metal_cpp', fix: "unzip Apple's metal-cpp 26 archive into <deps-dir>/metal_cpp" });
  }

  return {
    deps,
    missing,
    notes,
    cmakeArgs: ['-DFETCHCONTENT_FULLY_DISCONNECTED=ON', ...deps.flatMap((d) => d.cmakeArgs)],
  };
}
