import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname } from 'node:path';
import { DatabaseLostError, LedgerHeldError, type NothingWas, UserError } from '../../errors.js';
import {
  acquireLedgerLock,
  type Ledger,
  type LedgerLifecycle,
  type LedgerLocation,
  ledgerFileMissing,
  ledgerFileOf,
  openLedger,
  type SharedLedger,
} from '../../ledger/index.js';
import type { Manifest } from '../../manifest/index.js';
import { redoProblem } from '../run-settings/redo-list.js';
import { ensureSameService } from '../service/service-identity.js';

/** Creates the ledger's folder and takes the run lock; null when another live run holds it. */
/**
 * A command that reads a batch's jobs back (audit, forget) needs a ledger that exists: a SQLite
 * file not there yet is refused, `ledger_missing`, saying there is nothing `to` do.
 */
export function refuseMissingLedger(
  location: LedgerLocation,
  ledgerPath: string,
  to: string,
  fields?: Record<string, unknown>,
): void {
  if (ledgerFileMissing(location))
    throw new UserError(`no ledger at ${ledgerPath}: there is nothing ${to}`, 'ledger_missing', fields);
}

export function lockLedger(ledgerPath: string, nothingWas: NothingWas): ReturnType<typeof acquireLedgerLock> {
  try {
    mkdirSync(dirname(ledgerPath), { recursive: true, mode: 0o700 });
    return acquireLedgerLock(ledgerPath);
  } catch (error) {
    throw unusableLedger(ledgerPath, error, `nothing was ${nothingWas}`);
  }
}

/** The run lock, or the refusal that names what was left undone. */
export function lockLedgerOrRefuse(
  ledgerPath: string,
  nothingWas: NothingWas,
): NonNullable<ReturnType<typeof acquireLedgerLock>> {
  const lock = lockLedger(ledgerPath, nothingWas);
  if (!lock) throw new LedgerHeldError(ledgerPath, nothingWas);
  return lock;
}

/** What holds a ledger while a command works on it; `release` lets the next one in. */
export interface LedgerHold {
  release(): void;
}

/**
 * Holds the batch's ledger for a command. A SQLite file: its lock, one run at a time. A shared
 * database: a run needs no hold (its runners coordinate by leases), while `import` and `forget`,
 * which rewrite the batch's record, are refused as long as a runner of it is alive, checked once
 * the ledger is open (refuseLiveRunners).
 */
export function holdLedger(location: LedgerLocation, nothingWas: NothingWas): LedgerHold {
  const file = ledgerFileOf(location);
  return file === null ? { release() {} } : lockLedgerOrRefuse(file, nothingWas);
}

/** A shared ledger with a live runner of this batch (any machine) is not rewritten. */
export async function refuseLiveRunners(
  ledger: SharedLedger & Pick<LedgerLifecycle, 'path'>,
  nothingWas: NothingWas,
): Promise<void> {
  if (ledger.severalRunners && (await ledger.liveRuns()) > 0)
    throw new LedgerHeldError(ledger.path, nothingWas);
}

/** How a command opens the batch's ledger: a shared one's lease and patience, and who opens it. */
interface LedgerOpening {
  leaseMs: number;
  reconnectWithinMs: number;
  /** A runner of the batch: it gets a name among the batch's runners. */
  runner?: boolean;
  readonly?: boolean;
  onWaiting?: (waitMs: number) => void;
}

/**
 * Opens the batch's ledger for a command that writes it; a ledger it cannot open is the user's to
 * fix, and the refusal says what the command left undone (a run: nothing was submitted).
 */
export function openLedgerForWriting(
  location: LedgerLocation,
  manifest: Manifest,
  shared: Omit<LedgerOpening, 'readonly'>,
  nothingWas: NothingWas,
): Promise<Ledger> {
  return openLedgerOrRefuse(location, manifest, shared, `nothing was ${nothingWas}`);
}

/**
 * Opens a ledger (read-only when asked) or refuses, exit code 2, with the location as people see it
 * (never a password) and what was left undone.
 */
export async function openLedgerOrRefuse(
  location: LedgerLocation,
  manifest: Manifest,
  shared: LedgerOpening,
  outcome: string,
): Promise<Ledger> {
  try {
    return await openLedger(location, manifest.name, manifest.file, {
      leaseMs: shared.leaseMs,
      reconnectWithinMs: shared.reconnectWithinMs,
      ...(shared.onWaiting ? { onWaiting: shared.onWaiting } : {}),
      ...(shared.readonly ? { readonly: true } : {}),
      ...(shared.runner ? { runnerId: newRunnerId() } : {}),
    });
  } catch (error) {
    throw unusableLedger(location.shown, error, outcome);
  }
}

/** A runner's name among the batch's runners: its machine and process, and a random part. */
function newRunnerId(): string {
  return `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/**
 * Opens the ledger for a run and refuses, before anything is sent, a `redo` it cannot honour or a
 * ledger bound to another service.
 */
export async function openRunLedger(
  location: LedgerLocation,
  manifest: Manifest,
  check: {
    redo: readonly string[];
    identity: string;
    cwd: string;
    leaseMs: number;
    reconnectWithinMs: number;
    onWaiting?: (waitMs: number) => void;
  },
): Promise<Ledger> {
  const ledgerPath = location.shown;
  const ledger = await openLedgerForWriting(location, manifest, { ...check, runner: true }, 'submitted');
  try {
    const redoRefused =
      check.redo.length === 0 ? null : redoProblem(check.redo, manifest, await ledger.listItems());
    if (redoRefused !== null)
      throw new UserError(
        `${redoRefused.message}; nothing was submitted`,
        'selection_empty',
        redoRefused.fields,
      );
    ensureSameService((await ledger.service())?.identity ?? null, check.identity, ledgerPath, check.cwd);
    return ledger;
  } catch (error) {
    await ledger.close();
    throw error;
  }
}

/** The ledger failed mid-run (disk full, I/O error): the run stops, and says how to go on. */
export function ledgerWriteFailure(path: string, error: unknown): unknown {
  if (error instanceof DatabaseLostError)
    return new UserError(
      `the ledger's database ${path} stopped answering (${error.message}); the run stopped, and no item failed. ` +
        'Re-run once it answers: every committed step is kept and nothing is paid twice',
      'ledger_write_failed',
    );
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return error;
  return new UserError(
    `cannot write the ledger ${path}: ${(error as Error).message} (${code}); the run stopped. ` +
      'Fix the cause (free disk space, say) and re-run: every committed step is kept and nothing is paid twice',
    'ledger_write_failed',
  );
}

/** A ledger that cannot be created or opened is the user's to fix: say which file and why, no stack. */
function unusableLedger(path: string, error: unknown, outcome: string): UserError {
  const code = (error as { code?: unknown }).code;
  const hint =
    code === 'EEXIST' || code === 'ENOTDIR'
      ? ' (a file stands where a folder of its path should be)'
      : code === 'EISDIR'
        ? ' (it is a folder)'
        : code === 'SQLITE_NOTADB'
          ? ' (it is not a mediabatch ledger)'
          : '';
  const reason = error instanceof Error ? error.message : String(error);
  return new UserError(`cannot open the ledger ${path}${hint}: ${reason}; ${outcome}`, 'ledger_unusable');
}
