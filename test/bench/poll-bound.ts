/**
 * The best makespan any client polling every `intervalMs` can reach on a set of jobs, for scale
 * next to the measured figures. Jobs go in manifest order to the first free slot, and a slot is
 * free again only when a poll sees its job final:
 * - `list`: one poll clock for the whole batch (ticks at k * interval after the first POST), the
 *   way mediabatch follows GET /jobs;
 * - `per-job`: each job polled every interval from its own POST, the way the naive client does.
 * Network, ledger and download time count as zero, so real clients can only be slower.
 */
export function pollingMakespanMs(
  durationsMs: readonly number[],
  limit: number,
  intervalMs: number,
  mode: 'list' | 'per-job',
): number {
  const freeAt = Array.from({ length: limit }, () => 0);
  let makespan = 0;
  for (const duration of durationsMs) {
    let slot = 0;
    for (let i = 1; i < limit; i += 1) if (freeAt[i]! < freeAt[slot]!) slot = i;
    const start = freeAt[slot]!;
    const seenAt =
      mode === 'list'
        ? Math.ceil((start + duration) / intervalMs) * intervalMs
        : start + Math.ceil(duration / intervalMs) * intervalMs;
    freeAt[slot] = seenAt;
    makespan = Math.max(makespan, seenAt);
  }
  return makespan;
}
