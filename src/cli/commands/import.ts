import { dirname } from 'node:path';
import { MediaGenClient } from '../../api/client.js';
import { ExitCode, UserError } from '../../errors.js';
import { importJobs, listManifestJobs } from '../../import/import-jobs.js';
import { importSummary, renderImportText } from '../../import/render.js';
import { Ledger } from '../../ledger/ledger.js';
import type { Manifest } from '../../manifest/index.js';
import { connectionFromEnv, ledgerPathFor, manifestOrExit, parsePositiveSeconds } from '../common.js';
import type { Command } from '../io.js';
import { lockLedger } from '../ledger-access.js';
import { claimOutputFolder, refuseOthersOutputFolder } from '../output-folder.js';
import { serviceIdentity } from '../service.js';
import { parseSince } from './import-since.js';

/**
 * `mediabatch import <manifest> [--base-url URL] [--ledger PATH] [--since DURATION] [--json]`:
 * rebuilds a lost ledger from the service's own job list (docs/import.md).
 */
export const importCommand: Command<'import'> = async ({ values, positionals }, io) => {
  const manifest = manifestOrExit(positionals[0], io);
  const sinceMs = parseSince(values.since);
  const connection = connectionFromEnv(values['base-url'], io);
  if (!connection)
    throw new UserError('no service to import from: pass --base-url URL (or set MEDIAGEN_BASE_URL)');
  const ledgerPath = ledgerPathFor(manifest, values.ledger, io);
  const lock = lockLedger(ledgerPath);
  if (!lock)
    throw new UserError(
      `the ledger ${ledgerPath} is held by a live run; nothing was imported`,
      ExitCode.Refused,
    );
  let ledger: Ledger | null = null;
  try {
    ledger = openEmptyLedger(ledgerPath, manifest);
    // Import saves outputs like run does: into a folder of this ledger's own, never another batch's.
    const folder = { manifest, ledgerPath, service: serviceIdentity(connection.baseUrl), cwd: io.cwd };
    refuseOthersOutputFolder(folder);
    const timeoutSeconds = parsePositiveSeconds(io.env.MEDIABATCH_HTTP_TIMEOUT, 'MEDIABATCH_HTTP_TIMEOUT');
    const timeoutMs = timeoutSeconds === null ? {} : { timeoutMs: timeoutSeconds * 1000 };
    const client = new MediaGenClient({ ...connection, ...timeoutMs });
    const since = new Date(Date.now() - sinceMs);
    const listing = await listManifestJobs(client, manifest.name, since).catch((error: unknown) => {
      throw new UserError(
        `cannot list the service's jobs: ${(error as Error).message}; nothing was imported`,
        ExitCode.Refused,
      );
    });
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
    const rerun = ['mediabatch run', positionals[0], ...(values.ledger ? ['--ledger', values.ledger] : [])];
    io.stdout.write(
      values.json
        ? `${JSON.stringify(summary, null, 2)}\n`
        : renderImportText(summary, dirname(manifest.file), rerun.join(' ')),
    );
    return ExitCode.Ok;
  } finally {
    ledger?.close();
    lock.release();
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
