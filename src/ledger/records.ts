import type { Micros } from '../money.js';

/** Plain rows as the runner's pure core sees them; no SQLite types leak past the ledger module. */

/**
 * `checks_failed`: every take the item was allowed was saved and paid for, and none passed the
 * checks of its output (docs/checks.md); the last one stays in place. Final, as `failed` is.
 */
export type ItemState =
  | 'pending'
  | 'in_flight'
  | 'done'
  | 'failed'
  | 'budget_exceeded'
  | 'expired'
  | 'checks_failed';

/** A count per item state, every one at zero: the start of every tally by state. */
export function zeroCounts(): Record<ItemState, number> {
  return { pending: 0, in_flight: 0, done: 0, failed: 0, budget_exceeded: 0, expired: 0, checks_failed: 0 };
}

/** A take's check as the ledger records it (runner/output-check.ts decides it). */
export interface TakeCheckRecord {
  attemptId: number;
  outcome: 'passed' | 'failed' | 'unchecked';
  reason: string | null;
  /** What the container said, as JSON text (`seconds`, `width`, `height`, `frames`), or null. */
  video: string | null;
  checkedAt: string;
  /** The attempt's job, as read back (null for a reused take); a dump's row carries it, loading ignores it. */
  jobId?: string | null;
}

export interface ItemRecord {
  itemId: string;
  requestHash: string;
  state: ItemState;
  retriesUsed: number;
  errorCode: string | null;
  errorMessage: string | null;
  updatedAt: string;
}

/** An item the ledger has not seen yet: pending, with no retries used. */
export function newItemRecord(itemId: string, requestHash: string): ItemRecord {
  return {
    itemId,
    requestHash,
    state: 'pending',
    retriesUsed: 0,
    errorCode: null,
    errorMessage: null,
    updatedAt: '',
  };
}

/**
 * The job status an attempt gets when the service answered 404 for its job and `mediabatch forget`
 * gave it up: charged, never to be seen again, its item pending (docs/troubleshooting.md).
 */
export const LOST_JOB_STATUS = 'lost';

/** prepared: key and body committed, no answer yet; accepted: a job exists; rejected: HTTP error, no job. */
export type AttemptState = 'prepared' | 'accepted' | 'rejected';

export interface AttemptRecord {
  id: number;
  itemId: string;
  seq: number;
  idempotencyKey: string;
  requestBody: string;
  requestHash: string;
  reservedMicros: Micros;
  state: AttemptState;
  httpStatus: number | null;
  httpCode: string | null;
  jobId: string | null;
  jobStatus: string | null;
  amountMicros: Micros;
  refundedMicros: Micros;
  errorCode: string | null;
  errorMessage: string | null;
  expiresAt: string | null;
  filesSaved: boolean;
  createdAt: string;
  answeredAt: string | null;
  completedAt: string | null;
  /** Which take of the item this attempt makes: 1, then one more per redo. Absent means 1. */
  take?: number;
  /** The template variables its prompt was rendered from, as JSON text; null or absent: none. */
  vars?: string | null;
  /**
   * A copy's result (docs/results.md, "The record of a result"): the job whose bytes it holds,
   * made for another take. Null or absent for an attempt that sent its own request.
   */
  madeByJob?: string | null;
  /** A copy's source: the idempotency key of the take it copied; null or absent otherwise. */
  copiedFrom?: string | null;
}

/** The job whose bytes an attempt's files hold: its own, or, for a copy, the one its result names. */
export function jobOfBytes(attempt: Pick<AttemptRecord, 'jobId' | 'madeByJob'>): string | null {
  return attempt.jobId ?? attempt.madeByJob ?? null;
}

export interface FileRecord {
  attemptId: number;
  idx: number;
  path: string;
  bytes: number;
  sha256: string;
  savedAt: string;
  /** Its modification time once saved, whole ms; null for a bucket's object or a file saved before it was recorded. */
  mtimeMs?: number | null;
}

/** What the service told us about a job, reduced to what the ledger keeps. */
export interface JobSnapshot {
  jobId: string;
  status: string;
  amountMicros: Micros;
  refundedMicros: Micros;
  errorCode: string | null;
  errorMessage: string | null;
  expiresAt: string | null;
  completedAt: string | null;
  /**
   * When the service created the job, by its clock. Kept by the shared ledger alone: its lister
   * lists the batch's jobs from the oldest unfinished one on (docs/shared-ledger.md).
   */
  createdAt?: string | null;
}

/** A job found on the service by `mediabatch import`, to be recorded as an accepted attempt. */
export interface ImportedJob {
  itemId: string;
  seq: number;
  requestBody: string;
  requestHash: string;
  job: JobSnapshot;
  /** The take its output was saved as, from the sidecar found beside it; default 1. */
  take?: number;
  /** When the lost ledger committed the request, from that sidecar; default now. */
  createdAt?: string;
  /** The template variables the prompt was rendered from (JSON text), from that sidecar. */
  vars?: string | null;
}

/** What an event says of a job the service answered with. */
export function jobDetail(job: JobSnapshot): { job: string; status: string; amount: number } {
  return { job: job.jobId, status: job.status, amount: job.amountMicros };
}

export interface MoneyTotals {
  chargedMicros: Micros;
  refundedMicros: Micros;
  /** Reservations of attempts still waiting for an answer. */
  reservedMicros: Micros;
}

/** The service a ledger belongs to: its normalised base URL, or `sandbox:embedded`. */
export interface ServiceBinding {
  identity: string;
  boundAt: string;
}

/** An attempt as it stands once prepared: key, exact body and reservation, no answer yet. */
export function preparedAttempt(
  fields: Pick<
    AttemptRecord,
    | 'id'
    | 'itemId'
    | 'seq'
    | 'idempotencyKey'
    | 'requestBody'
    | 'requestHash'
    | 'reservedMicros'
    | 'createdAt'
    | 'take'
    | 'vars'
  >,
): AttemptRecord {
  return {
    ...fields,
    state: 'prepared',
    httpStatus: null,
    httpCode: null,
    jobId: null,
    jobStatus: null,
    amountMicros: 0,
    refundedMicros: 0,
    errorCode: null,
    errorMessage: null,
    expiresAt: null,
    filesSaved: false,
    answeredAt: null,
    completedAt: null,
  };
}

/** One entry of a batch's append-only event log, as stored (`detail` is JSON text or null). */
export interface EventRecord {
  at: string;
  itemId: string | null;
  attemptId: number | null;
  kind: string;
  detail: string | null;
}

/** One run of the batch; `runner` is a shared ledger's runner name (null in a SQLite ledger). */
export interface RunRecord {
  pid: number;
  runner: string | null;
  startedAt: string;
  endedAt: string | null;
  exitCode: number | null;
}

/**
 * The take a person chose to keep of one manifest item (docs/gallery.md, "Keepers"): `itemId` is
 * the manifest item's id (the group of its variants: `variant.of`, or the item's own id when it has
 * none), `keptItemId` the ledger item (the variant) whose take is kept, `take` that attempt's take.
 */
export interface KeeperRecord {
  itemId: string;
  keptItemId: string;
  take: number;
  chosenAt: string;
}

/** One attempt whose files were saved, with them (paths absolute): a take `keep` can choose. */
export interface SavedTake {
  itemId: string;
  attemptId: number;
  take: number;
  jobId: string | null;
  amountMicros: Micros;
  refundedMicros: Micros;
  completedAt: string | null;
  files: Array<{ idx: number; path: string; sha256: string; bytes: number }>;
}

/** One file row of a saved take, as both ledgers read them (savedTakesOf groups them). */
export type SavedTakeRow = Omit<SavedTake, 'files'> & {
  idx: number;
  path: string;
  sha256: string;
  bytes: number;
};

/** File rows in (attempt, idx) order, grouped into one SavedTake per attempt. */
export function savedTakesOf<T extends SavedTakeRow>(
  rows: readonly T[],
): Array<Omit<T, 'idx' | 'path' | 'sha256' | 'bytes'> & Pick<SavedTake, 'files'>> {
  type Take = Omit<T, 'idx' | 'path' | 'sha256' | 'bytes'> & Pick<SavedTake, 'files'>;
  const takes: Take[] = [];
  for (const { idx, path, sha256, bytes, ...attempt } of rows) {
    const last = takes[takes.length - 1];
    const take =
      last?.attemptId === attempt.attemptId
        ? last
        : ({ ...attempt, take: attempt.take ?? 1, files: [] } as Take);
    if (take !== last) takes.push(take);
    take.files.push({ idx, path, sha256, bytes });
  }
  return takes;
}

/** A keeper set (`kept`: which ledger item and take) or cleared (`kept: null`) for one manifest item. */
export interface KeeperChange {
  itemId: string;
  kept: { itemId: string; take: number } | null;
}

/**
 * Every row of one batch, whole, as `Ledger.dumpBatch` reads it and `Ledger.loadBatch` writes it
 * (`mediabatch copy-ledger`, docs/shared-ledger.md). Attempt ids are the source's own: files and
 * events refer to attempts by them, and a load gives the attempts new ids and follows them. File
 * paths are in their stored form (relative to the manifest's folder, absolute outside it, or a
 * bucket's URI), so a copy reads the same files from wherever the project is. Leases and
 * heartbeats are a live runner's state, not the batch's record: they are not part of it.
 */
export interface BatchDump {
  batch: { name: string; manifestPath: string; createdAt: string };
  service: ServiceBinding | null;
  items: ItemRecord[];
  /** In id order, every column (take and vars included). */
  attempts: Array<AttemptRecord & { take: number; vars: string | null }>;
  /** In (attempt, idx) order. */
  files: Array<FileRecord & { mtimeMs: number | null }>;
  /** In the order they were appended. */
  events: EventRecord[];
  /** In the order they started. */
  runs: RunRecord[];
  /** In item id order. */
  keepers: KeeperRecord[];
  /** In attempt order; absent from a dump made before outputs were checked. */
  takeChecks?: TakeCheckRecord[];
}
