import { z } from 'zod';
import { copyBatchLedger, type LedgerCopied } from '../batch/copy-ledger.js';
import { forgetLostJobs } from '../batch/forget-jobs.js';
import { importLedger } from '../batch/import-ledger.js';
import type { Warn, Warning } from '../batch/warnings.js';
import type { ImportSummary } from '../import/render.js';
import type { Manifest } from '../manifest/index.js';
import {
  batchOf,
  checkedManifest,
  checkOptions,
  ledgerOptionsSchema,
  serviceOptionsSchema,
} from './options.js';

const tellSchema = {
  /** Told each pre-flight word and warning as `{ code, message }`. */
  warn: z.custom<(warning: Warning) => void>((value) => typeof value === 'function').optional(),
  /** Told each pre-flight word and warning as one line (the message of `warn`). */
  log: z.custom<(line: string) => void>((value) => typeof value === 'function').optional(),
};

const importOptionsSchema = serviceOptionsSchema.extend({
  /** How far back to look, in hours (`--since`); default 48, how long outputs live. */
  sinceHours: z.number().positive().optional(),
  /**
   * Folders the outputs may have been moved to (`--files-from`), from `cwd`: an output found there
   * by its sidecar is copied back into the output folder (docs/import.md). A folder of outputs only.
   */
  filesFrom: z.array(z.string().min(1)).optional(),
  ...tellSchema,
});

export type ImportOptions = z.input<typeof importOptionsSchema>;

/** Rebuilds a lost ledger from the service's job list, with the checks `mediabatch import` makes. */
export async function importJobs(manifest: Manifest, options: ImportOptions = {}): Promise<ImportSummary> {
  const { sinceHours, filesFrom, warn, log, ...rest } = checkOptions(
    'importJobs',
    importOptionsSchema,
    options,
  );
  const batch = batchOf(checkedManifest('importJobs', manifest), rest);
  return importLedger(
    batch,
    { sinceMs: sinceHours === undefined ? null : sinceHours * 3_600_000, filesFrom: filesFrom ?? [] },
    tellOf(warn, log),
  );
}

const forgetOptionsSchema = serviceOptionsSchema.extend({
  /** Items to look at; default every item with a job in flight. */
  ids: z.array(z.string().min(1)).optional(),
  ...tellSchema,
});

export type ForgetOptions = z.input<typeof forgetOptionsSchema>;

/** One job `forgetJobs` looked at. */
export interface ForgottenJob {
  itemId: string;
  jobId: string;
  /** True: the service does not know the job, and it was given up; its item is pending again. */
  lost: boolean;
  /** What the job cost, net of refunds; a forgotten job's cost stays in the spend. */
  paidMicros: number;
  /** Why a job was kept; null for a forgotten one. */
  why: string | null;
}

/**
 * Gives up the jobs in flight that the service no longer knows (`mediabatch forget`): only a 404
 * from the service gives a job up. An empty list: nothing was in flight.
 */
export async function forgetJobs(manifest: Manifest, options: ForgetOptions = {}): Promise<ForgottenJob[]> {
  const { ids, warn, log, ...rest } = checkOptions('forgetJobs', forgetOptionsSchema, options);
  const batch = batchOf(checkedManifest('forgetJobs', manifest), rest);
  const outcomes = await forgetLostJobs(batch, ids ?? [], tellOf(warn, log));
  return outcomes.map(({ attempt, lost, why }) => ({
    itemId: attempt.itemId,
    jobId: attempt.jobId ?? '',
    lost,
    paidMicros: attempt.amountMicros - attempt.refundedMicros,
    why: why ?? null,
  }));
}

const copyOptionsSchema = ledgerOptionsSchema.extend({
  /** Where the copy goes: a ledger file's path (from `cwd`), or a postgres:// URL. */
  to: z.string().min(1),
});

export type CopyLedgerOptions = z.input<typeof copyOptionsSchema>;

/**
 * What `copyLedger` copied: `from` and `to` as people may see them (a URL without its password),
 * and how many rows of each kind the batch's record holds.
 */
export type LedgerCopy = LedgerCopied;

/**
 * Copies the batch's whole record (items, attempts, jobs, charges, files, takes, events, runs) from
 * its ledger (`ledger`, default the manifest's own) to `to`, SQLite to PostgreSQL or back
 * (`mediabatch copy-ledger`, docs/shared-ledger.md). The source is only read. Refused with nothing
 * written while a run holds either ledger (`ledger_held`), when the source has no such batch
 * (`ledger_missing`) and when `to` already records items of it (`ledger_not_empty`). The output
 * location's claim passes to the copy when the source held it (`outputPassed`).
 */
export async function copyLedger(manifest: Manifest, options: CopyLedgerOptions): Promise<LedgerCopy> {
  const { to, ...rest } = checkOptions('copyLedger', copyOptionsSchema, options);
  return copyBatchLedger(batchOf(checkedManifest('copyLedger', manifest), rest), to);
}

function tellOf(warn: Warn | undefined, log: ((line: string) => void) | undefined): Warn {
  return (warning) => {
    warn?.(warning);
    log?.(warning.message);
  };
}
