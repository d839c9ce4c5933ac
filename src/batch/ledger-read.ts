import { existsSync } from 'node:fs';
import { ExitCode, UserError } from '../errors.js';
import { isLedgerReadError, Ledger } from '../ledger/ledger.js';
import type { Manifest } from '../manifest/index.js';
import { priceTable } from '../report/cost-estimate.js';
import { type PlanSource, planSourceOf } from '../report/plan-source.js';
import type { LedgerNote } from '../report/render-text.js';
import { type LedgerView, type StatusSource, summarizeView } from '../report/status-report.js';
import { ledgerPathFor } from './placement.js';
import type { Host } from './host.js';

/** Where the ledger is, whether it exists yet, and the service it belongs to (docs/services.md). */
export type LedgerRead = Required<LedgerNote>;

const EMPTY_VIEW: LedgerView = { items: [], attempts: [], files: [] };

/**
 * Runs `use` over the ledger opened read-only, or over null when there is none yet: nothing has
 * run, and looking at a batch leaves no trace on disk. What `use` reads streams from SQLite, so
 * it must finish with it before returning; a read that fails is the ledger's fault, said so.
 */
export function withLedger<T>(
  manifest: Manifest,
  flag: string | undefined,
  io: Pick<Host, 'cwd'>,
  options: { sandbox?: boolean },
  use: (ledger: Ledger | null, note: LedgerRead) => T,
): T {
  const { ledger, note } = openForReading(manifest, flag, io, options);
  if (ledger === null) return use(null, note);
  try {
    return use(ledger, note);
  } catch (error) {
    throw isLedgerReadError(error) ? cannotRead(note.path, error) : error;
  } finally {
    ledger.close();
  }
}

/** withLedger for a reader that writes as it reads (`export`): the ledger stays open until it ends. */
export async function withLedgerAsync<T>(
  manifest: Manifest,
  flag: string | undefined,
  io: Pick<Host, 'cwd'>,
  options: { sandbox?: boolean },
  use: (ledger: Ledger | null, note: LedgerRead) => Promise<T>,
): Promise<T> {
  const { ledger, note } = openForReading(manifest, flag, io, options);
  if (ledger === null) return use(null, note);
  try {
    return await use(ledger, note);
  } catch (error) {
    throw isLedgerReadError(error) ? cannotRead(note.path, error) : error;
  } finally {
    ledger.close();
  }
}

function openForReading(
  manifest: Manifest,
  flag: string | undefined,
  io: Pick<Host, 'cwd'>,
  options: { sandbox?: boolean },
): { ledger: Ledger | null; note: LedgerRead } {
  const path = ledgerPathFor(manifest, flag, io, { sandbox: options.sandbox ?? false });
  if (!existsSync(path)) return { ledger: null, note: { path, exists: false, service: null } };
  let ledger: Ledger | null = null;
  try {
    ledger = Ledger.open(path, manifest.name, manifest.file, { readonly: true });
    return { ledger, note: { path, exists: true, service: ledger.service()?.identity ?? null } };
  } catch (error) {
    ledger?.close();
    throw cannotRead(path, error);
  }
}

function cannotRead(path: string, error: unknown): UserError {
  return new UserError(
    `cannot read the ledger ${path}: ${(error as Error).message}`,
    ExitCode.ItemsNotDone,
    'ledger_unusable',
  );
}

/** The whole ledger in memory, for `report`, which shows every attempt. */
export function readLedger(
  manifest: Manifest,
  flag: string | undefined,
  io: Pick<Host, 'cwd'>,
  options: { sandbox?: boolean } = {},
): LedgerRead & { view: LedgerView } {
  return withLedger(manifest, flag, io, options, (ledger, note) => ({
    ...note,
    view: ledger
      ? { items: ledger.listItems(), attempts: ledger.listAttempts(), files: ledger.listFiles() }
      : EMPTY_VIEW,
  }));
}

/** What `status` is built from: one SQLite row per item, streamed, and the sums. */
export function statusSource(ledger: Ledger | null): StatusSource {
  if (ledger === null) return summarizeView(EMPTY_VIEW);
  // The sums first: while the summaries stream, the connection runs nothing else.
  const money = ledger.moneyTotals();
  const unsaved = ledger.unsavedSucceeded();
  return { money, unsaved, summaries: ledger.itemSummaries() };
}

/** What `plan` is built from: one SQLite row per item, streamed; prices and files only if asked. */
export function planSource(ledger: Ledger | null): PlanSource {
  if (ledger === null) return planSourceOf(EMPTY_VIEW);
  return {
    money: ledger.moneyTotals(),
    unsaved: ledger.unsavedSucceeded(),
    entries: ledger.itemEntries(),
    prices: () => priceTable(ledger.priceSamples()),
    itemFilePaths: () => ledger.itemFilePaths(),
  };
}
