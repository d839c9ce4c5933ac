import { getAttempt } from './attempt-reads.js';
import type { LedgerContext } from './ledger-context.js';
import type { AttemptRecord } from './records.js';

/**
 * The record of a paid result (docs/results.md, "The record of a result"): the attempt whose job
 * made the bytes, with its request, its times and its files. A take copied from it points at it
 * (`made_by_job`) and at the take it copied (`copied_from`); every reader that tells where a
 * copy's bytes came from (its sidecar, status, export, import) asks here, so all say the same.
 */
export interface ResultOfCopy {
  /** The attempt that sent the request and whose job made the bytes; null if the ledger lost it. */
  result: AttemptRecord | null;
  /** The take the copy was made from (itself a copy, or the result). */
  source: { itemId: string; take: number } | null;
}

/** What a copy points at; null for an attempt that sent its own request. */
export async function resultOfCopy(c: LedgerContext, attempt: AttemptRecord): Promise<ResultOfCopy | null> {
  if (!attempt.copiedFrom) return null;
  const result = attempt.madeByJob ? await attemptOfJob(c, attempt.madeByJob) : null;
  const [source] = await c.db.read(
    c.q
      .selectFrom('attempts')
      .select(['item_id as itemId', c.column<number>('attempts', 'take', 'take', 1).as('take')])
      .where('batch_id', '=', c.batchId)
      .where('idempotency_key', '=', attempt.copiedFrom)
      .compile(),
  );
  return { result, source: source ? { itemId: source.itemId, take: Number(source.take) } : null };
}

async function attemptOfJob(c: LedgerContext, jobId: string): Promise<AttemptRecord | null> {
  const [row] = await c.db.read(
    c.q
      .selectFrom('attempts')
      .select('id')
      .where('batch_id', '=', c.batchId)
      .where('job_id', '=', jobId)
      .compile(),
  );
  return row ? getAttempt(c, row.id) : null;
}
