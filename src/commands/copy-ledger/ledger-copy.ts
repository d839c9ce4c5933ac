import { existsSync } from 'node:fs';
import {
  holdLedger,
  type LedgerHold,
  openLedgerOrRefuse,
  refuseLiveRunners,
} from '../../batch/ledger/ledger-access.js';
import {
  refuseNamedTarget,
  savedFilesOf,
  type TargetKind,
  targetGuard,
} from '../../batch/named-files/named-target.js';
import { isSqliteHead } from '../../batch/named-files/protected-files.js';
import { newBatchTrace } from '../../batch/output/leave-no-trace.js';
import { openStoreOrRefuse } from '../../batch/output/open-output-store.js';
import { passOutputLocation } from '../../batch/output/output-owner-check.js';
import { placeBatch } from '../../batch/resolve/placement.js';
import { type Batch, SANDBOX_NOT_SHARED } from '../../batch/resolve/resolve-batch.js';
import { UserError } from '../../errors.js';
import {
  type BatchDump,
  isSharedLocation,
  type LedgerLifecycle,
  type LedgerLocation,
  ledgerFileMissing,
  ledgerFileOf,
  type RecordReads,
  SANDBOX_IDENTITY,
  sameLedger,
} from '../../ledger/index.js';

/** What `mediabatch copy-ledger` copied: both ledgers as people see them, and the rows of each kind. */
export interface LedgerCopied {
  from: string;
  to: string;
  items: number;
  attempts: number;
  files: number;
  events: number;
  runs: number;
  /** The output location's claim passed from the ledger copied from to the copy. */
  outputPassed: boolean;
}

const NOTHING = 'nothing was copied';

/**
 * A ledger file as the door for named files knows it (batch/named-files/named-target.ts): the copy goes into a
 * new file or another SQLite ledger (which must hold none of the batch), never over the batch's own
 * ledger, a file beside a ledger, anything in an output folder or a file of another kind.
 */
const LEDGER_FILE: TargetKind = {
  call: 'copyLedger',
  option: 'to',
  writes: 'the copy',
  notOwn: 'is not a SQLite ledger',
  isOwn: isSqliteHead,
  forceable: false,
  elsewhere: ' or a SQLite ledger that holds none of the batch',
};

/**
 * Copies the batch's whole record from its ledger to `to` (a file, or a postgres:// URL), for a
 * batch moving between one machine's SQLite file and a shared PostgreSQL database, either way
 * (docs/shared-ledger.md). The source is only read. Refused, with nothing written, while a run
 * holds either ledger, when the source has no such batch, and when the target already records
 * items or attempts of it; the load is one transaction, and a new target file that did not take
 * the copy is removed again.
 */
export async function copyBatchLedger(batch: Batch, to: string): Promise<LedgerCopied> {
  const { manifest } = batch;
  const target = placeBatch(manifest, {
    ledger: to,
    sandbox: batch.sandbox,
    cwd: batch.cwd,
    postgresEnv: batch.settings.postgresEnv,
  }).ledger;
  refuseSameLedger(batch.ledger, target);
  const targetFile = ledgerFileOf(target);
  if (targetFile !== null)
    await refuseNamedTarget(targetFile, targetGuard(batch), LEDGER_FILE, {
      force: false,
      saved: savedFilesOf(batch),
    });
  if (batch.sandbox) refuseSandboxShared(target, batch.ledgerShown);
  if (ledgerFileMissing(batch.ledger))
    throw new UserError(`no ledger at ${batch.ledgerShown}; ${NOTHING}`, 'ledger_missing');
  const trace = newBatchTrace(target, null);
  const holds: LedgerHold[] = [];
  const open: LedgerLifecycle[] = [];
  let copied = false;
  try {
    holds.push(holdLedger(batch.ledger, 'copied'));
    holds.push(holdLedger(target, 'copied'));
    const source = await openLedgerOrRefuse(
      batch.ledger,
      manifest,
      { ...batch.settings, readonly: true },
      NOTHING,
    );
    open.push(source);
    if (source.batchId < 0)
      throw new UserError(
        `the ledger ${source.path} records no batch named ${manifest.name}; ${NOTHING}`,
        'ledger_missing',
      );
    await refuseLiveRunners(source, 'copied');
    if ((await source.service())?.identity === SANDBOX_IDENTITY) refuseSandboxShared(target, source.path);
    // A target that already records the batch is refused before it is opened for writing: opening
    // it so would bring its batch row up to this manifest's folder, a write the refusal must not leave.
    if (targetFile === null || existsSync(targetFile)) {
      const look = await openLedgerOrRefuse(target, manifest, { ...batch.settings, readonly: true }, NOTHING);
      try {
        await refuseRecordedBatch(look, manifest.name);
      } finally {
        await look.close();
      }
    }
    const into = await openLedgerOrRefuse(target, manifest, batch.settings, NOTHING);
    open.push(into);
    await refuseLiveRunners(into, 'copied');
    await refuseRecordedBatch(into, manifest.name);
    const dump = await source.dumpBatch();
    await refuseOtherService(into, dump);
    try {
      await into.loadBatch(dump);
    } catch (error) {
      throw new UserError(
        `cannot copy into the ledger ${into.path}: ${(error as Error).message}; ${NOTHING}`,
        'ledger_write_failed',
      );
    }
    copied = true;
    const store = await openStoreOrRefuse(batch);
    const outputPassed = await passOutputLocation(manifest, store, batch.ledgerShown, into.path);
    return {
      outputPassed,
      from: source.path,
      to: into.path,
      items: dump.items.length,
      attempts: dump.attempts.length,
      files: dump.files.length,
      events: dump.events.length,
      runs: dump.runs.length,
    };
  } finally {
    for (const ledger of open) await ledger.close();
    for (const hold of holds.reverse()) hold.release();
    // A new target file that did not take the copy goes again, with its journal, lock and folders.
    if (!copied) trace.remove();
  }
}

function refuseSameLedger(from: LedgerLocation, to: LedgerLocation): void {
  if (sameLedger(from, to))
    throw new UserError(
      `the ledger to copy into is the one the batch is copied from (${to.shown}); ${NOTHING}`,
      'invalid_usage',
    );
}

/**
 * A batch of the embedded sandbox copied into PostgreSQL would be a batch no command can run: the
 * sandbox that holds its jobs is started inside each command, never shared.
 */
function refuseSandboxShared(to: LedgerLocation, from: string): void {
  if (!isSharedLocation(to)) return;
  throw new UserError(
    `the ledger to copy into, ${to.shown}, is a shared PostgreSQL ledger, and the batch in ${from} ran against the embedded sandbox: ` +
      `${SANDBOX_NOT_SHARED}. Copy it into a SQLite file instead; ${NOTHING}`,
    'invalid_option',
    { option: 'to', to: to.shown, from },
  );
}

/** The copy is the batch's whole record: it goes only where the batch has none yet. */
async function refuseRecordedBatch(
  into: RecordReads & Pick<LedgerLifecycle, 'path'>,
  name: string,
): Promise<void> {
  if (!(await into.hasAttempts()) && (await into.listItems()).length === 0) return;
  throw new UserError(
    `the ledger ${into.path} already records items of ${name}; copy-ledger copies a batch only into a ` +
      `ledger that has none of it (a new file, or another database); ${NOTHING}`,
    'ledger_not_empty',
  );
}

/** A SQLite file is bound to one service for all its batches, a PostgreSQL batch to one of its own. */
async function refuseOtherService(into: LedgerLifecycle, dump: BatchDump): Promise<void> {
  const bound = (await into.service())?.identity ?? null;
  const wanted = dump.service?.identity ?? null;
  if (bound === null || wanted === null || bound === wanted) return;
  throw new UserError(
    `the ledger ${into.path} belongs to ${bound}, the batch to ${wanted}; ${NOTHING}`,
    'ledger_other_service',
  );
}
