import type { StatusReport } from '../documents/status-report.js';
import type { LedgerRead } from './ledger-read.js';

/**
 * The status document (`status --json`, `run --json`, an API run's result): the ledger's service
 * after the manifest's name, and where the ledger is (`ledger.exists` false: nothing has run).
 */
export type StatusDocument = { manifest: string; service: string | null } & Omit<StatusReport, 'manifest'> & {
    /** `sandboxLedger`: no ledger here, but a sandbox run of this manifest left one there. */
    ledger: { path: string; exists: boolean; sandboxLedger?: string };
  };

export function statusDocument(
  report: StatusReport,
  ledger: LedgerRead & { sandboxLedger?: string | null },
): StatusDocument {
  const { manifest, ...rest } = report;
  const where = { path: ledger.path, exists: ledger.exists };
  const sandbox = ledger.sandboxLedger ? { sandboxLedger: ledger.sandboxLedger } : {};
  return { manifest, service: ledger.service, ...rest, ledger: { ...where, ...sandbox } };
}
