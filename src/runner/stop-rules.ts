import { ApiConnectionError, ApiError } from '../errors.js';

/**
 * When a run stops submitting, as data and pure functions over plain values: the causes that are
 * the same for every item (a refused account, a wrong route, a ledger the service disagrees with),
 * the stop-loss after several items fail alike, and how an outage is told apart and reported.
 * Retries and backoff are in policy.ts.
 */

export type AccountRefused = { kind: 'account_refused'; code: string; message: string };

/**
 * Why a run stops submitting before every item is settled. Apart from a drain (Ctrl-C), each is
 * a cause that is the same for every item, so items are left as they were (docs/services.md).
 */
export type StopReason =
  | AccountRefused
  | { kind: 'draining' }
  /** The service does not know jobs this ledger holds: they disagree, and resubmitting could pay twice. */
  | { kind: 'ledger_disagrees'; jobs: ReadonlyArray<{ jobId: string; itemId: string }> }
  /** The service has no such route (404 on a POST or a listing): the address, not an item. */
  | { kind: 'service_route'; code: string; message: string }
  /** Several different items in a row failed with the same final code. */
  | { kind: 'stop_loss'; signature: string; items: readonly string[] }
  /**
   * A check of your own (docs/checks.md) could not give a verdict: its program is missing, or it
   * ran past its timeout. The same for every take, so nothing more is bought until it is fixed.
   */
  | { kind: 'check_unusable'; check: string; message: string }
  /** A shared batch got a new revision of its definition (`revision`) while this run worked on an older one. */
  | { kind: 'definition_differs'; revision: number; message: string }
  /** Our own disk refused a file for a cause no item can change (full, read-only, not ours to write). */
  | DiskRefuses;

export type DiskRefuses = { kind: 'disk_refuses'; code: string; folder: string; message: string };

/** Which stop a run reports when several apply: the one that asks most of the user. */
const STOP_RANK: Readonly<Record<StopReason['kind'], number>> = {
  draining: 0,
  stop_loss: 1,
  check_unusable: 2,
  disk_refuses: 2,
  service_route: 3,
  definition_differs: 4,
  ledger_disagrees: 5,
  account_refused: 6,
};

/**
 * The stop in force after `next` happens. A higher rank replaces a lower one (a refused account
 * outranks a drain); unknown jobs add up, so the message names them all; otherwise the first stays.
 */
export function combineStops(current: StopReason | null, next: StopReason): StopReason {
  if (current === null) return next;
  if (current.kind === 'ledger_disagrees' && next.kind === 'ledger_disagrees') {
    const known = new Set(current.jobs.map((job) => job.jobId));
    return {
      kind: 'ledger_disagrees',
      jobs: [...current.jobs, ...next.jobs.filter((job) => !known.has(job.jobId))],
    };
  }
  return STOP_RANK[next.kind] > STOP_RANK[current.kind] ? next : current;
}

/** The stop a 401 or 402 on any call means: the key or the wallet, the same for every item. */
export function accountRefusal(error: unknown): AccountRefused | null {
  if (!(error instanceof ApiError) || (error.status !== 401 && error.status !== 402)) return null;
  return { kind: 'account_refused', code: error.code, message: error.message };
}

// Our own storage: the disk, or an S3 bucket -------------------------------------------------

/**
 * Save errors that are the same for every item: the next file fails like this one, so the run
 * stops paying for files it cannot keep. Each says what a person must fix. The S3 codes are the
 * bucket's answers that no retry changes (docs/storage.md).
 */
const STORE_REFUSALS: Readonly<Record<string, (folder: string) => string>> = {
  ENOSPC: (folder) => `the disk holding ${folder} is full: free some space`,
  EDQUOT: (folder) => `the disk quota for ${folder} is used up: free some space or raise the quota`,
  EROFS: (folder) => `${folder} is on a read-only file system: remount it read-write`,
  EACCES: (folder) => `mediabatch may not write in ${folder}: fix the folder's owner or permissions`,
  NoSuchBucket: (folder) => `the bucket of ${folder} does not exist: create it, or fix output.dir`,
  InvalidAccessKeyId: (folder) =>
    `the storage does not know the access key used for ${folder}: check AWS_ACCESS_KEY_ID or AWS_PROFILE`,
  SignatureDoesNotMatch: (folder) =>
    `the storage refused the signature of requests to ${folder}: check AWS_SECRET_ACCESS_KEY`,
  AccessDenied: (folder) => `the credentials may not write to ${folder}: grant them s3:PutObject there`,
  ExpiredToken: (folder) => `the session token for ${folder} has expired: renew AWS_SESSION_TOKEN`,
  // The SDK found no credentials at all (its error, before any request).
  CredentialsProviderError: (folder) =>
    `no AWS credentials were found for ${folder}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, ` +
    'or AWS_PROFILE with a profile in ~/.aws/config',
};

/** The stop a failed save means, when its cause is the store and not the item; else null. */
export function storeRefusal(code: string | undefined, folder: string): DiskRefuses | null {
  if (code === undefined || !Object.hasOwn(STORE_REFUSALS, code)) return null;
  return { kind: 'disk_refuses', code, folder, message: STORE_REFUSALS[code]!(folder) };
}

// Stop-loss -----------------------------------------------------------------------------------

/** Different items failing in a row with the same code before the run stops submitting. */
export const STOP_LOSS_STREAK = 3;

/**
 * Codes that judge one item's own content, so that a run of them says nothing about the rest:
 * they never count towards the stop-loss.
 */
const PER_ITEM_CODES = new Set(['content_rejected']);

/** Items that failed one after another with the same signature; any other final outcome resets it. */
export interface FailureStreak {
  signature: string | null;
  items: readonly string[];
}

export const NO_STREAK: FailureStreak = { signature: null, items: [] };

/** Folds one item's final outcome (`failure` null: done) into the streak. */
export function extendStreak(streak: FailureStreak, itemId: string, failure: string | null): FailureStreak {
  if (failure === null || PER_ITEM_CODES.has(failure.split(' ')[0]!)) return NO_STREAK;
  if (failure !== streak.signature) return { signature: failure, items: [itemId] };
  if (streak.items.includes(itemId)) return streak;
  return { signature: failure, items: [...streak.items, itemId] };
}

/** The stop-loss: enough different items in a row failed alike to stop before submitting the rest. */
export type StopLoss = Extract<StopReason, { kind: 'stop_loss' }>;

export function stopLoss(streak: FailureStreak, limit: number = STOP_LOSS_STREAK): StopLoss | null {
  if (streak.signature === null || streak.items.length < limit) return null;
  return { kind: 'stop_loss', signature: streak.signature, items: streak.items };
}

// Outages -------------------------------------------------------------------------------------

/** While the service does not answer, one line says so at most this often. */
export const OUTAGE_REPORT_EVERY_MS = 60_000;

/** Whether a failed request is part of an outage (no answer, or the service failing as a whole). */
export function isOutage(error: unknown): boolean {
  if (error instanceof ApiConnectionError) return error.kind === 'network';
  return error instanceof ApiError && (error.status >= 500 || error.status === 408);
}

/** Whether the outage line is due: at its start, then once per OUTAGE_REPORT_EVERY_MS. */
export function outageReportDue(lastReportAt: number | null, now: number): boolean {
  return lastReportAt === null || now - lastReportAt >= OUTAGE_REPORT_EVERY_MS;
}

/** `2m10s`, `45s`, `1h02m`: how long an outage has lasted, for people. */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, '0')}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, '0')}m`;
}
