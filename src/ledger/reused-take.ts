import type { ItemUpdate } from './item-rows.js';
import type { AttemptRecord, FileRecord, SavedTake } from './records.js';

/** A saved take with the request its attempt sent: what finds it again by its request key (runner/take-index.ts). */
export interface ReusableTake extends SavedTake {
  requestBody: string;
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
  from: Pick<ReusableTake, 'itemId' | 'attemptId' | 'take' | 'jobId' | 'expiresAt' | 'completedAt'>;
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

/** The ledger steps recordReused composes (a Ledger has them; named here, not imported, so no cycle). */
interface ReuseSteps {
  atomically<T>(work: () => T): T;
  recordFilesSaved(attemptId: number, files: ReusedTake['files']): void;
  putItems(items: ReadonlyArray<{ itemId: string } & ItemUpdate>): void;
  getAttempt(id: number): AttemptRecord;
}

/**
 * Ledger.recordReusedTake, the same steps on both ledgers around their own insert: the attempt
 * (`insert`, with its `take_reused` event), its files saved, its item done, in one transaction.
 */
export function recordReused(ledger: ReuseSteps, reused: ReusedTake, insert: () => number): AttemptRecord {
  return ledger.atomically(() => {
    const id = insert();
    ledger.recordFilesSaved(id, reused.files);
    ledger.putItems([
      {
        itemId: reused.itemId,
        state: 'done',
        requestHash: reused.requestHash,
        retriesUsed: 0,
        errorCode: null,
        errorMessage: null,
      },
    ]);
    return ledger.getAttempt(id);
  });
}
