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

/** How far a typo may stray: one edit per three letters, at least one and at most three. */
function typoBudget(word: string): number {
  return Math.min(3, Math.max(1, Math.floor(word.length / 3)));
}

/**
 * The candidate `word` most likely meant (case-insensitive), or null when none is close enough to
 * be a good guess. A shortened name ('budget' for 'budget_usd') counts as one slip. Ties go to the
 * earlier candidate, so callers list the likelier names first.
 */
export function closestMatch(word: string, candidates: Iterable<string>): string | null {
  if (word.length > 64) return null;
  const needle = word.toLowerCase();
  let best: string | null = null;
  let bestDistance = typoBudget(needle) + 1;
  for (const candidate of candidates) {
    const lower = candidate.toLowerCase();
    const shortened = needle.length >= 4 && lower.startsWith(needle) && lower !== needle;
    const distance = shortened ? 1 : editDistance(needle, lower);
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
