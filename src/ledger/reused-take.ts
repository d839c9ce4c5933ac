import { toAttempt } from './attempt-reads.js';
import { filesSavedStatements } from './file-rows.js';
import { putItemsStatements } from './item-rows.js';
import type { LedgerContext } from './ledger-context.js';
import type { AttemptRecord, FileRecord, SavedTake } from './records.js';
import { attemptEventOf } from './runs-and-events.js';

/** A saved take with the request its attempt sent: what finds it again by its request key (runner/take-index.ts). */
export interface ReusableTake extends SavedTake {
  requestBody: string;
  /** The key of its attempt: what a copy of it names as its source. */
  idempotencyKey: string;
  expiresAt: string | null;
  vars: string | null;
}

/**
 * A saved take copied to another item (or back to its own) because it answers that item's
 * request exactly (runner/reuse-takes.ts): an accepted attempt with no job of its own and no
 * charge, its files saved, its item done. `from` is the take it copies.
 */
export interface ReusedTake {
  itemId: string;
  seq: number;
  take: number;
  requestBody: string;
  requestHash: string;
  vars: string | null;
  from: Pick<
    ReusableTake,
    'itemId' | 'attemptId' | 'take' | 'jobId' | 'expiresAt' | 'completedAt' | 'idempotencyKey'
  >;
  files: ReadonlyArray<Omit<FileRecord, 'attemptId' | 'savedAt'>>;
}

/** A reused take's attempt key: never sent, unique per item and attempt, naming the take it copies. */
export function reusedKey(reused: ReusedTake): string {
  return `reused:${reused.from.attemptId}:${reused.itemId}:${reused.seq}`;
}

/** What the `take_reused` event says: which take was copied, of which item and job. */
export function reusedDetail(reused: ReusedTake): Record<string, unknown> {
  return {
    from_item: reused.from.itemId,
    from_attempt: reused.from.attemptId,
    from_take: reused.from.take,
    job: reused.from.jobId,
    take: reused.take,
  };
}

/**
 * Ledger.recordReusedTake: the attempt with its `take_reused` event, its files saved and its item
 * done, in one transaction (one round trip on PostgreSQL): each statement finds the new attempt
 * by its key, so none waits for another's answer.
 */
export async function recordReusedTake(c: LedgerContext, reused: ReusedTake): Promise<AttemptRecord> {
  const at = c.at();
  const key = { key: reusedKey(reused) };
  const saved = filesSavedStatements(c, key, reused.files);
  const done = {
    state: 'done' as const,
    requestHash: reused.requestHash,
    retriesUsed: 0,
    errorCode: null,
    errorMessage: null,
  };
  const results = await c.db.batch([
    c.q
      .insertInto('attempts')
      .values({
        batch_id: c.batchId,
        item_id: reused.itemId,
        seq: reused.seq,
        idempotency_key: key.key,
        request_body: reused.requestBody,
        request_hash: reused.requestHash,
        reserved_micros: 0,
        state: 'accepted',
        job_status: 'succeeded',
        expires_at: reused.from.expiresAt,
        // The copy's own times, in order: made now. Its result keeps the job's (resultOf).
        created_at: at,
        answered_at: at,
        completed_at: at,
        made_by_job: reused.from.jobId,
        copied_from: reused.from.idempotencyKey,
        take: reused.take,
        vars: reused.vars,
      })
      .compile(),
    attemptEventOf(c, key, 'take_reused', reusedDetail(reused)),
    ...saved,
    ...putItemsStatements(c, [{ itemId: reused.itemId, ...done }]),
  ]);
  // filesSavedStatements returns the attempt from its next-to-last statement.
  return toAttempt(results[2 + saved.length - 2]!.rows[0]);
}
