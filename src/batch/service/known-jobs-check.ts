import { LedgerLostError } from '../../errors.js';
import type { RecordReads } from '../../ledger/index.js';
import { jobItemId } from '../../runner/request.js';
import { MediaGenClient } from '../../service-client/client.js';
import { OUTPUT_LIFETIME_MS } from '../../service-client/retention.js';

/** Outputs live 48 hours; a lost ledger older than that has nothing left to adopt. */
const LOOKBACK_MS = OUTPUT_LIFETIME_MS;
/** A hint, not a reconciliation: it must never hold up a run for long. */
const CHECK_TIMEOUT_MS = 10_000;

/**
 * Before a new ledger's first submission: does the service already hold jobs of this manifest?
 * One page of GET /jobs (the newest 100 jobs of the last 48 hours) answers that cheaply for the
 * common case, a ledger lost or deleted after a recent run. Returns the item ids found, or null
 * when the ledger is not new, nothing was found, or the service could not answer (the run's own
 * checks deal with that).
 *
 * The ledger is read again after the list, and that second read decides. Every runner makes its
 * attempts durable before their POSTs (submit.ts), so a job on the list whose attempt is in this
 * ledger was committed before the list was read: a batch-mate started at the same moment (a
 * fleet, docs/shared-ledger.md) is seen there, never taken for another ledger's. Read only before
 * the list, its POSTs could land in between (issue 52).
 */
async function jobsUnknownToLedger(
  connection: { baseUrl: string; apiKey: string },
  ledger: Pick<RecordReads, 'hasAttempts'>,
  manifestName: string,
  now = Date.now(),
): Promise<string[] | null> {
  // The common case, a ledger with a past, asks the service nothing.
  if (await ledger.hasAttempts()) return null;
  const items = await listedItems(connection, manifestName, now);
  if (items === null || (await ledger.hasAttempts())) return null;
  return items;
}

/** This manifest's item ids among the service's newest jobs, or null: none, or no answer. */
async function listedItems(
  connection: { baseUrl: string; apiKey: string },
  manifestName: string,
  now: number,
): Promise<string[] | null> {
  const client = new MediaGenClient({ ...connection, timeoutMs: CHECK_TIMEOUT_MS });
  try {
    const page = await client.listJobs({
      created_after: new Date(now - LOOKBACK_MS).toISOString(),
      limit: 100,
    });
    const items = new Set<string>();
    for (const job of page.data.data) {
      const itemId = jobItemId(job, manifestName);
      if (itemId !== null) items.add(itemId);
    }
    return items.size === 0 ? null : [...items].sort();
  } catch {
    return null;
  }
}

/** What `run` says when it stops on such jobs (docs/import.md). */
function unknownJobsMessage(
  items: readonly string[],
  context: { manifestName: string; ledgerPath: string; sandboxState?: string | undefined },
): string {
  const shown = items.slice(0, 5).join(', ') + (items.length > 5 ? `, and ${items.length - 5} more` : '');
  const head =
    `the service already holds jobs of ${context.manifestName} from the last 48 hours (items ${shown}), ` +
    `but the ledger ${context.ledgerPath} knows none of them, so running now could pay for them again. `;
  const fix = context.sandboxState
    ? `They are in the sandbox's state file ${context.sandboxState}: delete it too to start the sandbox afresh`
    : 'If the ledger was lost, rebuild it from the service first: `importJobs`. ' +
      'To generate everything again on purpose, give the manifest another name';
  return `${head}${fix}; nothing was submitted`;
}

/** The check and its message in one step, for `run`: throws when the run must not go on. */
export async function stopOnJobsUnknownToLedger(
  connection: { baseUrl: string; apiKey: string },
  ledger: Pick<RecordReads, 'hasAttempts'>,
  context: {
    manifestName: string;
    manifestArg: string;
    ledgerPath: string;
    ledgerFlag?: string | undefined;
    baseUrlFlag?: string | undefined;
    sandboxState?: string | undefined;
  },
): Promise<void> {
  const items = await jobsUnknownToLedger(connection, ledger, context.manifestName);
  if (items === null) return;
  const { manifestName, ledgerPath, sandboxState } = context;
  // How the caller named the batch, so the CLI can word the import as a command to type.
  const next = { manifest: context.manifestArg, ledger: context.ledgerFlag, baseUrl: context.baseUrlFlag };
  throw new LedgerLostError(unknownJobsMessage(items, { manifestName, ledgerPath, sandboxState }), {
    items,
    ledgerPath,
    ...(sandboxState ? { sandboxState } : { next }),
  });
}
