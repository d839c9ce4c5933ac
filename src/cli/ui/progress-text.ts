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
  const finished = finishedOf(byState);
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
    snapshot.savingFirst ? `saving first (at most ${snapshot.unsavedLimit} paid and unsaved)` : '',
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

/** Items finished (in a final state) in a snapshot's counts. */
export function finishedOf(byState: Readonly<Record<ItemState, number>>): number {
  return byState.done + byState.failed + byState.budget_exceeded + byState.expired + byState.checks_failed;
}

/**
 * A long run's pace for a log line: items finished per second since the first line, and when the
 * rest would be finished at that pace. Nothing until an item has finished since then.
 */
export function rateAndEta(
  since: { atMs: number; finished: number },
  now: { atMs: number; finished: number },
  total: number,
): string | null {
  const seconds = (now.atMs - since.atMs) / 1000;
  const finished = now.finished - since.finished;
  if (seconds <= 0 || finished <= 0) return null;
  const rate = finished / seconds;
  const left = Math.max(0, total - now.finished);
  const shown = rate >= 10 ? rate.toFixed(0) : rate.toFixed(1);
  return `${shown} items/s, ETA ${left === 0 ? 'now' : clockWords(left / rate)}`;
}

/** `45s`, `12m05s`, `3h07m`: a time left, for people. */
function clockWords(seconds: number): string {
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole}s`;
  const minutes = Math.floor(whole / 60);
  if (minutes < 60) return `${minutes}m${String(whole % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}
