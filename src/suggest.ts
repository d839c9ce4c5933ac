/**
 * "Did you mean" for names a person typed: flags, commands, manifest fields. Bottom layer, no
 * imports, so the CLI and the manifest reader share one notion of "close enough".
 */

/** Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps. */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      }
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** How far a typo may stray: one edit for short names, two from five letters, three from nine. */
export function typoBudget(word: string): number {
  return word.length < 5 ? 1 : word.length < 9 ? 2 : 3;
}

/**
 * The candidate closest to `word` within its typo budget (case-insensitive), or null. Ties go to
 * the earlier candidate, so callers list the likelier names first.
 */
export function closestMatch(word: string, candidates: Iterable<string>): string | null {
  const lower = word.toLowerCase();
  let best: string | null = null;
  let bestDistance = typoBudget(word) + 1;
  for (const candidate of candidates) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/** `, did you mean `x`?` or nothing, ready to append to a message. */
export function didYouMean(word: string, candidates: Iterable<string>, quote = (s: string) => `\`${s}\``) {
  const match = closestMatch(word, candidates);
  return match === null ? '' : `, did you mean ${quote(match)}?`;
}
