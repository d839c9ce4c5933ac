import { ATTEMPT_COLUMNS, toAttempt } from './attempt-reads.js';
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

/**
 * A take of a result the service still holds, to be fetched again from its job (a GET, nothing
 * paid) because no saved take of its request is intact (runner/held-results.ts): a copy of that
 * result whose files come from the service instead of the disk.
 */
export type TakeToFetch = Omit<ReusedTake, 'files'>;

/** A reused take's attempt key: never sent, unique per item and attempt, naming the take it copies. */
export function reusedKey(reused: TakeToFetch): string {
  return `reused:${reused.from.attemptId}:${reused.itemId}:${reused.seq}`;
}

/** What the `take_reused` and `take_fetched` events say: which take was copied, of which item and job. */
export function reusedDetail(reused: TakeToFetch): Record<string, unknown> {
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
  const key = { key: reusedKey(reused) };
  const attempt = copyAttempt(c, reused).compile();
  const saved = filesSavedStatements(c, key, reused.files);
  const results = await c.db.batch([
    attempt,
    attemptEventOf(c, key, 'take_reused', reusedDetail(reused)),
    ...saved,
    ...putItemsStatements(c, [{ itemId: reused.itemId, ...itemNow(reused, 'done') }]),
  ]);
  // filesSavedStatements returns the attempt from its next-to-last statement.
  return toAttempt(results[2 + saved.length - 2]!.rows[0]);
}

/**
 * Ledger.recordTakeToFetch: the same attempt as a copy's, pointing at its result, with a
 * `take_fetched` event and no files yet, its item in flight until the result's job is fetched
 * into it (a killed run's next run fetches it, as it fetches any copy whose files are not there).
 */
export async function recordTakeToFetch(c: LedgerContext, take: TakeToFetch): Promise<AttemptRecord> {
  const [inserted] = await c.db.batch([
    copyAttempt(c, take).returning(ATTEMPT_COLUMNS).compile(),
    attemptEventOf(c, { key: reusedKey(take) }, 'take_fetched', reusedDetail(take)),
    ...putItemsStatements(c, [{ itemId: take.itemId, ...itemNow(take, 'in_flight') }]),
  ]);
  return toAttempt(inserted!.rows[0]);
}

/** A copy's attempt: accepted, no job of its own and no charge, pointing at its result. */
function copyAttempt(c: LedgerContext, copy: TakeToFetch) {
  // The copy's own times, in order: made now. Its result keeps the job's (resultOf).
  const at = c.at();
  return c.q.insertInto('attempts').values({
    batch_id: c.batchId,
    item_id: copy.itemId,
    seq: copy.seq,
    idempotency_key: reusedKey(copy),
    request_body: copy.requestBody,
    request_hash: copy.requestHash,
    reserved_micros: 0,
    state: 'accepted',
    job_status: 'succeeded',
    expires_at: copy.from.expiresAt,
    created_at: at,
    answered_at: at,
    completed_at: at,
    made_by_job: copy.from.jobId,
    copied_from: copy.from.idempotencyKey,
    take: copy.take,
    vars: copy.vars,
  });
}

function itemNow(copy: TakeToFetch, state: 'done' | 'in_flight') {
  return { state, requestHash: copy.requestHash, retriesUsed: 0, errorCode: null, errorMessage: null };
}
