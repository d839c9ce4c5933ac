import type { NewAttempt } from '../attempt-writes.js';
import type { Admission, Admitted, BatchJob, JobView } from '../ledger.js';
import type { AttemptRecord } from '../records.js';
import type { SyncRunnerClaims } from '../sync-ledger.js';
import { BATCH_LOCK, insertAttempt, moneyTotals } from './pg-attempts.js';
import { currentRevision } from './pg-definitions.js';
import type { PgLedgerConnection } from './pg-ledger-connection.js';
import * as looks from './pg-looks.js';

const LEASE_UNTIL = 'now() + make_interval(secs => $3::double precision / 1000)';

/**
 * The leases of one runner on a shared ledger (ledger.ts, RunnerClaims). The database's clock
 * judges every lease, so runners on machines whose clocks disagree still agree on who holds what.
 */
export class PgClaims implements SyncRunnerClaims {
  readonly runnerId: string;
  readonly leaseMs: number;
  readonly #c: PgLedgerConnection;
  /** The items this runner believes it holds: what `renew` compares against. */
  readonly #held = new Set<string>();
  #runId: number | null = null;
  /** This runner took the batch's look (pg-looks.ts): it lets it go when it lets go of everything. */
  #looked = false;

  constructor(c: PgLedgerConnection, runnerId: string, leaseMs: number) {
    this.#c = c;
    this.runnerId = runnerId;
    this.leaseMs = leaseMs;
  }

  /** The run whose heartbeat each renewal beats. */
  runStarted(runId: number): void {
    this.#runId = runId;
  }

  /** Items claimed by a step of the ledger itself (prepareAttempts). */
  took(itemIds: Iterable<string>): void {
    for (const id of itemIds) this.#held.add(id);
  }

  /**
   * Write-ahead, and the one budget and slot count of every runner: under the batch's advisory
   * lock, each attempt in order is admitted only if its item is this runner's to work (free, its
   * own, or its lease lapsed; and no other runner sent a newer attempt of it meanwhile), a slot of
   * the batch is free and its reservation fits what is left of the budget after every charge and
   * reservation of every runner. The admitted ones are committed, keys and bodies, before any
   * POST. As the runner's own budget check does, an attempt whose reservation does not fit lets
   * a smaller one after it go; once the slots are full, none goes. Where the batch has a stored
   * definition, its current revision's budget binds, and a runner that started on an older
   * revision is admitted nothing (Admitted.redefined).
   */
  prepare(attempts: readonly NewAttempt[], admission: Admission): Admitted {
    const c = this.#c;
    const result = c.db.transaction(() => {
      c.db.query('SELECT pg_advisory_xact_lock($1, $2)', [BATCH_LOCK, c.batchId]);
      // The batch's definition binds: a runner on an older revision is admitted nothing, and the
      // current revision's budget is every runner's (docs/shared-ledger.md).
      const defined = currentRevision(c);
      const revision = admission.revision ?? null;
      if (revision !== null && defined !== null && defined.revision !== revision)
        return { admitted: [], elsewhere: [], noRoom: [], redefined: defined.revision };
      const budgetMicros = defined === null ? admission.budgetMicros : defined.budgetMicros;
      return { ...this.#admit(attempts, admission.slotLimit, budgetMicros), redefined: null };
    });
    this.took(result.admitted.map((attempt) => attempt.itemId));
    return result;
  }

  /** Inside prepare's transaction: each attempt in order, against the free slots and the budget left. */
  #admit(
    attempts: readonly NewAttempt[],
    slotLimit: number,
    budgetMicros: number | null,
  ): Omit<Admitted, 'redefined'> {
    const c = this.#c;
    let open = Number(c.db.query<{ open: number }>(OPEN_JOBS, [c.batchId])[0]!.open);
    const totals = moneyTotals(c);
    let committed = totals.chargedMicros - totals.refundedMicros + totals.reservedMicros;
    const admitted: AttemptRecord[] = [];
    const elsewhere: string[] = [];
    const noRoom: string[] = [];
    let slotsFull = false;
    for (const attempt of attempts) {
      const slot: boolean = open < slotLimit && !slotsFull;
      slotsFull = !slot;
      const fits = budgetMicros === null || committed + attempt.reservedMicros <= budgetMicros;
      if (!slot || !fits) noRoom.push(attempt.itemId);
      else if (!this.claimUnsent(attempt.itemId, attempt.seq - 1)) elsewhere.push(attempt.itemId);
      else {
        admitted.push(insertAttempt(c, attempt));
        open += 1;
        committed += attempt.reservedMicros;
      }
    }
    return { admitted, elsewhere, noRoom, batchInUse: open };
  }

  claimUnsent(itemId: string, knownSeq: number): boolean {
    const claimed =
      this.#c.db.execute(
        `UPDATE items SET claimed_by = $3, lease_until = ${LEASE_UNTIL.replace('$3', '$4')}
          WHERE batch_id = $1 AND item_id = $2
            AND (claimed_by IS NULL OR claimed_by = $3 OR lease_until < now())
            AND (SELECT COALESCE(MAX(seq), 0) FROM attempts a WHERE a.batch_id = $1 AND a.item_id = $2) = $5`,
        [this.#c.batchId, itemId, this.runnerId, this.leaseMs, knownSeq],
      ) === 1;
    if (claimed) this.took([itemId]);
    return claimed;
  }

  /**
   * Claims items to resume, verify or fetch. An item another runner holds stays its own, settled
   * or not: a runner lets an item go as it settles it (RunContext.setItem), so a live lease on a
   * settled item is rare and short, and taking it would make its runner think its lease lapsed.
   */
  claim(itemIds: readonly string[]): Set<string> {
    if (itemIds.length === 0) return new Set();
    const rows = this.#c.db.query<{ itemId: string }>(
      `UPDATE items SET claimed_by = $2, lease_until = ${LEASE_UNTIL}
        WHERE batch_id = $1 AND item_id = ANY($4::text[])
          AND (claimed_by IS NULL OR claimed_by = $2 OR lease_until < now())
        RETURNING item_id AS "itemId"`,
      [this.#c.batchId, this.runnerId, this.leaseMs, itemIds],
    );
    const claimed = new Set(rows.map((row) => row.itemId));
    this.took(claimed);
    return claimed;
  }

  renew(): string[] {
    const kept = this.#c.db.transaction(() => {
      if (this.#runId !== null)
        this.#c.db.query('UPDATE runs SET heartbeat_at = now() WHERE id = $1', [this.#runId]);
      return this.#c.db.query<{ itemId: string }>(
        `UPDATE items SET lease_until = ${LEASE_UNTIL} WHERE batch_id = $1 AND claimed_by = $2
          RETURNING item_id AS "itemId"`,
        [this.#c.batchId, this.runnerId, this.leaseMs],
      );
    });
    const still = new Set(kept.map((row) => row.itemId));
    const lost = [...this.#held].filter((id) => !still.has(id));
    for (const id of lost) this.#held.delete(id);
    return lost;
  }

  heldElsewhere(): Set<string> {
    const rows = this.#c.db.query<{ itemId: string }>(
      `SELECT item_id AS "itemId" FROM items
        WHERE batch_id = $1 AND claimed_by IS NOT NULL AND claimed_by <> $2 AND lease_until >= now()
          AND state IN ('pending', 'in_flight')`,
      [this.#c.batchId, this.runnerId],
    );
    return new Set(rows.map((row) => row.itemId));
  }

  release(itemIds?: readonly string[]): void {
    if (itemIds === undefined) this.releaseLook();
    const ids = itemIds ?? [...this.#held];
    if (ids.length === 0) return;
    this.#c.db.query(
      `UPDATE items SET claimed_by = NULL, lease_until = NULL
        WHERE batch_id = $1 AND claimed_by = $2 AND item_id = ANY($3::text[])`,
      [this.#c.batchId, this.runnerId, ids],
    );
    for (const id of ids) this.#held.delete(id);
  }

  takeLook(turnMs: number): BatchJob[] | null {
    const jobs = looks.takeLook(this.#c, this.runnerId, turnMs);
    if (jobs !== null) this.#looked = true;
    return jobs;
  }

  releaseLook(): void {
    if (!this.#looked) return;
    looks.releaseLook(this.#c, this.runnerId);
    this.#looked = false;
  }

  publishViews(views: readonly JobView[], unfinished: readonly string[]): void {
    looks.publishViews(this.#c, views, unfinished);
  }

  jobViews(jobIds: readonly string[]): JobView[] {
    return looks.jobViews(this.#c, jobIds);
  }
}

/** Unanswered POSTs and unfinished jobs of the batch, every runner's: what holds the service's slots. */
const OPEN_JOBS = `SELECT COUNT(*)::bigint AS open FROM attempts WHERE batch_id = $1
  AND (state = 'prepared' OR (state = 'accepted' AND job_status IN ('queued', 'running')))`;

/** Runs of the batch whose heartbeat is younger than `leaseMs`: live runners, on any machine. */
export function liveRuns(c: PgLedgerConnection, leaseMs: number): number {
  const [row] = c.db.query<{ live: number }>(
    `SELECT COUNT(*)::bigint AS live FROM runs WHERE batch_id = $1 AND ended_at IS NULL
       AND heartbeat_at > now() - make_interval(secs => $2::double precision / 1000)`,
    [c.batchId, leaseMs],
  );
  return Number(row?.live ?? 0);
}

/** The machines of the batch's live runners (a runner's id starts with its host name). */
export function liveHosts(c: PgLedgerConnection, leaseMs: number): string[] {
  const rows = c.db.query<{ host: string }>(
    `SELECT DISTINCT split_part(runner, ':', 1) AS host FROM runs WHERE batch_id = $1 AND ended_at IS NULL
       AND runner IS NOT NULL AND heartbeat_at > now() - make_interval(secs => $2::double precision / 1000)`,
    [c.batchId, leaseMs],
  );
  return rows.map((row) => row.host);
}
