import { createHash } from 'node:crypto';

/**
 * Everything verify's checks read, gathered by the caller: the same inputs
 * give the same result, so a passing result saved for them can stand for a
 * new run (`pr --push` reuses verify's).
 */
/** Whether a run builds without network: `--offline`, or a folder of local dependencies, which implies it. */
export function buildsOffline(o: { offline?: boolean | undefined; depsDir?: string | undefined }): boolean {
  return o.offline === true || o.depsDir !== undefined;
}

export interface ReadinessInputParts {
  /** The tool's version: another version may check differently. */
  tool: string;
  platform: string;
  /** The hash of the rendered series (`plan.inputHash`). */
  inputHash: string;
  /** The applied commit and tree of the checkout, which the checks build and read. */
  applied: { commit: string; tree: string };
  /** The files the checks read that the series hash does not cover (config, pr/, mutants, twin, shims): path -> digest, null when absent. */
  files: Readonly<Record<string, string | null>>;
  /** The environment variables that choose the tools the checks run (PATH, CXX, CLANGXX, SPHINXBUILD). */
  tools: Readonly<Record<string, string | undefined>>;
  /** The check ids left out (`--skip`), in report order. */
  skipped: readonly string[];
  /** The options that change how the checks run. */
  options: {
    mutants?: string | undefined;
    metalCpp?: string | undefined;
    include?: readonly string[] | undefined;
    requireMetal?: boolean | undefined;
    offline?: boolean | undefined;
    depsDir?: string | undefined;
    sanitize?: string | undefined;
    cxx?: string | undefined;
    debug?: boolean | undefined;
    upstreamCi?: boolean | undefined;
    cmakeArgs?: readonly string[] | undefined;
  };
}

/**
 * The inputs of a run of verify's checks as one JSON text, the same for equal
 * inputs whatever the order they came in: an option left out and its default
 * give the same text (verify's `--mutants all` and pr's, which has no
 * `--mutants`). Pure.
 */
export function readinessInputs(parts: ReadinessInputParts): string {
  const o = parts.options;
  const sorted = <T>(record: Readonly<Record<string, T>>) =>
    Object.fromEntries(
      Object.keys(record)
        .sort()
        .map((key) => [key, record[key] ?? null]),
    );
  return JSON.stringify({
    tool: parts.tool,
    platform: parts.platform,
    inputHash: parts.inputHash,
    applied: { commit: parts.applied.commit, tree: parts.applied.tree },
    files: sorted(parts.files),
    tools: sorted(parts.tools),
    skipped: [...parts.skipped],
    options: {
      mutants: o.mutants ?? 'all',
      metalCpp: o.metalCpp ?? null,
      include: [...(o.include ?? [])],
      requireMetal: o.requireMetal === true,
      offline: buildsOffline(o),
      depsDir: o.depsDir ?? null,
      sanitize: o.sanitize ?? null,
      cxx: o.cxx ?? null,
      debug: o.debug === true,
      upstreamCi: o.upstreamCi === true,
      cmakeArgs: [...(o.cmakeArgs ?? [])],
    },
  });
}

/** A short name of the inputs, to show: the first 12 hex digits of their SHA-256. */
export function inputsName(inputs: string): string {
  return createHash('sha256').update(inputs).digest('hex').slice(0, 12);
}
