import type { ItemState } from '../ledger/records.js';
import { formatUsdHuman } from '../money.js';
import type { ProgressSnapshot } from '../runner/reporter.js';

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

export function summarize(snapshot: ProgressSnapshot): string {
  const { byState } = snapshot;
  const finished = byState.done + byState.failed + byState.budget_exceeded + byState.expired;
  const budget = snapshot.budgetMicros === null ? '' : ` of ${formatUsdHuman(snapshot.budgetMicros)}`;
  const parts = [
    `${finished}/${snapshot.total} finished`,
    `${byState.done} done`,
    byState.failed ? `${byState.failed} failed` : '',
    byState.budget_exceeded ? `${byState.budget_exceeded} over budget` : '',
    byState.expired ? `${byState.expired} expired` : '',
    slotsText(snapshot),
    snapshot.downloadsActive + snapshot.downloadsQueued
      ? `${snapshot.downloadsActive + snapshot.downloadsQueued} downloading`
      : '',
    `spent ${formatUsdHuman(snapshot.spentMicros)}${budget}`,
    snapshot.draining ? 'draining' : '',
  ];
  return parts.filter(Boolean).join(', ');
}

/** This run's slots; on a shared batch, the batch's slots in use by every runner, and this runner's share. */
export function slotsText(snapshot: Pick<ProgressSnapshot, 'unfinished' | 'slotLimit' | 'batchInUse'>): string {
  if (snapshot.batchInUse === null) return `${snapshot.unfinished}/${snapshot.slotLimit} slots in use`;
  const inUse = Math.max(snapshot.batchInUse, snapshot.unfinished);
  return `${inUse}/${snapshot.slotLimit} slots of the batch in use, ${snapshot.unfinished} by this runner`;
}
