import { existsSync, statSync } from 'node:fs';
import type { GalleryWritten } from '../../batch/gallery/batch-gallery.js';
import { refreshBatchGallery } from '../../batch/gallery/gallery-refresh.js';
import { holdLedger, openLedgerOrRefuse, refuseLiveRunners } from '../../batch/ledger/ledger-access.js';
import { openedLedger } from '../../batch/ledger/ledger-read.js';
import type { Batch } from '../../batch/resolve/resolve-batch.js';
import { ensureSameService, serviceIdentity } from '../../batch/service/service-identity.js';
import { ensureSidecars } from '../../downloads/sidecar.js';
import { UserError } from '../../errors.js';
import {
  type LedgerLifecycle,
  ledgerFileMissing,
  type ReadingLedger,
  type RecordReads,
  SANDBOX_IDENTITY,
  type SavedTake,
  type SharedLedger,
  type TakeLedger,
} from '../../ledger/index.js';
import { KeptTakes } from '../../runner/kept-takes.js';
import { sidecarFactsOf } from '../../runner/provenance.js';
import { type KeepChoice, type KeepEntry, keeperChanges, keepRefusal, resolveKeeps } from './keep-entries.js';

/** What `keep` did: the keepers set and cleared, and the manifest items with variants still without one. */
export interface KeepOutcome {
  kept: Array<{ itemId: string; keptItemId: string; take: number; files: string[] }>;
  cleared: string[];
  withoutKeeper: string[];
  sidecarsWritten: number;
  /** The batch's gallery, refreshed so that its picks start from these keepers; null if not written. */
  gallery: GalleryWritten | null;
  /** Why the gallery was not refreshed, if it was not. */
  galleryProblem: string | null;
}

/**
 * Records which take of each named item is kept (docs/gallery.md, "Keepers"). Nothing is sent:
 * the service is never asked. Opened and checked as the other writing commands do (a run holding
 * a SQLite ledger, a live runner of a shared one, a ledger of another service refuse it); every
 * entry is checked, the chosen files among them, before anything is written.
 */
export async function keepTakes(batch: Batch, entries: readonly KeepEntry[]): Promise<KeepOutcome> {
  const { manifest, ledgerShown } = batch;
  if (ledgerFileMissing(batch.ledger))
    throw new UserError(`no ledger at ${ledgerShown}: no take was saved to keep`, 'ledger_missing');
  const lock = holdLedger(batch.ledger, 'kept');
  let ledger: (LedgerLifecycle & RecordReads & ReadingLedger & TakeLedger & SharedLedger) | null = null;
  try {
    ledger = await openLedgerOrRefuse(batch.ledger, manifest, batch.settings, 'nothing was kept');
    await refuseLiveRunners(ledger, 'kept');
    const identity = namedService(batch);
    if (identity !== null)
      ensureSameService((await ledger.service())?.identity ?? null, identity, ledgerShown, batch.cwd);
    const saved = await ledger.savedTakes();
    const choices = resolveKeeps(entries, manifest.items, saved);
    for (const choice of choices) refuseMissingFiles(choice);
    // Before the change too: a take kept until now outside the manifest belongs to its item only by its keeper.
    const before = new KeptTakes(manifest.items, await ledger.keepers());
    await ledger.setKeepers(keeperChanges(choices));
    const keptTakes = new KeptTakes(manifest.items, await ledger.keepers());
    const sidecarsWritten =
      manifest.sidecars === false
        ? 0
        : await rewriteSidecars(ledger, batch, [before, keptTakes], choices, saved);
    let galleryProblem: string | null = null;
    const gallery = await refreshBatchGallery(
      batch,
      ledger,
      { ledger: await openedLedger(ledger, ledgerShown) },
      (warning) => {
        galleryProblem = warning.message;
      },
    );
    return {
      gallery,
      galleryProblem,
      kept: choices.flatMap(({ itemId, take }) =>
        take === null
          ? []
          : [
              {
                itemId,
                keptItemId: take.itemId,
                take: take.take,
                files: take.files.map((file) => file.path),
              },
            ],
      ),
      cleared: choices.filter((choice) => choice.take === null).map((choice) => choice.itemId),
      withoutKeeper: keptTakes.withoutKeeper(),
      sidecarsWritten,
    };
  } finally {
    await ledger?.close();
    lock.release();
  }
}

/** The service the call names, if any: `keep` needs none, but a ledger of another one is refused. */
function namedService(batch: Batch): string | null {
  if (batch.sandbox) return SANDBOX_IDENTITY;
  return batch.baseUrl !== null && URL.canParse(batch.baseUrl) ? serviceIdentity(batch.baseUrl) : null;
}

/** A kept take's files must be there as saved (a bucket's objects are taken as the ledger says). */
function refuseMissingFiles(choice: KeepChoice): void {
  for (const file of choice.take?.files ?? []) {
    if (file.path.includes('://')) continue;
    const size = existsSync(file.path) ? statSync(file.path).size : null;
    if (size === file.bytes) continue;
    const problem =
      size === null
        ? `its file ${file.path} is missing`
        : `its file ${file.path} is ${size} bytes, not the ${file.bytes} saved`;
    throw keepRefusal(choice.where, problem, 'keep_file_missing', { path: file.path });
  }
}

/**
 * The sidecars of every take of the items whose keeper changed, written again with their `kept`,
 * through the downloads' own writer; only beside a video the ledger saved that is still there.
 */
async function rewriteSidecars(
  ledger: RecordReads & TakeLedger,
  batch: Batch,
  [before, keptTakes]: readonly [KeptTakes, KeptTakes],
  choices: readonly KeepChoice[],
  saved: readonly SavedTake[],
): Promise<number> {
  const changed = new Set(choices.map((choice) => choice.itemId));
  let written = 0;
  for (const take of saved) {
    const group = [keptTakes.groupOf(take.itemId), before.groupOf(take.itemId)].find((g) => changed.has(g));
    if (group === undefined) continue;
    const files = take.files.filter((file) => !file.path.includes('://') && existsSync(file.path));
    if (files.length === 0) continue;
    const facts = await sidecarFactsOf(
      ledger,
      batch.manifest.name,
      await ledger.getAttempt(take.attemptId),
      keptTakes.recorded(take, group),
    );
    written += await ensureSidecars(facts, files);
  }
  return written;
}
