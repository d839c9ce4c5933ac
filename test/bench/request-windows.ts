/** The most events (request times, epoch ms) that fall in any half-open window [t, t + windowMs). */
export function maxInWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end += 1) {
    while (sorted[end]! - sorted[start]! >= windowMs) start += 1;
    most = Math.max(most, end - start + 1);
  }
  return most;
}
