/** Levenshtein distance: the fewest one-character edits that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row.push(
        Math.min(
          (previous[j] as number) + 1,
          (row[j - 1] as number) + 1,
          (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
        ),
      );
    previous = row;
  }
  return previous[b.length] as number;
}

/** The candidate nearest to `name` by edit distance (ties: alphabetical), or null when there is none. */
export function closestName(name: string, candidates: Iterable<string>): string | null {
  let best: { name: string; distance: number } | null = null;
  for (const candidate of [...candidates].sort()) {
    const distance = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (best === null || distance < best.distance) best = { name: candidate, distance };
  }
  return best?.name ?? null;
}
