import type { LedgerRead } from '../batch/ledger-read.js';
import type { StatusReport } from '../report/status-report.js';

/**
 * The status document (`status --json`, `run --json`, an API run's result): the ledger's service
 * after the manifest's name, and where the ledger is (`ledger.exists` false: nothing has run).
 */
export type StatusDocument = { manifest: string; service: string | null } & Omit<StatusReport, 'manifest'> & {
    ledger: { path: string; exists: boolean };
  };

export function statusDocument(report: StatusReport, ledger: LedgerRead): StatusDocument {
  const { manifest, ...rest } = report;
  return { manifest, service: ledger.service, ...rest, ledger: { path: ledger.path, exists: ledger.exists } };
}
