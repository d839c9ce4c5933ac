import type { Admission, AttemptRecord, NewAttempt } from '../ledger/index.js';
import { stopRedefined } from './redefined-stop.js';
import type { RunContext } from './run-context.js';
import { NO_ROOM_RETRY_MS } from './shared-runners.js';

/**
 * A shared ledger admits new attempts against every runner's slots and budget (claims.prepare).
 * An item another runner works waits for it; one that found no room goes back to the queue, its
 * redo kept, and is tried again shortly: the room other runners free wakes no one here.
 */
export async function admitShared(
  run: RunContext,
  fresh: ReadonlyArray<NewAttempt & { take: number }>,
  ahead: Admission['ahead'],
): Promise<AttemptRecord[]> {
  const shared = run.shared!;
  const budgetMicros = run.deps.manifest.budgetMicros;
  const definition = run.options.definition ?? null;
  const result = await shared.claims.prepare(fresh, {
    slotLimit: run.state.slotLimit,
    budgetMicros,
    revision: definition?.revision ?? null,
    ahead,
  });
  shared.admittedWith(result.batchInUse, run.state.unfinished + result.admitted.length);
  // Items ahead another runner took wait for it, as refused ones do, without being offered.
  for (const itemId of result.takenAhead ?? []) {
    run.state.queue.remove(itemId);
    shared.elsewhere(itemId);
  }
  const takes = new Map(fresh.map((attempt) => [attempt.itemId, attempt.take]));
  const now = run.deps.clock.now();
  if (result.redefined !== null) await stopRedefined(run, result.redefined);
  const unsent = result.redefined === null ? result.noRoom : fresh.map((attempt) => attempt.itemId);
  for (const itemId of [...result.elsewhere, ...unsent]) {
    if ((takes.get(itemId) ?? 1) > (run.state.item(itemId)?.latest?.take ?? 1)) run.state.redo(itemId);
    if (unsent.includes(itemId)) run.enqueue(itemId, now + NO_ROOM_RETRY_MS);
    else shared.elsewhere(itemId);
  }
  return result.admitted;
}
