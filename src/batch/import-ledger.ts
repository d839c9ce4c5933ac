import { ExitCode, UserError } from '../errors.js';
import { importJobs, listManifestJobs } from '../import/import-jobs.js';
import { type ImportSummary, importSummary } from '../import/render.js';
import { Ledger } from '../ledger/ledger.js';
import type { Manifest } from '../manifest/index.js';
import type { Connection } from './placement.js';
import { type SandboxHandle, startEmbeddedSandbox } from './embedded-sandbox.js';
import type { Host } from './host.js';
import { lockLedgerOrRefuse } from './ledger-access.js';
import { claimOutputFolder, refuseOthersOutputFolder } from './output-owner-check.js';
import { openStoreOrRefuse } from './open-output-store.js';
import { checkServiceForLedger, type ServiceTimings } from './service-check.js';

export interface ImportRequest {
  manifest: Manifest;
  ledgerPath: string;
  /** Null connection: the embedded sandbox, its state beside the ledger. */
  target: { connection: Connection | null; identity: string };
  timings: ServiceTimings;
  sinceMs: number;
}

/**
 * Rebuilds a lost ledger from the service's own job list (docs/import.md), with the checks `run`
 * makes: the lock, an empty ledger, the output folder, the ledger's service, the account.
 */
export async function importLedger(request: ImportRequest, host: Host): Promise<ImportSummary> {
  const { manifest, ledgerPath, target, timings } = request;
  const lock = lockLedgerOrRefuse(ledgerPath, 'imported');
  let ledger: Ledger | null = null;
  let sandbox: SandboxHandle | null = null;
  try {
    ledger = openEmptyLedger(ledgerPath, manifest);
    if (target.connection === null) sandbox = await startEmbeddedSandbox(ledgerPath);
    const connection = target.connection ?? { baseUrl: sandbox!.baseUrl, apiKey: sandbox!.apiKey };
    // Import saves outputs like run does: into a folder of this ledger's own, never another batch's.
    const folder = { manifest, ledgerPath, service: target.identity, cwd: host.cwd };
    const store = await openStoreOrRefuse(manifest.outputDir);
    await refuseOthersOutputFolder(folder, store);
    // The same checks as run's, before anything is listed: the ledger's service, the address, the key.
    const client = await checkServiceForLedger(
      'import',
      { connection, identity: target.identity },
      { bound: ledger.service()?.identity ?? null, path: ledgerPath },
      timings,
      host,
    );
    const timeoutMs = timings.httpTimeoutMs === null ? {} : { timeoutMs: timings.httpTimeoutMs };
    const since = new Date(Date.now() - request.sinceMs);
    const listing = await listManifestJobs(client, manifest.name, since).catch((error: unknown) => {
      throw new UserError(
        `cannot list the service's jobs: ${(error as Error).message}; nothing was imported`,
        ExitCode.Refused,
        'service_unreachable',
      );
    });
    // What is imported are this service's jobs: the ledger belongs to it from now on, as after a run.
    ledger.bindService(target.identity);
    const unclaimed = await claimOutputFolder(folder, store);
    if (unclaimed !== null) host.stderr.write(`mediabatch import: warning: ${unclaimed}\n`);
    const result = await importJobs({ client, ledger, manifest, store, ...timeoutMs }, listing.jobs);
    ledger.appendEvent(null, null, 'ledger_imported', {
      since: since.toISOString(),
      jobs: listing.jobs.length,
    });
    return importSummary(result, {
      manifest: manifest.name,
      ledger: ledgerPath,
      since,
      listed: listing.listed,
      truncated: listing.truncated,
    });
  } finally {
    ledger?.close();
    lock.release();
    await sandbox?.close();
  }
}

/** Import only rebuilds a lost ledger: one that records attempts is refused, untouched. */
function openEmptyLedger(ledgerPath: string, manifest: Manifest): Ledger {
  const ledger = Ledger.open(ledgerPath, manifest.name, manifest.file);
  if (!ledger.hasAttempts()) return ledger;
  ledger.close();
  throw new UserError(
    `the ledger ${ledgerPath} already records attempts of ${manifest.name}; import only rebuilds a lost ` +
      'ledger. Run the manifest as usual, or import into a new file with --ledger PATH',
    ExitCode.Usage,
    'ledger_not_empty',
  );
}
