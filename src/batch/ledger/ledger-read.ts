import { existsSync } from 'node:fs';
import type { LedgerNote } from '../../documents/render-text.js';
import type { StatusReads } from '../../documents/status-report.js';
import { type LedgerView, summarizeView } from '../../documents/status-view.js';
import { UserError } from '../../errors.js';
import {
  isLedgerReadError,
  type Ledger,
  type LedgerLifecycle,
  ledgerFileMissing,
  openLedger,
  type ReadingLedger,
  type RecordReads,
  shownCheck,
} from '../../ledger/index.js';
import type { ManifestHead } from '../../manifest/index.js';
import type { Batch } from '../resolve/resolve-batch.js';
import { savedFileProblems } from './saved-file-problems.js';

/** Where the ledger is, whether it exists yet, and the service it belongs to (docs/services.md). */
export type LedgerRead = Required<LedgerNote>;

export const EMPTY_VIEW: LedgerView = { items: [], attempts: [], files: [] };

/**
 * Runs `use` over the ledger opened read-only, or over null when there is none yet: nothing has
 * run, and looking at a batch leaves no trace on disk. What `use` reads streams from SQLite, so
 * it must finish with it before returning; a read that fails is the ledger's fault, said so.
 */
export async function withLedger<T>(
  batch: Pick<Batch<ManifestHead>, 'manifest' | 'ledgerShown' | 'ledger' | 'settings'>,
  use: (ledger: Ledger | null, note: LedgerRead) => Promise<T>,
): Promise<T> {
  const { ledger, note } = await openForReading(batch);
  if (ledger === null) return use(null, note);
  try {
    return await use(ledger, note);
  } catch (error) {
    throw readFailure(note.path, error);
  } finally {
    await ledger.close();
  }
}

export async function openForReading({
  manifest,
  ledgerShown: path,
  ledger: location,
  settings,
}: Pick<Batch<ManifestHead>, 'manifest' | 'ledgerShown' | 'ledger' | 'settings'>): Promise<{
  ledger: Ledger | null;
  note: LedgerRead;
}> {
  if (ledgerFileMissing(location)) return { ledger: null, note: { path, exists: false, service: null } };
  let ledger: Ledger | null = null;
  try {
    ledger = await openLedger(location, manifest.name, manifest.file, {
      readonly: true,
      reconnectWithinMs: settings.reconnectWithinMs,
    });
    return { ledger, note: await openedLedger(ledger, path) };
  } catch (error) {
    await ledger?.close();
    // A ledger that cannot even be opened (a wrong path's folder, a database's wrong password) is
    // the caller's to fix, as for run; one that fails while read is the ledger's fault.
    throw cannotRead(path, error, 'ledger_unusable');
  }
}

/** A read that fails is the ledger's fault, said so; any other error passes through. */
export function readFailure(path: string, error: unknown): unknown {
  return isLedgerReadError(error) ? cannotRead(path, error) : error;
}

function cannotRead(
  path: string,
  error: unknown,
  code: 'ledger_unusable' | 'ledger_read_failed' = 'ledger_read_failed',
): UserError {
  return new UserError(`cannot read the ledger ${path}: ${(error as Error).message}`, code);
}

/** The whole ledger in memory, for `report`, which shows every attempt (the gallery streams: batch-gallery.ts). */
export type LedgerContents = LedgerRead & { view: LedgerView };

export function readLedger(
  batch: Pick<Batch<ManifestHead>, 'manifest' | 'ledgerShown' | 'ledger' | 'settings'>,
): Promise<LedgerContents> {
  return withLedger(batch, async (ledger, note) =>
    ledger
      ? {
          ...note,
          view: {
            items: await ledger.listItems(),
            attempts: await ledger.listAttempts(),
            files: await ledger.listFiles(),
          },
        }
      : { ...note, view: EMPTY_VIEW },
  );
}

/**
 * What `status` is built from: one SQLite row per item, streamed, the sums, and the saved files
 * checked on disk (by SHA-256 too with `verify`).
 */
export async function statusSource(
  ledger: (RecordReads & ReadingLedger) | null,
  verify = false,
): Promise<StatusReads> {
  const fileCheck = verify ? 'sha256' : 'stat';
  if (ledger === null) {
    const { summaries, ...empty } = summarizeView(EMPTY_VIEW);
    return { ...empty, summaries: streamOf(summaries), fileCheck };
  }
  const money = await ledger.moneyTotals();
  const unsaved = await ledger.unsavedSucceeded();
  const fileProblems = await savedFileProblems(ledger, verify);
  const checks = new Map(
    (await ledger.takeChecks()).flatMap((check) =>
      check.jobId ? [[check.jobId, shownCheck(check)] as const] : [],
    ),
  );
  return { money, unsaved, fileProblems, fileCheck, checks, summaries: ledger.itemSummaries() };
}

export async function* streamOf<T>(rows: Iterable<T>): AsyncIterable<T> {
  yield* rows;
}

/** What a reader is told of a ledger that is open: where it is, and the service it is bound to. */
export async function openedLedger(ledger: LedgerLifecycle, path: string): Promise<LedgerRead> {
  return { path, exists: true, service: (await ledger.service())?.identity ?? null };
}

/** Nothing has run here, but a sandbox run has (after `npm run demo`, say): where its ledger is. */
export function sandboxLedgerBeside(
  batch: { sandboxLedger: string | null },
  note: { exists: boolean },
): string | null {
  const there = !note.exists && batch.sandboxLedger !== null && existsSync(batch.sandboxLedger);
  return there ? batch.sandboxLedger : null;
}
