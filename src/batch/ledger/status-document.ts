import type { StatusItem } from '../../documents/status-line.js';
import type { StatusReport } from '../../documents/status-report.js';
import type { LedgerRead } from './ledger-read.js';

/**
 * The status document (`status --json`, `run --json`, an API run's result): the ledger's service
 * after the manifest's name, and where the ledger is (`ledger.exists` false: nothing has run).
 */
export type StatusDocument<Items extends Iterable<StatusItem> = StatusItem[]> = {
  manifest: string;
  service: string | null;
} & Omit<StatusReport<Items>, 'manifest'> & {
    /**
     * `sandboxLedger`: no ledger here, but a sandbox run of this manifest left one there.
     * `notOwner`: this ledger records the batch but no longer owns its output folder (another
     * ledger, a copy, does): the words a reader is told first.
     */
    ledger: { path: string; exists: boolean; sandboxLedger?: string; notOwner?: string };
  };

export function statusDocument<Items extends Iterable<StatusItem>>(
  report: StatusReport<Items>,
  ledger: LedgerRead & { sandboxLedger?: string | null; notOwner?: string },
): StatusDocument<Items> {
  const { manifest, ...rest } = report;
  const where = { path: ledger.path, exists: ledger.exists };
  const sandbox = ledger.sandboxLedger ? { sandboxLedger: ledger.sandboxLedger } : {};
  const owner = ledger.notOwner ? { notOwner: ledger.notOwner } : {};
  return { manifest, service: ledger.service, ...rest, ledger: { ...where, ...sandbox, ...owner } };
}
