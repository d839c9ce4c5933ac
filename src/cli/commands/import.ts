import { dirname } from 'node:path';
import { ExitCode, UserError } from '../../errors.js';
import { importJobs, listManifestJobs } from '../../import/import-jobs.js';
import { importSummary, renderImportText } from '../../import/render.js';
import { Ledger } from '../../ledger/ledger.js';
import type { Manifest } from '../../manifest/index.js';
import type { SandboxHandle } from '../../sandbox/index.js';
import { forSandbox, ledgerPathFor, manifestOrExit } from '../common.js';
import type { Command } from '../io.js';
import { lockLedger } from '../ledger-access.js';
import { claimOutputFolder, refuseOthersOutputFolder } from '../output-folder.js';
import { checkServiceForLedger, serviceTarget, serviceTimings } from '../service-check.js';
import { startEmbeddedSandbox } from './embedded-sandbox.js';
import { parseSince } from './import-since.js';

/**
 * `mediabatch import <manifest> [--base-url URL | --sandbox] [--ledger PATH] [--since DURATION] [--json]`:
 * rebuilds a lost ledger from the service's own job list (docs/import.md).
 */
export const importCommand: Command<'import'> = async ({ values, positionals }, io) => {
  const manifest = forSandbox(manifestOrExit(positionals[0], io, 'nothing was imported'), values.sandbox);
  const sinceMs = parseSince(values.since);
  const timings = serviceTimings(io);
  const target = serviceTarget(values.sandbox, values['base-url'], io, {
    what: 'no service to import from',
    sandbox: 'rebuild the sandbox ledger from the embedded sandbox',
  });
  const ledgerPath = ledgerPathFor(manifest, values.ledger, io, { sandbox: values.sandbox });
  const lock = lockLedger(ledgerPath);
  if (!lock)
    throw new UserError(
      `the ledger ${ledgerPath} is held by a live run; nothing was imported`,
      ExitCode.Refused,
    );
  let ledger: Ledger | null = null;
  let sandbox: SandboxHandle | null = null;
  try {
    ledger = openEmptyLedger(ledgerPath, manifest);
    if (target.connection === null) sandbox = await startEmbeddedSandbox(ledgerPath);
    const connection = target.connection ?? { baseUrl: sandbox!.baseUrl, apiKey: sandbox!.apiKey };
    // Import saves outputs like run does: into a folder of this ledger's own, never another batch's.
    const folder = { manifest, ledgerPath, service: target.identity, cwd: io.cwd };
    refuseOthersOutputFolder(folder);
    // The same checks as run's, before anything is listed: the ledger's service, the address, the key.
    const client = await checkServiceForLedger(
      'import',
      { connection, identity: target.identity },
      { bound: ledger.service()?.identity ?? null, path: ledgerPath },
      timings,
      io,
    );
    const timeoutMs = timings.httpTimeoutMs === null ? {} : { timeoutMs: timings.httpTimeoutMs };
    const since = new Date(Date.now() - sinceMs);
    const listing = await listManifestJobs(client, manifest.name, since).catch((error: unknown) => {
      throw new UserError(
        `cannot list the service's jobs: ${(error as Error).message}; nothing was imported`,
        ExitCode.Refused,
      );
    });
    // What is imported are this service's jobs: the ledger belongs to it from now on, as after a run.
    ledger.bindService(target.identity);
    const unclaimed = claimOutputFolder(folder);
    if (unclaimed !== null) io.stderr.write(`mediabatch import: warning: ${unclaimed}\n`);
    const result = await importJobs({ client, ledger, manifest, ...timeoutMs }, listing.jobs);
    ledger.appendEvent(null, null, 'ledger_imported', {
      since: since.toISOString(),
      jobs: listing.jobs.length,
    });
    const summary = importSummary(result, {
      manifest: manifest.name,
      ledger: ledgerPath,
      since,
      listed: listing.listed,
      truncated: listing.truncated,
    });
    const rerun = [
      'mediabatch run',
      positionals[0],
      ...(values.ledger ? ['--ledger', values.ledger] : []),
      ...(values.sandbox ? ['--sandbox'] : []),
    ];
    io.stdout.write(
      values.json
        ? `${JSON.stringify(summary, null, 2)}\n`
        : renderImportText(summary, dirname(manifest.file), rerun.join(' ')),
    );
    return ExitCode.Ok;
  } finally {
    ledger?.close();
    lock.release();
    await sandbox?.close();
  }
};

/** Import only rebuilds a lost ledger: one that records attempts is refused, untouched. */
function openEmptyLedger(ledgerPath: string, manifest: Manifest): Ledger {
  const ledger = Ledger.open(ledgerPath, manifest.name, manifest.file);
  if (!ledger.hasAttempts()) return ledger;
  ledger.close();
  throw new UserError(
    `the ledger ${ledgerPath} already records attempts of ${manifest.name}; import only rebuilds a lost ` +
      'ledger. Run the manifest as usual, or import into a new file with --ledger PATH',
  );
}
