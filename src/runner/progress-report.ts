import { spentMicros } from '../ledger/index.js';
import type { RunContext } from './run-context.js';

/**
 * The loop turns once per answer, and a snapshot walks every item and sums the ledger's money:
 * with thousands of items that was quadratic, so a UI gets at most one snapshot per 200 ms.
 */
const PROGRESS_EVERY_MS = 200;
/**
 * The money sum is a pass over every attempt of the batch, so its cost grows with the run: at
 * 6,000 attempts it took 4-5 ms, five times a second (issue 52). It is read again only after 25
 * times as long as the last sum took, so that it never takes more than about 4% of the run
 * whatever the batch's size; between two sums a snapshot shows the last one (the end of the
 * run always reads it afresh).
 */
const MONEY_COST_SHARE = 25;

interface Pace {
  progressAt: number;
  moneyAt: number;
  moneyCostMs: number;
  spent: number;
}

const paces = new WeakMap<RunContext, Pace>();

export async function reportProgress(run: RunContext, final = false): Promise<void> {
  const now = performance.now();
  const pace = paces.get(run) ?? {
    progressAt: Number.NEGATIVE_INFINITY,
    moneyAt: Number.NEGATIVE_INFINITY,
    moneyCostMs: 0,
    spent: 0,
  };
  paces.set(run, pace);
  if (!final && now - pace.progressAt < PROGRESS_EVERY_MS) return;
  pace.progressAt = now;
  if (final || now - pace.moneyAt >= MONEY_COST_SHARE * pace.moneyCostMs) {
    pace.spent = spentMicros(await run.deps.ledger.moneyTotals());
    pace.moneyAt = now;
    pace.moneyCostMs = performance.now() - now;
  }
  run.deps.observer.progress({
    total: run.state.itemCount,
    byState: run.state.countByState(),
    unfinished: run.state.unfinished,
    slotLimit: run.state.slotLimit,
    batchInUse: run.shared?.batchInUse ?? null,
    downloadsActive: run.downloads.activeCount,
    downloadsQueued: run.downloads.queuedCount,
    unsavedLimit: run.unsaved.bound(run.state.slotLimit),
    savingFirst: run.unsaved.held,
    spentMicros: pace.spent,
    budgetMicros: run.deps.manifest.budgetMicros,
    draining: run.state.stop?.kind === 'draining',
  });
}
