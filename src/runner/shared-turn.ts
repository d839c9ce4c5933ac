import { adoptItems } from './restore.js';
import type { RunContext } from './run-context.js';
import { namesOf } from './shown-ids.js';

/**
 * One turn of a run on a shared ledger (shared-runners.ts), when its leases are due: renews them,
 * drops the work of items another runner took over, and reads again the items other runners let
 * go, adopting what is left of them (an unanswered POST resent with its key, a job followed, files
 * saved). A run that stops adopts nothing more.
 */
export async function sharedTurn(run: RunContext): Promise<void> {
  const shared = run.shared;
  const idle = isIdle(run);
  if (shared === null || !shared.renewalDue(run.deps.clock.now(), idle)) return;
  // Idle here, yet holding leases (a job it could not fetch, say): they go, so that no runner waits
  // for an item nobody works; this run or another adopts it again below.
  if (idle) await shared.claims.release();
  const lost = await shared.claims.renew();
  for (const itemId of lost) dropWork(run, itemId);
  if (lost.length > 0)
    run.deps.observer.log(
      'warn',
      `${namesOf(lost)}: another runner of this batch took ${lost.length === 1 ? 'it' : 'them'} over (this run's lease lapsed)`,
    );
  const held = new Set(
    [...(await shared.claims.heldElsewhere())].filter((id) => run.state.item(id) !== undefined),
  );
  for (const itemId of held) run.state.queue.remove(itemId);
  // A run whose items other runners leased ahead (claims.prepare) may admit nothing for a while:
  // its progress line still counts the batch's slots, and says they are the batch's runners'.
  if (shared.batchInUse === null) shared.admittedWith(await shared.claims.slotsInUse(), run.state.unfinished);
  const back = shared.settle(lost, held);
  if (back.length > 0 && run.state.stop === null) await adoptItems(run, back);
}

/** Another runner works this item now: this run neither submits it nor follows its job. */
function dropWork(run: RunContext, itemId: string): void {
  run.state.queue.remove(itemId);
  for (const [jobId, watched] of run.state.watchedJobs())
    if (watched.attempt.itemId === itemId) run.state.unwatch(jobId);
}

/** Nothing of this run's own in flight, queued or being saved. */
export function isIdle(run: RunContext): boolean {
  return run.state.unfinished === 0 && run.state.queue.length === 0 && run.downloads.idle;
}
