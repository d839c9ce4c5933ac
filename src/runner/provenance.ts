import { takePath } from '../downloads/preserve-take.js';
import type { SidecarCheck, SidecarFacts } from '../downloads/sidecar.js';
import {
  type AttemptRecord,
  jobOfBytes,
  type RecordReads,
  type ResultOfCopy,
  type RunLedger,
  shownCheck,
  type TakeLedger,
} from '../ledger/index.js';
import type { OutputStore } from '../storage/output-store.js';
import { MEDIABATCH_VERSION } from '../version.js';

/**
 * The ledger side of what lies beside each output: its provenance sidecar and the earlier takes a
 * redo keeps (docs/gallery.md). The files themselves are written by src/downloads.
 */

/**
 * `kept`: what KeptTakes.recorded says of the attempt's take (null: no keeper chosen for its item).
 * `copy`: for a copied take, what it points at (Ledger.resultOfCopy): its sidecar then keeps the
 * request, job and times of the result whose bytes it holds, and says which take it was copied from.
 */
export function sidecarFacts(
  manifestName: string,
  attempt: AttemptRecord,
  kept: boolean | null = null,
  copy: ResultOfCopy | null = null,
  check: SidecarCheck | null = null,
): SidecarFacts {
  const made = copy?.result ?? attempt;
  return {
    version: MEDIABATCH_VERSION,
    manifest: manifestName,
    itemId: attempt.itemId,
    take: attempt.take ?? 1,
    requestBody: made.requestBody,
    jobId: jobOfBytes(attempt),
    amountMicros: attempt.amountMicros,
    refundedMicros: attempt.refundedMicros,
    createdAt: made.createdAt,
    completedAt: made.completedAt,
    vars: attempt.vars ?? null,
    kept,
    ...(check ? { check } : {}),
    ...(copy
      ? {
          copied: {
            item: copy.source?.itemId ?? null,
            take: copy.source?.take ?? null,
            at: attempt.createdAt,
          },
        }
      : {}),
  };
}

/**
 * sidecarFacts with what a copied take points at, and the take's check, read from the ledger.
 * `check`: the take's check when the caller knows it (null: not checked yet), so none is read.
 */
export async function sidecarFactsOf(
  ledger: Pick<TakeLedger, 'resultOfCopy'> & Pick<RecordReads, 'takeCheckOf'>,
  manifestName: string,
  attempt: AttemptRecord,
  kept: boolean | null = null,
  check?: SidecarCheck | null,
): Promise<SidecarFacts> {
  const [copy, recorded] = await Promise.all([
    ledger.resultOfCopy(attempt),
    check === undefined ? ledger.takeCheckOf(attempt.id) : null,
  ]);
  return sidecarFacts(manifestName, attempt, kept, copy, check ?? (recorded && shownCheck(recorded)));
}

/**
 * What runs before a new file takes `target`: a file there that this ledger did not write is
 * refused (never overwritten), then an earlier take of the item is preserved beside it.
 */
export async function beforePlacing(
  store: OutputStore,
  ledger: RunLedger & RecordReads & TakeLedger,
  attempt: AttemptRecord,
  target: string,
  written: { bytes: number; sha256: string },
): Promise<void> {
  await store.refuseForeign(target, written, (path) => ledger.wroteFile(path));
  await preserveEarlierTake(store, ledger, attempt, target);
}

/**
 * Before a new take's file takes `target`, the earlier take saved there is preserved as
 * `<name>.take<N>.<ext>` with its sidecar, and the ledger follows it to its new name.
 */
async function preserveEarlierTake(
  store: OutputStore,
  ledger: RunLedger & RecordReads & TakeLedger,
  attempt: AttemptRecord,
  target: string,
): Promise<void> {
  if ((attempt.take ?? 1) <= 1) return;
  const earlier = (await ledger.filesAt(target)).find((file) => file.attemptId !== attempt.id);
  if (!earlier) return;
  const owner = await ledger.getAttempt(earlier.attemptId);
  const kept = takePath(target, owner.take ?? 1);
  await store.preserveEarlier(target, kept, earlier);
  await ledger.recordFileMoved(earlier.attemptId, earlier.idx, kept);
}
