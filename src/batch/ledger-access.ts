import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { Ledger } from '../ledger/ledger.js';
import { acquireLedgerLock } from '../ledger/lock.js';
import type { Manifest } from '../manifest/index.js';
import { redoProblem } from './redo-list.js';
import { ensureSameService } from './service-identity.js';

/** Creates the ledger's folder and takes the run lock; null when another live run holds it. */
export function lockLedger(ledgerPath: string): ReturnType<typeof acquireLedgerLock> {
  try {
    mkdirSync(dirname(ledgerPath), { recursive: true, mode: 0o700 });
    return acquireLedgerLock(ledgerPath);
  } catch (error) {
    throw unusableLedger(ledgerPath, error);
  }
}

/** Another live run holds the ledger: the same refusal for every command and the API (exit code 3). */
export class LedgerHeldError extends UserError {
  constructor(
    readonly ledgerPath: string,
    nothingWas: 'changed' | 'imported' | 'forgotten' = 'changed',
  ) {
    super(
      `the ledger ${ledgerPath} is held by another live run; nothing was ${nothingWas}`,
      ExitCode.Refused,
      'ledger_held',
    );
    this.name = 'LedgerHeldError';
  }
}

/** The run lock, or the refusal that names what was left undone. */
export function lockLedgerOrRefuse(
  ledgerPath: string,
  nothingWas: 'changed' | 'imported' | 'forgotten',
): NonNullable<ReturnType<typeof acquireLedgerLock>> {
  const lock = lockLedger(ledgerPath);
  if (!lock) throw new LedgerHeldError(ledgerPath, nothingWas);
  return lock;
}

/**
 * Opens the ledger for a run and refuses, before anything is sent, a `redo` it cannot honour or a
 * ledger bound to another service.
 */
export function openRunLedger(
  ledgerPath: string,
  manifest: Manifest,
  check: { redo: readonly string[]; identity: string; cwd: string },
): Ledger {
  let ledger: Ledger;
  try {
    ledger = Ledger.open(ledgerPath, manifest.name, manifest.file);
  } catch (error) {
    throw unusableLedger(ledgerPath, error);
  }
  try {
    const redoRefused =
      check.redo.length === 0 ? null : redoProblem(check.redo, manifest, ledger.listItems());
    if (redoRefused !== null)
      throw new UserError(
        `${redoRefused.message}; nothing was submitted`,
        ExitCode.Usage,
        'selection_empty',
        redoRefused.fields,
      );
    ensureSameService(ledger.service()?.identity ?? null, check.identity, ledgerPath, check.cwd);
    return ledger;
  } catch (error) {
    ledger.close();
    throw error;
  }
}

/** The ledger failed mid-run (disk full, I/O error): the run stops, and says how to go on. */
export function ledgerWriteFailure(path: string, error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return error;
  return new UserError(
    `cannot write the ledger ${path}: ${(error as Error).message} (${code}); the run stopped. ` +
      'Fix the cause (free disk space, say) and re-run: every committed step is kept and nothing is paid twice',
    ExitCode.ItemsNotDone,
    'ledger_write_failed',
  );
}

/** A ledger that cannot be created or opened is the user's to fix: say which file and why, no stack. */
function unusableLedger(path: string, error: unknown): UserError {
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
  return new UserError(
    `cannot open the ledger ${path}${hint}: ${reason}; nothing was submitted`,
    ExitCode.Usage,
    'ledger_unusable',
  );
}
