import type { Ledger } from './ledger.js';
import type { AttemptRecord, ReusedTake } from './records.js';

/**
 * Ledger.recordReusedTake, the same steps on both ledgers around their own insert: the attempt
 * (`insert`, with its `take_reused` event), its files saved, its item done, in one transaction.
 */
export function recordReused(
  ledger: Pick<Ledger, 'atomically' | 'recordFilesSaved' | 'putItems' | 'getAttempt'>,
  reused: ReusedTake,
  insert: () => number,
): AttemptRecord {
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
