import type { StatusReport } from '../report/status-report.js';

/** The status document (`status --json`, `run --json`, an API run's result): the ledger's service after the manifest's name. */
export type StatusDocument = { manifest: string; service: string | null } & Omit<StatusReport, 'manifest'>;

export function statusDocument(report: StatusReport, service: string | null): StatusDocument {
  const { manifest, ...rest } = report;
  return { manifest, service, ...rest };
}
