import { existsSync } from 'node:fs';
import { ExitCode, UserError } from '../../errors.js';
import { type AttemptView, Ledger } from '../../ledger/ledger.js';
import type { Manifest } from '../../manifest/index.js';
import { renderStatusText } from '../../report/render-text.js';
import { buildStatusReport, type LedgerView, type StatusReport } from '../../report/status-report.js';
import { ledgerPathFor, manifestOrExit } from '../common.js';
import type { CliIo, Command } from '../io.js';

export interface LedgerRead {
  path: string;
  exists: boolean;
  /** The service the ledger belongs to (docs/services.md); null while none has answered a run. */
  service: string | null;
  view: LedgerView;
}

/**
 * The ledger as the read-only commands see it. A missing ledger means nothing has run yet: it
 * is read as empty and never created, so looking at a batch leaves no trace on disk.
 */
export function readLedger(
  manifest: Manifest,
  flag: string | undefined,
  io: CliIo,
  options: { view?: AttemptView; sandbox?: boolean } = {},
): LedgerRead {
  return withLedger(manifest, flag, io, options, (read) => read);
}

/**
 * Like readLedger, and `use` may read more (single attempts, say) while the ledger is still open;
 * `ledger` is null when there is none yet.
 */
export function withLedger<T>(
  manifest: Manifest,
  flag: string | undefined,
  io: CliIo,
  options: { view?: AttemptView; sandbox?: boolean },
  use: (read: LedgerRead, ledger: Ledger | null) => T,
): T {
  const path = ledgerPathFor(manifest, flag, io, { sandbox: options.sandbox ?? false });
  if (!existsSync(path))
    return use({ path, exists: false, service: null, view: { items: [], attempts: [], files: [] } }, null);
  let ledger: Ledger | null = null;
  let read: LedgerRead;
  try {
    ledger = Ledger.open(path, manifest.name, manifest.file, { readonly: true });
    read = {
      path,
      exists: true,
      service: ledger.service()?.identity ?? null,
      view: {
        items: ledger.listItems(),
        attempts: ledger.listAttempts({ view: options.view ?? 'summary' }),
        files: ledger.listFiles(),
      },
    };
  } catch (error) {
    ledger?.close();
    throw new UserError(`cannot read the ledger ${path}: ${(error as Error).message}`, ExitCode.ItemsNotDone);
  }
  try {
    return use(read, ledger);
  } finally {
    ledger.close();
  }
}

export const statusCommand: Command<'status'> = async ({ values, positionals }, io) => {
  const manifest = manifestOrExit(positionals[0], io);
  const ledger = readLedger(manifest, values.ledger, io, { sandbox: values.sandbox });
  const report = buildStatusReport(manifest, ledger.view, Date.now());
  io.stdout.write(values.json ? statusJson(report, ledger.service) : renderStatusText(report, ledger));
  return ExitCode.Ok;
};

/** The status document (run --json prints it too), with the ledger's service after the manifest's name. */
export function statusJson(report: StatusReport, service: string | null): string {
  const { manifest, ...rest } = report;
  return `${JSON.stringify({ manifest, service, ...rest }, null, 2)}\n`;
}
