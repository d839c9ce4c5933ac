import type { ReadingLedger, RecordReads, TakeLedger } from '../../ledger/index.js';
import { priceTable } from '../ledger/cost-estimate.js';
import { EMPTY_VIEW, streamOf } from '../ledger/ledger-read.js';
import { savedFileProblems } from '../ledger/saved-file-problems.js';
import { planSourceOf } from '../plan-decisions/plan-source.js';
import type { PlanReads } from './plan-streamed.js';

/** What `plan` is built from: one SQLite row per item, streamed; prices and files only if asked. */
export async function planSource(
  ledger: (RecordReads & ReadingLedger & TakeLedger) | null,
  verify = false,
): Promise<PlanReads> {
  if (ledger === null) {
    const empty = planSourceOf(EMPTY_VIEW);
    return {
      ...empty,
      entries: streamOf(empty.entries),
      prices: async () => empty.prices(),
      itemFilePaths: () => streamOf(empty.itemFilePaths()),
      recorded: async (attempt) => attempt,
      reusableTakes: async () => [],
      rejected: [],
      attempt: async () => {
        throw new Error('no ledger: no attempt');
      },
    };
  }
  return {
    fileProblems: await savedFileProblems(ledger, verify),
    money: await ledger.moneyTotals(),
    unsaved: await ledger.unsavedSucceeded(),
    entries: ledger.itemEntries(),
    prices: async () => priceTable(await ledger.priceSamples()),
    itemFilePaths: () => ledger.itemFilePaths(),
    recorded: (attempt) => ledger.attemptRequest(attempt.id),
    reusableTakes: () => ledger.reusableTakes(),
    rejected: await ledger.rejectedAttempts(),
    failedTakes: await ledger.failedTakes(),
    attempt: (id) => ledger.getAttempt(id),
  };
}
