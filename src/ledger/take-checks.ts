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

/** A take's files with its check, in one step of its own (LedgerDatabase.write). */
export function recordCheckedFiles(
  c: LedgerContext,
  attemptId: number,
  files: ReadonlyArray<Omit<FileRecord, 'attemptId' | 'savedAt'>>,
  check: TakeCheckInput,
  item?: { itemId: string; update: ItemUpdate },
): Promise<void> {
  const statements = [
    ...filesSavedStatements(c, attemptId, files),
    ...checkStatements(c, attemptId, check),
    ...(item ? itemStateStatements(c, item.itemId, item.update) : []),
  ];
  return c.db.write(statements, () => undefined);
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
  const row = {
    outcome: check.outcome,
    reason: check.reason,
    video: check.video,
    score: check.score,
    checks: check.checks,
    checked_at: c.at(),
  };
  return [
    c.q
      .insertInto('take_checks')
      .values({ attempt_id: attemptId, ...row })
      .onConflict((conflict) => conflict.column('attempt_id').doUpdateSet(row))
      .compile(),
    attemptEventOf(c, attemptId, 'take_checked', { outcome: check.outcome, reason: check.reason }),
  ];
}

/**
 * Every take check of the batch, or only those of the attempts named, in attempt order; none on a
 * ledger read before the table existed.
 */
export async function takeChecks(
  c: LedgerContext,
  attemptIds?: readonly number[],
): Promise<TakeCheckRecord[]> {
  if (!c.has('take_checks') || attemptIds?.length === 0) return [];
  return c.db.read(
    checksQuery(c)
      .$if(attemptIds !== undefined, (query) => query.where(c.db.sql.inList('t.attempt_id', attemptIds!)))
      .orderBy('t.attempt_id')
      .compile(),
  );
}

/** One take's check (its sidecar says it, docs/results.md); null when it was never checked. */
export async function takeCheckOf(c: LedgerContext, attemptId: number): Promise<TakeCheckRecord | null> {
  if (!c.has('take_checks')) return null;
  const rows = await c.db.read(checksQuery(c).where('t.attempt_id', '=', attemptId).compile());
  return rows[0] ?? null;
}

/**
 * How many takes of each item failed their check, by the request they were sent for: what an
 * item's re-rolls are counted against (runner/rerolls-due.ts), for `run` and `plan` alike.
 */
export async function failedTakes(c: LedgerContext): Promise<FailedTakes[]> {
  if (!c.has('take_checks')) return [];
  return c.db.read(
    c.q
      .selectFrom('take_checks as t')
      .innerJoin('attempts as a', 'a.id', 't.attempt_id')
      .select(['a.item_id as itemId', 'a.request_hash as requestHash'])
      .select((eb) => eb.fn.countAll<number>().as('takes'))
      .where('a.batch_id', '=', c.batchId)
      .where('t.outcome', '=', 'failed')
      .groupBy(['a.item_id', 'a.request_hash'])
      .compile(),
  );
}

/** The failed takes of one item's one request (Ledger.failedTakes). */
export interface FailedTakes {
  itemId: string;
  requestHash: string;
  takes: number;
}

function checksQuery(c: LedgerContext) {
  return c.q
    .selectFrom('take_checks as t')
    .innerJoin('attempts as a', 'a.id', 't.attempt_id')
    .select([
      't.attempt_id as attemptId',
      't.outcome',
      't.reason',
      't.video',
      // Read as null on a ledger only read, from before checks of your own.
      c.column<number | null>('take_checks', 'score', 't.score', null).as('score'),
      c.column<string | null>('take_checks', 'checks', 't.checks', null).as('checks'),
      't.checked_at as checkedAt',
      'a.job_id as jobId',
    ])
    .where('a.batch_id', '=', c.batchId);
}

/** A take's check as every document shows it (status, export, the sidecar, the gallery): the score only where one was given. */
export interface ShownCheck {
  outcome: TakeCheckRecord['outcome'];
  reason: string | null;
  score?: number;
}

export function shownCheck(check: Pick<TakeCheckRecord, 'outcome' | 'reason' | 'score'>): ShownCheck {
  const shown: ShownCheck = { outcome: check.outcome, reason: check.reason };
  if (check.score !== null && check.score !== undefined) shown.score = check.score;
  return shown;
}

/** The checks of these attempts (a page of the gallery's), shown, by attempt; none checked: absent. */
export async function checksOfAttempts(
  c: LedgerContext,
  attemptIds: readonly number[],
): Promise<Map<number, ShownCheck>> {
  const shown = new Map<number, ShownCheck>();
  if (attemptIds.length === 0 || !c.has('take_checks')) return shown;
  const rows = await c.db.read(
    c.q
      .selectFrom('take_checks as t')
      .select([
        't.attempt_id as attemptId',
        't.outcome',
        't.reason',
        c.column<number | null>('take_checks', 'score', 't.score', null).as('score'),
      ])
      .where(c.db.sql.inList('t.attempt_id', attemptIds))
      .compile(),
  );
  for (const row of rows) shown.set(row.attemptId, shownCheck(row));
  return shown;
}
