/**
 * "Did you mean" for names a person typed: flags, commands, manifest fields. Bottom layer, no
 * imports, so the CLI and the manifest reader share one notion of "close enough".
 */

/**
 * Optimal string alignment distance: insertions, deletions, substitutions and adjacent swaps.
 * Three rows of the table at a time (a swap looks two rows back): a manifest with 100,000 unknown
 * keys compares each with every known one, and a whole table per call made that take seconds.
 * With `atMost`, stops as soon as the distance must exceed it and returns `atMost + 1`: a row's
 * least value never falls below the smaller of the row before's and the one before that's plus
 * one, so once both are past the limit no later row comes back under it.
 */
export function editDistance(a: string, b: string, atMost = Number.POSITIVE_INFINITY): number {
  const cols = b.length + 1;
  let [twoBack, previous, current] = rows(cols);
  for (let j = 0; j < cols; j++) previous[j] = j;
  let previousLeast = 0;
  for (let i = 1; i <= a.length; i++) {
    current[0] = i;
    let least = i;
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, twoBack[j - 2]! + 1);
      }
      current[j] = best;
      if (best < least) least = best;
    }
    if (least > atMost && previousLeast >= atMost) return atMost + 1;
    previousLeast = least;
    [twoBack, previous, current] = [previous, current, twoBack];
  }
  return Math.min(previous[b.length]!, atMost + 1);
}

/** Three rows of at least `cols` numbers, kept between calls: allocating them was most of a call's time. */
let kept: [Int32Array, Int32Array, Int32Array] = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];
function rows(cols: number): [Int32Array, Int32Array, Int32Array] {
  if (kept[0].length < cols) kept = [new Int32Array(cols), new Int32Array(cols), new Int32Array(cols)];
  return [kept[0], kept[1], kept[2]];
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
    // The distance is at least the difference in length: such a candidate cannot be closer.
    if (!shortened && Math.abs(needle.length - lower.length) >= bestDistance) continue;
    const distance = shortened ? 1 : editDistance(needle, lower, bestDistance - 1);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * `, did you mean 'x'?` or nothing, ready to append to a message. Quoted as a name, never in
 * backticks: in the library's words a name in backticks is an option, which the CLI words as its flag.
 */
export function didYouMean(word: string, candidates: Iterable<string>, quote = (s: string) => `'${s}'`) {
  const match = closestMatch(word, candidates);
  return match === null ? '' : `, did you mean ${quote(match)}?`;
}
