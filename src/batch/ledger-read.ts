import { existsSync } from 'node:fs';
import { ExitCode, UserError } from '../errors.js';
import type { Ledger } from '../ledger/ledger.js';
import { isLedgerReadError } from '../ledger/ledger-connection.js';
import { openLedger } from '../ledger/open-ledger.js';
import { DatabaseError, DatabaseLostError } from '../ledger/postgres/sync-connection.js';
import type { KeeperRecord } from '../ledger/records.js';
import { priceTable } from '../report/cost-estimate.js';
import { type PlanSource, planSourceOf } from '../report/plan-source.js';
import type { LedgerNote } from '../report/render-text.js';
import { type LedgerView, type StatusSource, summarizeView } from '../report/status-report.js';
import type { Batch } from './resolve-batch.js';
import { savedFileProblems } from './saved-file-problems.js';

/** Where the ledger is, whether it exists yet, and the service it belongs to (docs/services.md). */
export type LedgerRead = Required<LedgerNote>;

const EMPTY_VIEW: LedgerView = { items: [], attempts: [], files: [] };

/**
 * Runs `use` over the ledger opened read-only, or over null when there is none yet: nothing has
 * run, and looking at a batch leaves no trace on disk. What `use` reads streams from SQLite, so
 * it must finish with it before returning; a read that fails is the ledger's fault, said so.
 */
export function withLedger<T>(
  batch: Pick<Batch, 'manifest' | 'ledgerPath' | 'ledger' | 'settings'>,
  use: (ledger: Ledger | null, note: LedgerRead) => T,
): T {
  const { ledger, note } = openForReading(batch);
  if (ledger === null) return use(null, note);
  try {
    return use(ledger, note);
  } catch (error) {
    throw readFailure(note.path, error);
  } finally {
    ledger.close();
  }
}

export function openForReading({
  manifest,
  ledgerPath: path,
  ledger: location,
  settings,
}: Pick<Batch, 'manifest' | 'ledgerPath' | 'ledger' | 'settings'>): {
  ledger: Ledger | null;
  note: LedgerRead;
} {
  if (location.kind === 'sqlite' && !existsSync(path))
    return { ledger: null, note: { path, exists: false, service: null } };
  let ledger: Ledger | null = null;
  try {
    ledger = openLedger(location, manifest.name, manifest.file, {
      readonly: true,
      reconnectWithinMs: settings.reconnectWithinMs,
    });
    return { ledger, note: openedLedger(ledger, path) };
  } catch (error) {
    ledger?.close();
    // A ledger that cannot even be opened (a wrong path's folder, a database's wrong password) is
    // the caller's to fix, as for run; one that fails while read is the ledger's fault.
    throw cannotRead(path, error, ExitCode.Usage);
  }
}

/** A read that fails is the ledger's fault, said so; any other error passes through. */
export function readFailure(path: string, error: unknown): unknown {
  const fromLedger =
    isLedgerReadError(error) || error instanceof DatabaseError || error instanceof DatabaseLostError;
  return fromLedger ? cannotRead(path, error) : error;
}

function cannotRead(path: string, error: unknown, exitCode: ExitCode = ExitCode.ItemsNotDone): UserError {
  return new UserError(
    `cannot read the ledger ${path}: ${(error as Error).message}`,
    exitCode,
    'ledger_unusable',
  );
}

/** The whole ledger in memory, for `report`, which shows every attempt, and the keepers the gallery marks. */
export type LedgerContents = LedgerRead & { view: LedgerView; keepers: KeeperRecord[] };

export function readLedger(
  batch: Pick<Batch, 'manifest' | 'ledgerPath' | 'ledger' | 'settings'>,
): LedgerContents {
  return withLedger(batch, (ledger, note) =>
    ledger ? ledgerContents(ledger, note) : { ...note, view: EMPTY_VIEW, keepers: [] },
  );
}

/** The same from a ledger already open (a run's, as it ends): what it committed and what it holds. */
export function ledgerContents(ledger: Ledger, note: LedgerRead): LedgerContents {
  return {
    ...note,
    view: { items: ledger.listItems(), attempts: ledger.listAttempts(), files: ledger.listFiles() },
    keepers: ledger.keepers(),
  };
}

/**
 * What `status` is built from: one SQLite row per item, streamed, the sums, and the saved files
 * checked on disk (by SHA-256 too with `verify`).
 */
export function statusSource(ledger: Ledger | null, verify = false): StatusSource {
  const fileCheck = verify ? 'sha256' : 'stat';
  if (ledger === null) return { ...summarizeView(EMPTY_VIEW), fileCheck };
  // The sums and the files first: while the summaries stream, the connection runs nothing else.
  const money = ledger.moneyTotals();
  const unsaved = ledger.unsavedSucceeded();
  const fileProblems = savedFileProblems(ledger, verify);
  return { money, unsaved, fileProblems, fileCheck, summaries: ledger.itemSummaries() };
}

/** What `plan` is built from: one SQLite row per item, streamed; prices and files only if asked. */
export function planSource(ledger: Ledger | null, verify = false): PlanSource {
  if (ledger === null) return planSourceOf(EMPTY_VIEW);
  return {
    // Before the entries stream, as for status.
    fileProblems: savedFileProblems(ledger, verify),
    money: ledger.moneyTotals(),
    unsaved: ledger.unsavedSucceeded(),
    entries: ledger.itemEntries(),
    prices: () => priceTable(ledger.priceSamples()),
    itemFilePaths: () => ledger.itemFilePaths(),
    recorded: (attempt) => ledger.attemptRequest(attempt.id),
    reusableTakes: () => ledger.reusableTakes(),
  };
}

/** What a reader is told of a ledger that is open: where it is, and the service it is bound to. */
export function openedLedger(ledger: Ledger, path: string): LedgerRead {
  return { path, exists: true, service: ledger.service()?.identity ?? null };
}
