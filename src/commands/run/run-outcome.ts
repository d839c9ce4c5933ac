import { type LedgerRead, openedLedger, statusSource } from '../../batch/ledger-read.js';
import type { PreflightResult } from '../../batch/preflight.js';
import type { Batch } from '../../batch/resolve-batch.js';
import type { RunSettings } from '../../batch/run-settings.js';
import type { Connection } from '../../batch/service-check.js';
import { serviceIdentity } from '../../batch/service-identity.js';
import { buildStatusStreamed, type StatusReport } from '../../documents/status-report.js';
import { ExitCode } from '../../errors.js';
import type { Ledger } from '../../ledger/ledger.js';
import type { StopReason } from '../../runner/stop-rules.js';
import type { GalleryWritten } from '../report/gallery.js';

/**
 * How a run ended, in values: what the pre-flight found, the items' states, why it stopped, and the
 * exit code `mediabatch run` ends with (docs/commands.md).
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
  exitCode: ExitCode;
  /** False when stopped during the pre-flight: nothing was submitted. */
  started: boolean;
  stop: StopReason | null;
  report: StatusReport;
  /** The ledger's path, and the service it is bound to. */
  ledger: LedgerRead;
  only: ReadonlySet<string> | null;
  /** The gallery the run wrote or refreshed as it ended; null when it wrote none. */
  gallery: GalleryWritten | null;
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
  ledger: Ledger,
  stop: StopReason | null,
  code: ExitCode | null,
  started: boolean,
): Promise<RunOutcome> {
  const only = request.settings.runner.only ?? null;
  const report = await buildStatusStreamed(request.batch.manifest, await statusSource(ledger), Date.now());
  const asked = report.items.filter((item) => only?.has(item.id) ?? true);
  return {
    exitCode: code ?? runExitCode(stop, asked),
    started,
    stop,
    report,
    ledger: await openedLedger(ledger, request.batch.ledgerShown),
    only,
    gallery: null,
    heldBack: [],
  };
}

/** The exit code of a run, from why it stopped and the state of the items it was asked to run. */
function runExitCode(stop: StopReason | null, items: ReadonlyArray<{ state: string }>): ExitCode {
  if (stop?.kind === 'account_refused' || stop?.kind === 'ledger_disagrees' || stop?.kind === 'disk_refuses')
    return ExitCode.Refused;
  // A batch redefined under the run: the same exit code as the refusal at a run's start.
  if (stop?.kind === 'definition_differs') return ExitCode.Usage;
  const settled = items.every((item) => item.state !== 'pending' && item.state !== 'in_flight');
  if (stop?.kind === 'draining' && !settled) return ExitCode.Interrupted;
  return items.every((item) => item.state === 'done') ? ExitCode.Ok : ExitCode.ItemsNotDone;
}
