import type { GalleryWritten } from '../../batch/gallery/batch-gallery.js';
import { type LedgerRead, openedLedger, statusSource } from '../../batch/ledger/ledger-read.js';
import type { Batch } from '../../batch/resolve/resolve-batch.js';
import type { RunSettings } from '../../batch/run-settings/run-settings.js';
import type { PreflightResult } from '../../batch/service/preflight.js';
import type { Connection } from '../../batch/service/service-check.js';
import { serviceIdentity } from '../../batch/service/service-identity.js';
import type { Outcome } from '../../codes.js';
import { buildStatusStreamed, type StatusReport } from '../../documents/status-report.js';
import type { LedgerLifecycle, ReadingLedger, RecordReads } from '../../ledger/index.js';
import type { StopReason } from '../../runner/stop-rules.js';

/**
 * How a run ended, in values: what the pre-flight found, the items' states, why it stopped, and its
 * outcome (the CLI's exit code is the outcome's, exit-codes.ts).
 */

/** What the pre-flight found, in plain values (the terminal view words it). */
export interface CheckedService {
  service: string;
  answer:
    | { kind: 'answered'; balanceUsd: string; active: number; limit: number }
    | { kind: 'slow' }
    | { kind: 'refused' };
}

export interface RunOutcome {
  outcome: Outcome;
  /** False when stopped during the pre-flight: nothing was submitted. */
  started: boolean;
  stop: StopReason | null;
  report: StatusReport;
  /** The ledger's path, and the service it is bound to. */
  ledger: LedgerRead;
  only: ReadonlySet<string> | null;
  /** The gallery the run wrote or refreshed as it ended; null when it wrote none. */
  gallery: GalleryWritten | null;
  /** Other runners of its shared batch still running as it ended: the gallery is left to the last (gallery-at-end.ts). */
  galleryLeftTo: number;
  /** Items a file this ledger did not write kept from being submitted (names-in-the-way.ts). */
  heldBack: string[];
}

export function checkedService(
  connection: Connection,
  checked: Exclude<PreflightResult, { kind: 'interrupted' }>,
): CheckedService {
  const service = serviceIdentity(connection.baseUrl);
  if (checked.kind !== 'answered') return { service, answer: { kind: checked.kind } };
  const { balance, concurrency } = checked.account;
  return {
    service,
    answer: {
      kind: 'answered',
      balanceUsd: balance.amount_usd,
      active: concurrency.active,
      limit: concurrency.limit,
    },
  };
}

export async function outcomeOf(
  request: { batch: Pick<Batch, 'manifest' | 'ledgerShown'>; settings: Pick<RunSettings, 'runner'> },
  ledger: LedgerLifecycle & RecordReads & ReadingLedger,
  stop: StopReason | null,
  ended: Outcome | null,
  started: boolean,
): Promise<RunOutcome> {
  const only = request.settings.runner.only ?? null;
  const report = await buildStatusStreamed(request.batch.manifest, await statusSource(ledger), Date.now());
  const asked = report.items.filter((item) => only?.has(item.id) ?? true);
  return {
    outcome: ended ?? runOutcome(stop, asked),
    started,
    stop,
    report,
    ledger: await openedLedger(ledger, request.batch.ledgerShown),
    only,
    gallery: null,
    galleryLeftTo: 0,
    heldBack: [],
  };
}

/** How a run ended, from why it stopped and the state of the items it was asked to run. */
function runOutcome(stop: StopReason | null, items: ReadonlyArray<{ state: string }>): Outcome {
  if (stop?.kind === 'account_refused' || stop?.kind === 'ledger_disagrees' || stop?.kind === 'disk_refuses')
    return 'refused';
  if (stop?.kind === 'definition_differs') return 'redefined';
  // Takes saved while a check of your own could not run are unchecked: not a run that is done.
  if (stop?.kind === 'check_unusable') return 'not_done';
  const settled = items.every((item) => item.state !== 'pending' && item.state !== 'in_flight');
  if (stop?.kind === 'draining' && !settled) return 'interrupted';
  return items.every((item) => item.state === 'done') ? 'done' : 'not_done';
}
