import { holdLedger, openLedgerOrRefuse, refuseLiveRunners } from '../../batch/ledger/ledger-access.js';
import { openStoreOrRefuse } from '../../batch/output/open-output-store.js';
import type { Batch } from '../../batch/resolve/resolve-batch.js';
import { UserError } from '../../errors.js';
import {
  type AttemptRecord,
  type ItemRecord,
  type LedgerLifecycle,
  ledgerFileMissing,
  type RecordReads,
  type SavedTake,
  type SharedLedger,
  type TakeLedger,
} from '../../ledger/index.js';
import { checkRecord, checkTakeFully } from '../../runner/check-saved.js';
import { KeptTakes } from '../../runner/kept-takes.js';
import { type TakeCheck, videoCheckTolerance } from '../../runner/output-check.js';
import { CheckCannotRun, type OwnChecks, unrunnableCheck } from '../../runner/own-checks.js';
import { sidecarFactsOf } from '../../runner/provenance.js';

/** One item's current take as `mediabatch check` found it. */
export interface TakeChecked {
  itemId: string;
  take: number;
  outcome: 'passed' | 'failed' | 'unchecked';
  reason: string | null;
  score: number | null;
  /** What the ledger said of the take before; null when it had no check. */
  before: 'passed' | 'failed' | 'unchecked' | null;
  /** The item's state after the check (done, or checks_failed). */
  state: 'done' | 'checks_failed';
}

/** What `mediabatch check` did (docs/checks.md, "Checking again"). */
export interface ChecksDocument {
  manifest: string;
  takes: TakeChecked[];
  totals: { checked: number; passed: number; failed: number; unchecked: number };
  /** A check of your own that could not run: the takes after it were not checked, nothing more recorded. */
  stopped: { check: string; message: string } | null;
  /** `not_done` when a take failed its check or a check stopped (`stopped`), else `done`. */
  outcome: 'done' | 'not_done';
}

/**
 * Checks each item's current saved take again, the built-in check and the checks of your own, and
 * records what they say (docs/checks.md): a take that fails makes its item checks_failed, one that
 * passes makes a checks_failed item done. Nothing is sent and nothing is bought: the next `run`
 * re-rolls the failed ones that have re-rolls left. Refused like the other writing commands while a
 * run holds the ledger.
 */
export async function checkBatchTakes(batch: Batch, own: OwnChecks): Promise<ChecksDocument> {
  const { manifest, ledgerShown } = batch;
  if (ledgerFileMissing(batch.ledger))
    throw new UserError(`no ledger at ${ledgerShown}: no take was saved to check`, 'ledger_missing');
  const lock = holdLedger(batch.ledger, 'checked');
  let ledger: (LedgerLifecycle & RecordReads & TakeLedger & SharedLedger) | null = null;
  try {
    ledger = await openLedgerOrRefuse(batch.ledger, manifest, batch.settings, 'nothing was checked');
    await refuseLiveRunners(ledger, 'checked');
    const store = await openStoreOrRefuse(batch);
    const document: Omit<ChecksDocument, 'outcome'> = {
      manifest: manifest.name,
      takes: [],
      totals: { checked: 0, passed: 0, failed: 0, unchecked: 0 },
      stopped: null,
    };
    const unrunnable = await unrunnableCheck(own);
    if (unrunnable)
      return ended({ ...document, stopped: { check: unrunnable.check, message: unrunnable.message } });
    const tolerance = videoCheckTolerance(manifest);
    const kept = keptMarks(ledger, manifest);
    const before = new Map((await ledger.takeChecks()).map((check) => [check.attemptId, check.outcome]));
    for (const { take, attempt, record } of await currentTakes(ledger, batch)) {
      let check: TakeCheck | null;
      try {
        check = await checkTakeFully(store, attempt, take.files, tolerance, own);
      } catch (error) {
        if (!(error instanceof CheckCannotRun)) throw error;
        document.stopped = { check: error.check, message: error.message };
        break;
      }
      // video_checks: false and no checks: of your own: nothing judges the take.
      if (check === null) continue;
      const state: TakeChecked['state'] = check.outcome === 'failed' ? 'checks_failed' : 'done';
      const update =
        state === record.state
          ? undefined
          : {
              itemId: record.itemId,
              update:
                state === 'checks_failed'
                  ? { state, errorCode: 'checks_failed', errorMessage: check.reason }
                  : { state, errorCode: null, errorMessage: null },
            };
      await ledger.recordTakeCheck(attempt.id, checkRecord(check), update);
      // Rewritten only where the check changed: the sidecar of a take judged alike stays byte for byte.
      if (manifest.sidecars !== false)
        await store.ensureSidecars(
          await sidecarFactsOf(ledger, manifest.name, attempt, await kept.recorded(attempt)),
          take.files,
        );
      document.takes.push({
        itemId: record.itemId,
        take: take.take,
        outcome: check.outcome,
        reason: check.reason,
        score: check.score ?? null,
        before: before.get(attempt.id) ?? null,
        state,
      });
      document.totals.checked += 1;
      document.totals[check.outcome] += 1;
    }
    return ended(document);
  } finally {
    await ledger?.close();
    lock.release();
  }
}

/** The document with how the check ended: a failed take or a check that stopped leaves work not done. */
function ended(document: Omit<ChecksDocument, 'outcome'>): ChecksDocument {
  const notDone = document.stopped !== null || document.totals.failed > 0;
  return { ...document, outcome: notDone ? 'not_done' : 'done' };
}

/** Each manifest item's newest saved take, for items done or checks_failed, in manifest order. */
async function currentTakes(
  ledger: RecordReads & TakeLedger,
  batch: Batch,
): Promise<Array<{ take: SavedTake; attempt: AttemptRecord; record: ItemRecord }>> {
  const records = new Map((await ledger.listItems()).map((record) => [record.itemId, record]));
  const attempts = new Map((await ledger.listAttempts()).map((attempt) => [attempt.id, attempt]));
  const newest = new Map<string, SavedTake>();
  for (const take of await ledger.savedTakes()) {
    const seen = newest.get(take.itemId);
    if (!seen || take.take > seen.take) newest.set(take.itemId, take);
  }
  return batch.manifest.items.flatMap((item) => {
    const record = records.get(item.id);
    const take = newest.get(item.id);
    const attempt = take ? attempts.get(take.attemptId) : undefined;
    if (!record || !take || !attempt || (record.state !== 'done' && record.state !== 'checks_failed'))
      return [];
    return [{ take, attempt, record }];
  });
}

/** What each take's sidecar says of its item's keeper (provenance.ts), the keepers read once. */
function keptMarks(ledger: TakeLedger, manifest: Batch['manifest']) {
  let rule: Promise<KeptTakes> | undefined;
  return {
    recorded: async (attempt: AttemptRecord) => {
      rule ??= ledger.keepers().then((keepers) => new KeptTakes(manifest.items, keepers));
      return (await rule).recorded({ itemId: attempt.itemId, take: attempt.take ?? 1 });
    },
  };
}
