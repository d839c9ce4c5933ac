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
  return Math.max(0, ...placed(durationsMs, limit, intervalMs, mode).map((job) => job.seenAt));
}

/**
 * The fewest API requests a `list` poller (above) sends for the same jobs: one POST per job, and
 * at each tick from the first to the last one look listing every job it still follows (POSTed
 * before the tick, not yet seen final) in pages of `pageSize`, at least one page. No account read,
 * no per-job GET, no look that finds nothing new: a real list poller can only send more.
 */
export function listPollerRequests(
  durationsMs: readonly number[],
  limit: number,
  intervalMs: number,
  pageSize: number,
): number {
  const jobs = placed(durationsMs, limit, intervalMs, 'list');
  const lastTick = Math.max(0, ...jobs.map((job) => job.seenAt)) / intervalMs;
  let pages = 0;
  for (let tick = 1; tick <= lastTick; tick += 1) {
    const at = tick * intervalMs;
    const followed = jobs.filter((job) => job.start < at && job.seenAt >= at).length;
    pages += Math.max(1, Math.ceil(followed / pageSize));
  }
  return jobs.length + pages;
}

/** Each job's start and the moment a poll sees it final, placed greedily in manifest order. */
function placed(
  durationsMs: readonly number[],
  limit: number,
  intervalMs: number,
  mode: 'list' | 'per-job',
): Array<{ start: number; seenAt: number }> {
  const freeAt = Array.from({ length: limit }, () => 0);
  return durationsMs.map((duration) => {
    let slot = 0;
    for (let i = 1; i < limit; i += 1) if (freeAt[i]! < freeAt[slot]!) slot = i;
    const start = freeAt[slot]!;
    const seenAt =
      mode === 'list'
        ? Math.ceil((start + duration) / intervalMs) * intervalMs
        : start + Math.ceil(duration / intervalMs) * intervalMs;
    freeAt[slot] = seenAt;
    return { start, seenAt };
  });
}
