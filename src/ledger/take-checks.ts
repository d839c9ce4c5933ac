import { filesSavedStatements } from './file-rows.js';
import { type ItemUpdate, itemStateStatements } from './item-rows.js';
import type { LedgerContext } from './ledger-context.js';
import type { FileRecord, TakeCheckRecord } from './records.js';
import { attemptEventOf } from './runs-and-events.js';

/**
 * The take_checks table: each saved take's check against its request (docs/checks.md), one row per
 * attempt, written with the take's files and its item's new state in one transaction, with a
 * `take_checked` event. A later check of the same take (`mediabatch check`) replaces the row.
 */

export type TakeCheckInput = Omit<TakeCheckRecord, 'attemptId' | 'checkedAt'>;

export async function recordCheckedFiles(
  c: LedgerContext,
  attemptId: number,
  files: ReadonlyArray<Omit<FileRecord, 'attemptId' | 'savedAt'>>,
  check: TakeCheckInput,
  item?: { itemId: string; update: ItemUpdate },
): Promise<void> {
  await c.db.batch([
    ...filesSavedStatements(c, attemptId, files),
    ...checkStatements(c, attemptId, check),
    ...(item ? itemStateStatements(c, item.itemId, item.update) : []),
  ]);
}

/** A saved take checked again: its row replaced, with its item's new state when that changes. */
export async function recordTakeCheck(
  c: LedgerContext,
  attemptId: number,
  check: TakeCheckInput,
  item?: { itemId: string; update: ItemUpdate },
): Promise<void> {
  await c.db.batch([
    ...checkStatements(c, attemptId, check),
    ...(item ? itemStateStatements(c, item.itemId, item.update) : []),
  ]);
}

function checkStatements(c: LedgerContext, attemptId: number, check: TakeCheckInput) {
  const row = { outcome: check.outcome, reason: check.reason, video: check.video, checked_at: c.at() };
  return [
    c.q
      .insertInto('take_checks')
      .values({ attempt_id: attemptId, ...row })
      .onConflict((conflict) => conflict.column('attempt_id').doUpdateSet(row))
      .compile(),
    attemptEventOf(c, attemptId, 'take_checked', { outcome: check.outcome, reason: check.reason }),
  ];
}

/** Every take check of the batch, in attempt order; none on a ledger read before the table existed. */
export async function takeChecks(c: LedgerContext): Promise<TakeCheckRecord[]> {
  if (!c.has('take_checks')) return [];
  return c.db.read(
    c.q
      .selectFrom('take_checks as t')
      .innerJoin('attempts as a', 'a.id', 't.attempt_id')
      .select([
        't.attempt_id as attemptId',
        't.outcome',
        't.reason',
        't.video',
        't.checked_at as checkedAt',
        'a.job_id as jobId',
      ])
      .where('a.batch_id', '=', c.batchId)
      .orderBy('t.attempt_id')
      .compile(),
  );
}
