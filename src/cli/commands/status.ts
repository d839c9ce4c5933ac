import { existsSync } from 'node:fs';
import { ExitCode, UserError } from '../../errors.js';
import { type AttemptView, Ledger } from '../../ledger/ledger.js';
import type { Manifest } from '../../manifest/index.js';
import { jsonChunks, writeChunks } from '../../report/json-chunks.js';
import { renderStatusChunks } from '../../report/render-text.js';
import { buildStatus, type LedgerView } from '../../report/status-report.js';
import { ledgerPathFor, manifestOrExit } from '../common.js';
import type { CliIo, Command } from '../io.js';

export interface LedgerRead {
  path: string;
  exists: boolean;
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
  options: { view?: AttemptView } = {},
): LedgerRead {
  const path = ledgerPathFor(manifest, flag, io);
  if (!existsSync(path)) return { path, exists: false, view: { items: [], attempts: [], files: [] } };
  let ledger: Ledger | null = null;
  try {
    ledger = Ledger.open(path, manifest.name, manifest.file, { readonly: true });
    return {
      path,
      exists: true,
      view: {
        items: ledger.listItems(),
        attempts: ledger.listAttempts({ view: options.view ?? 'summary' }),
        files: ledger.listFiles(),
      },
    };
  } catch (error) {
    throw new UserError(`cannot read the ledger ${path}: ${(error as Error).message}`, ExitCode.ItemsNotDone);
  } finally {
    ledger?.close();
  }
}

export const NO_MONEY = { chargedMicros: 0, refundedMicros: 0, reservedMicros: 0 };

/**
 * Runs `read` over the ledger opened read-only, or over null when there is none yet (nothing has
 * run: looking at a batch leaves no trace on disk). Its per-item views stream row by row, so
 * `read` must finish with them before the ledger closes.
 */
export function withLedger<T>(manifest: Manifest, path: string, read: (ledger: Ledger | null) => T): T {
  if (!existsSync(path)) return read(null);
  let ledger: Ledger | null = null;
  try {
    ledger = Ledger.open(path, manifest.name, manifest.file, { readonly: true });
    return read(ledger);
  } catch (error) {
    throw new UserError(`cannot read the ledger ${path}: ${(error as Error).message}`, ExitCode.ItemsNotDone);
  } finally {
    ledger?.close();
  }
}

export const statusCommand: Command<'status'> = async ({ values, positionals }, io) => {
  const manifest = manifestOrExit(positionals[0], io);
  const path = ledgerPathFor(manifest, values.ledger, io);
  const report = withLedger(manifest, path, (ledger) =>
    buildStatus(
      manifest,
      ledger
        ? {
            summaries: ledger.itemSummaries(),
            money: ledger.moneyTotals(),
            unsaved: ledger.unsavedSucceeded(),
          }
        : { summaries: [], money: NO_MONEY, unsaved: [] },
      Date.now(),
    ),
  );
  const note = { path, exists: existsSync(path) };
  await writeChunks(io.stdout, values.json ? jsonChunks({ ...report }) : renderStatusChunks(report, note));
  return ExitCode.Ok;
};
