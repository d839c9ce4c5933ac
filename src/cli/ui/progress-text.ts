import type { ItemState, ProgressSnapshot } from '../../index.js';
import { formatUsdHuman } from '../../money.js';

/**
 * The words both progress views print, so that the terminal UI and a CI log say the same thing.
 * null means "nothing worth a line": an item put back in the queue, the poller's own heartbeat.
 */
export function itemChangeLine(itemId: string, state: ItemState, detail: string | null): string | null {
  if (state === 'pending' && detail === null) return null;
  return `${itemId}: ${state.replace('_', ' ')}${detail ? ` (${detail})` : ''}`;
}

export function logLine(level: 'info' | 'warn' | 'error', message: string): string | null {
  if (level === 'info' && message.startsWith('polled:')) return null;
  return level === 'info' ? message : `${level}: ${message}`;
}

/**
 * A batch several runners share: the item counts are this runner's (the items it finished, and
 * those finished before it knew them), while the slots and the spend are the batch's, every
 * runner's. The words say whose each number is.
 */
const THIS_RUNNER = 'this runner: ';
const BY_THE_BATCH = " by the batch's runners";

export function summarize(snapshot: ProgressSnapshot): string {
  const { byState } = snapshot;
  const shared = snapshot.batchInUse !== null;
  const finished =
    byState.done + byState.failed + byState.budget_exceeded + byState.expired + byState.checks_failed;
  const budget = snapshot.budgetMicros === null ? '' : ` of ${formatUsdHuman(snapshot.budgetMicros)}`;
  const parts = [
    `${shared ? THIS_RUNNER : ''}${finished}/${snapshot.total} finished`,
    `${byState.done} done`,
    byState.failed ? `${byState.failed} failed` : '',
    byState.checks_failed ? `${byState.checks_failed} failed checks` : '',
    byState.budget_exceeded ? `${byState.budget_exceeded} over budget` : '',
    byState.expired ? `${byState.expired} expired` : '',
    slotsText(snapshot),
    snapshot.downloadsActive + snapshot.downloadsQueued
      ? `${snapshot.downloadsActive + snapshot.downloadsQueued} downloading`
      : '',
    `spent ${formatUsdHuman(snapshot.spentMicros)}${budget}${shared ? BY_THE_BATCH : ''}`,
    snapshot.draining ? 'draining' : '',
  ];
  return parts.filter(Boolean).join(', ');
}

/**
 * This run's slots in use; on a batch several runners share, the batch's slots in use by all of
 * them, then this runner's share. `title`: the live view's wording (`slots 3/10 in use`).
 */
export function slotsText(
  snapshot: Pick<ProgressSnapshot, 'unfinished' | 'slotLimit' | 'batchInUse'>,
  title = false,
): string {
  const { unfinished, slotLimit, batchInUse } = snapshot;
  const used = `${batchInUse === null ? unfinished : Math.max(batchInUse, unfinished)}/${slotLimit}`;
  const words = title ? `slots ${used} in use` : `${used} slots in use`;
  return batchInUse === null ? words : `${words}${BY_THE_BATCH}, ${unfinished} by this one`;
}

/** Whose the counts are, for a title: nothing for a batch one run holds. */
export function countsOwner(snapshot: Pick<ProgressSnapshot, 'batchInUse'>): string {
  return snapshot.batchInUse === null ? '' : ', this runner';
}

/** Whose the spend is, after it: nothing for a batch one run holds. */
export function spendOwner(snapshot: Pick<ProgressSnapshot, 'batchInUse'>): string {
  return snapshot.batchInUse === null ? '' : BY_THE_BATCH;
}
