/**
 * What a ledger several runners share adds to the one door (ledger.ts, `SharedLedger`): the
 * admission of new attempts against every runner's slots and budget, the runners' leases, the
 * batch's stored definitions and its one lister's views (docs/shared-ledger.md).
 */
import type { NewAttempt } from './attempt-prepare.js';
import type { AttemptRecord } from './records.js';

/**
 * What a shared ledger checks, in the same transaction as it commits new attempts: the slots
 * and the budget of every runner of the batch together. A ledger held by one run admits all.
 */
export interface Admission {
  /** min(manifest concurrency, workspace limit): unanswered and unfinished jobs of the batch, all runners. */
  slotLimit: number;
  /** The manifest's budget_usd in micro-dollars, or null for none; a stored definition's budget binds instead. */
  budgetMicros: number | null;
  /**
   * The revision of the batch's definition this runner started with (BatchDefinitions): once the
   * batch has another, nothing is admitted (Admitted.redefined). Absent or null: not compared.
   */
  revision?: number | null;
  /**
   * The items this runner would offer next, each with the newest seq it knows of it (0: none):
   * the admission leases those no other runner works, so that other runners' offers pass them
   * by, and says which another runner works (Admitted.takenAhead): the next offer skips them
   * instead of having them refused one by one.
   */
  ahead?: ReadonlyArray<{ itemId: string; seq: number }>;
}

/** What a shared ledger made of a runner's new attempts (RunnerClaims.prepare). */
export interface Admitted {
  /** Committed, keys and bodies, before their POSTs. */
  admitted: AttemptRecord[];
  /** Items another runner works (a live lease, or a newer attempt than this runner knew). */
  elsewhere: string[];
  /** Items for which no slot or no budget was left at this moment: to be tried again. */
  noRoom: string[];
  /** The batch's current revision when it is not the one this runner started with (nothing admitted); else null. */
  redefined: number | null;
  /** The batch's slots in use by all its runners once these were admitted (unanswered POSTs and unfinished jobs). */
  batchInUse?: number;
  /** Of Admission.ahead, the items another runner works (a live lease, or a newer attempt). */
  takenAhead?: string[];
}

/** One revision of a shared batch's definition (docs/shared-ledger.md), as its ledger stores it. */
export interface StoredDefinition {
  revision: number;
  /** The SHA-256 of `definition`, its canonical JSON: two definitions are the same when it is. */
  hash: string;
  definition: string;
  /** The definition's budget_usd in micro-dollars (null: none): the budget admission holds every runner to. */
  budgetMicros: number | null;
  definedAt: string;
  /** The runner that wrote it. */
  definedBy: string | null;
}

/**
 * A shared batch's definition, one revision after another: what every runner of it runs. A ledger
 * held by one run has none (its manifest file is the definition).
 */
export interface BatchDefinitions {
  /** The batch's current revision, or null while none was written. */
  current(): Promise<StoredDefinition | null>;
  /**
   * In one transaction under the batch's lock: writes `next` as the batch's next revision if the
   * current one is still `over` (0: none yet) and has another hash; returns the current revision
   * after it, written or not (the caller compares its hash: another runner may have been first).
   */
  define(next: Omit<StoredDefinition, 'revision' | 'definedAt'>, over: number): Promise<StoredDefinition>;
  /**
   * The names of the batches this database holds a definition of, sorted, at most `limit`: what a
   * runner naming a batch it does not define is told (a typo, or another database).
   */
  definedNames(limit: number): Promise<string[]>;
}

/** An accepted job of the batch not known to be final, as the lister looks for it (RunnerClaims.takeListerLease). */
export interface BatchJob {
  jobId: string;
  /** When the service created it (its answer's created_at), or null where the ledger never kept it. */
  createdAt: string | null;
  /** When its attempt was prepared, by its runner's clock: the fallback for a missing createdAt. */
  preparedAt: string;
}

/** What the batch's lister saw of a job: its status, and the service's JSON of it (fresh output URLs). */
export interface JobView {
  jobId: string;
  status: string;
  job: string;
}

/**
 * The work of one runner among several on a shared ledger. An item is worked by the runner that
 * holds its lease; a lease not renewed within `leaseMs` (its runner died or lost the database)
 * lets another runner adopt the item, its unanswered POST and its accepted job.
 */
export interface RunnerClaims {
  readonly runnerId: string;
  readonly leaseMs: number;
  /**
   * The batch's slots in use by all its runners (unanswered POSTs and unfinished jobs), read
   * without the batch's lock: whether an admission would find room, before one is sent.
   */
  slotsInUse(): Promise<number>;
  /** New attempts admitted against every runner's slots and budget, then committed (see Admitted). */
  prepare(attempts: readonly NewAttempt[], admission: Admission): Promise<Admitted>;
  /**
   * Claims an item this runner is about to decide without sending (over budget, say): only if no
   * live lease of another runner holds it and its newest attempt is the one this runner knows
   * (`knownSeq`, 0 for none). False: another runner works it.
   */
  claimUnsent(itemId: string, knownSeq: number): Promise<boolean>;
  /** Claims these items where no live lease of another runner holds them; returns those this runner now holds. */
  claim(itemIds: readonly string[]): Promise<Set<string>>;
  /** Extends this runner's leases (and its run's heartbeat); returns the items whose lease it lost meanwhile. */
  renew(): Promise<string[]>;
  /** Items of the batch held by a live lease of another runner. */
  heldElsewhere(): Promise<Set<string>>;
  /**
   * Gives up these items' leases (all of this runner's when omitted, the batch's look with them),
   * so others need not wait them out.
   */
  release(itemIds?: readonly string[]): Promise<void>;
  /**
   * One lister per batch (docs/shared-ledger.md): takes the batch's look at the service's job list
   * if this runner took the last one, or if nobody took one within `turnMs`. Returns the batch's
   * accepted jobs not known to be final (every runner's), for it to list; null when another runner
   * holds the look: this runner reads what it saw (jobViews) instead.
   */
  takeListerLease(turnMs: number): Promise<BatchJob[] | null>;
  /** Lets the batch's look go, if this runner holds it: the next runner to look takes it at once. */
  releaseListerLease(): Promise<void>;
  /**
   * What the lister saw of other runners' jobs, for them to read. A final view is never replaced;
   * views of jobs not among `unfinished` (their runner recorded them final) are dropped.
   */
  publishViews(views: readonly JobView[], unfinished: readonly string[]): Promise<void>;
  /** The lister's views of these jobs, those it has published. */
  jobViews(jobIds: readonly string[]): Promise<JobView[]>;
}
