import type { FileProblems } from '../../documents/file-problems.js';
import { type LedgerView, unsavedOf } from '../../documents/status-view.js';
import {
  type AttemptRecord,
  type ItemEntry,
  jobOfBytes,
  type MoneyTotals,
  moneyTotalsOf,
  type ReusableTake,
} from '../../ledger/index.js';
import { isRejectedAttempt } from '../../runner/fallback.js';
import { latestAttempts, type RecordedRequest } from '../../runner/item-plan.js';
import { type PriceTable, pricesSeen } from '../ledger/cost-estimate.js';

/**
 * What the plan is computed from besides the manifest. `plan` reads it from SQLite, one row per
 * item and only what it uses (docs/performance.md); planSourceOf derives the same from a ledger
 * held in memory whole.
 */
export interface PlanSource {
  /** Each item the ledger knows, with its row and latest attempt: those with a row first. */
  entries: Iterable<ItemEntry>;
  money: MoneyTotals;
  /** Read only when an item is to be submitted: a plan with nothing to submit prices nothing. */
  prices: () => PriceTable;
  /** Succeeded jobs whose files are not saved yet. */
  unsaved: readonly AttemptRecord[];
  /** Every saved file as [item id, path], in the ledger's file order; read only when needed. */
  itemFilePaths: () => Iterable<readonly [string, string]>;
  /** An entry's attempt as recorded, body and hash: read only for an item whose hash differs. */
  recorded: RecordedRequest;
  /** Every saved take with its request, read only when an item would be paid for or is expired. */
  reusableTakes: () => readonly ReusableTake[];
  /** Items whose saved files are not as saved, by id; absent: the files were not looked at. */
  fileProblems?: FileProblems;
  /** The jobs moderation rejected (runner/fallback.ts); absent: none. */
  rejected?: readonly AttemptRecord[];
}

export function planSourceOf(view: LedgerView): PlanSource {
  const latest = latestAttempts(view.attempts);
  const withRecord = new Set(view.items.map((record) => record.itemId));
  const entries: ItemEntry[] = view.items.map((record) => ({
    itemId: record.itemId,
    record,
    attempt: latest.get(record.itemId),
  }));
  for (const [itemId, attempt] of latest) {
    if (!withRecord.has(itemId)) entries.push({ itemId, record: undefined, attempt });
  }
  return {
    entries,
    money: moneyTotalsOf(view.attempts),
    prices: () => pricesSeen(view.attempts),
    unsaved: unsavedOf(view.attempts),
    // Held whole: an entry's attempt is already the recorded one.
    recorded: (attempt) => attempt,
    rejected: view.attempts.filter(isRejectedAttempt),
    reusableTakes: () => reusableTakesOf(view),
    itemFilePaths: () => {
      const itemOf = new Map(view.attempts.map((attempt) => [attempt.id, attempt.itemId]));
      return view.files.flatMap((file) => {
        const itemId = itemOf.get(file.attemptId);
        return itemId === undefined ? [] : [[itemId, file.path] as const];
      });
    },
  };
}

/** The ledger's reusableTakes, from a ledger held in memory whole. */
function reusableTakesOf(view: LedgerView): ReusableTake[] {
  const takes = new Map<number, ReusableTake>();
  for (const attempt of view.attempts) {
    if (!attempt.filesSaved) continue;
    takes.set(attempt.id, {
      itemId: attempt.itemId,
      attemptId: attempt.id,
      take: attempt.take ?? 1,
      jobId: jobOfBytes(attempt),
      amountMicros: attempt.amountMicros,
      refundedMicros: attempt.refundedMicros,
      completedAt: attempt.completedAt,
      requestBody: attempt.requestBody,
      idempotencyKey: attempt.idempotencyKey,
      expiresAt: attempt.expiresAt,
      vars: attempt.vars ?? null,
      files: [],
    });
  }
  for (const file of view.files)
    takes
      .get(file.attemptId)
      ?.files.push({ idx: file.idx, path: file.path, sha256: file.sha256, bytes: file.bytes });
  return [...takes.values()].filter((take) => take.files.length > 0);
}
