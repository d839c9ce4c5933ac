import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { holdLedger, openLedgerForWriting, refuseLiveRunners } from '../../batch/ledger/ledger-access.js';
import { newBatchTrace } from '../../batch/output/leave-no-trace.js';
import { openStoreOrRefuse } from '../../batch/output/open-output-store.js';
import {
  claimOutputFolder,
  folderContextOf,
  refuseOthersOutputFolder,
} from '../../batch/output/output-owner-check.js';
import type { Batch } from '../../batch/resolve/resolve-batch.js';
import type { Warn } from '../../batch/resolve/warnings.js';
import { startEmbeddedSandbox } from '../../batch/service/embedded-sandbox.js';
import { checkServiceForLedger, serviceTarget } from '../../batch/service/service-check.js';
import { UserError } from '../../errors.js';
import type {
  CopyLedger,
  Ledger,
  LedgerLifecycle,
  RecordReads,
  RunLedger,
  TakeLedger,
} from '../../ledger/index.js';
import { isS3Uri, type Manifest } from '../../manifest/index.js';
import type { SandboxHandle } from '../../sandbox/index.js';
import { OUTPUT_LIFETIME_MS } from '../../service-client/retention.js';
import { importJobs, listManifestJobs } from './import-jobs.js';
import { type ImportSummary, importSummary } from './render-import.js';

/** What to import: `sinceMs` null as far back as outputs live; `filesFrom` folders of moved outputs. */
export interface ImportAsked {
  sinceMs: number | null;
  filesFrom: readonly string[];
}

/**
 * Rebuilds a lost ledger from the service's own job list (docs/import.md), with the checks `run`
 * makes: the lock, an empty ledger, the output folder, the ledger's service, the account.
 */
export async function importLedger(batch: Batch, asked: ImportAsked, warn: Warn): Promise<ImportSummary> {
  const { manifest, ledgerShown, settings: timings } = batch;
  const filesFrom = foldersOfMovedFiles(batch, asked.filesFrom);
  const { sinceMs } = asked;
  const target = serviceTarget(batch, {
    what: 'no service to import from',
    sandbox: 'rebuild the sandbox ledger from the embedded sandbox',
  });
  const trace = newBatchTrace(batch.ledger, manifest.outputDir);
  const lock = holdLedger(batch.ledger, 'imported');
  let ledger: (LedgerLifecycle & RunLedger & RecordReads & TakeLedger & CopyLedger) | null = null;
  let sandbox: SandboxHandle | null = null;
  let leaveNoTrace = false;
  try {
    ledger = await openEmptyLedger(batch, manifest);
    if (target.connection === null)
      sandbox = await startEmbeddedSandbox(ledgerShown, warn, batch.sandboxConfig);
    const connection = target.connection ?? { baseUrl: sandbox!.baseUrl, apiKey: sandbox!.apiKey };
    // Import saves outputs like run does: into a folder of this ledger's own, never another batch's.
    const folder = folderContextOf(batch, target.identity);
    const store = await openStoreOrRefuse(batch);
    await refuseOthersOutputFolder(folder, store);
    // The same checks as run's, before anything is listed: the ledger's service, the address, the key.
    const client = await checkServiceForLedger(
      { connection, identity: target.identity },
      { bound: (await ledger.service())?.identity ?? null, path: ledgerShown },
      batch,
      warn,
      'imported',
    );
    const timeoutMs = timings.httpTimeoutMs === null ? {} : { timeoutMs: timings.httpTimeoutMs };
    const since = new Date(Date.now() - (sinceMs ?? OUTPUT_LIFETIME_MS));
    const listing = await listManifestJobs(client, manifest.name, since).catch((error: unknown) => {
      throw new UserError(
        `cannot list the service's jobs: ${(error as Error).message}; nothing was imported`,
        'service_read_failed',
      );
    });
    // What is imported are this service's jobs: the ledger belongs to it from now on, as after a run.
    await ledger.bindService(target.identity);
    const unclaimed = await claimOutputFolder(folder, store);
    if (unclaimed !== null) warn({ code: 'output_unclaimed', message: unclaimed });
    const result = await importJobs(
      { client, ledger, manifest, store, filesFrom, ...timeoutMs },
      listing.jobs,
    );
    await ledger.appendEvent(null, null, 'ledger_imported', {
      since: since.toISOString(),
      jobs: listing.jobs.length,
    });
    return importSummary(result, {
      manifest: manifest.name,
      ledger: ledgerShown,
      since,
      listed: listing.listed,
      truncated: listing.truncated,
    });
  } catch (error) {
    // A refusal before anything was imported leaves no new ledger behind.
    leaveNoTrace = error instanceof UserError && !((await ledger?.hasAttempts()) ?? false);
    throw error;
  } finally {
    await ledger?.close();
    lock.release();
    await sandbox?.close();
    if (leaveNoTrace) trace.remove();
  }
}

/**
 * The folders `filesFrom` names, from the caller's `cwd`: each must be a folder, and the outputs
 * must go to a folder too (copying back into a bucket is not done: docs/import.md).
 */
function foldersOfMovedFiles(batch: Batch, given: readonly string[]): string[] {
  if (given.length === 0) return [];
  if (isS3Uri(batch.manifest.outputDir))
    throw new UserError(
      `\`filesFrom\` copies outputs back into an output folder, and ${batch.manifest.outputDir} is a bucket; copy them into it yourself, then import`,
      'invalid_usage',
      { option: 'filesFrom' },
    );
  return given.map((folder) => {
    const path = resolve(batch.cwd, folder);
    if (!statSync(path, { throwIfNoEntry: false })?.isDirectory())
      throw new UserError(`\`filesFrom\` ${folder} is not a folder`, 'invalid_usage', {
        option: 'filesFrom',
      });
    return path;
  });
}

/** Import only rebuilds a lost ledger: one that records attempts is refused, untouched. */
async function openEmptyLedger(batch: Batch, manifest: Manifest): Promise<Ledger> {
  const ledgerShown = batch.ledgerShown;
  const ledger = await openLedgerForWriting(batch.ledger, manifest, batch.settings, 'imported');
  try {
    await refuseLiveRunners(ledger, 'imported');
  } catch (error) {
    await ledger.close();
    throw error;
  }
  if (!(await ledger.hasAttempts())) return ledger;
  await ledger.close();
  throw new UserError(
    `the ledger ${ledgerShown} already records attempts of ${manifest.name}; import only rebuilds a lost ` +
      'ledger. Run the manifest as usual, or import into a new file with `ledger` PATH',
    'ledger_not_empty',
    { ledgerPath: ledgerShown, option: 'ledger' },
  );
}
