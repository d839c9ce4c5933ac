import { refreshBatchGallery } from '../../batch/gallery/gallery-refresh.js';
import type { Batch } from '../../batch/resolve/resolve-batch.js';
import type { Warn } from '../../batch/resolve/warnings.js';
import type { ReadingLedger, RecordReads, SharedLedger, TakeLedger } from '../../ledger/index.js';
import type { RunOutcome } from './run-outcome.js';

/**
 * The gallery as a run ends (refreshBatchGallery), except while other runners of its shared batch
 * still run (its own run row already ended, so the count is of the others): the page would be
 * written again by each of them, a whole-batch read and write per runner, so it is left to the
 * last to end. Two ending together both write it; one cannot leave it to a runner that has ended.
 */
export async function galleryAtEnd(
  batch: Batch,
  ledger: SharedLedger & RecordReads & ReadingLedger & TakeLedger,
  outcome: Pick<RunOutcome, 'ledger'>,
  warn: Warn,
): Promise<Pick<RunOutcome, 'gallery' | 'galleryLeftTo'>> {
  const others = await ledger.liveRuns();
  if (others > 0) return { gallery: null, galleryLeftTo: others };
  return { gallery: await refreshBatchGallery(batch, ledger, outcome, warn), galleryLeftTo: 0 };
}
