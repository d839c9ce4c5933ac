import { sql } from 'kysely';
import { type NewAttempt, preparedOf, prepareStatements } from './attempt-prepare.js';
import { ATTEMPT_COLUMNS } from './attempt-reads.js';
import {
  admissionBase,
  analyseStatement,
  claimFree,
  inUseAfter,
  latestSeq,
  leaseAheadQuery,
  lockItems,
  neverAnalysedQuery,
  verdictOf,
} from './claim-queries.js';
import { currentQuery, numbers } from './definitions.js';
import { leaseUntil, unleased } from './leases.js';
import type { Admission, Admitted, BatchJob, JobView, RunnerClaims, StoredDefinition } from './ledger.js';
import type { LedgerContext } from './ledger-context.js';
import * as listerLease from './lister-lease.js';
import type { AttemptRecord } from './records.js';

/** The verdict the step's admission of an attempt kept (claims.prepare). */
/**
 * The leases of one runner on a shared (PostgreSQL) ledger (ledger.ts, RunnerClaims), each step
 * one round trip. An item is worked by the runner that holds its lease.
 */
export class LeaseClaims implements RunnerClaims {
  readonly runnerId: string;
  readonly leaseMs: number;
  readonly #c: LedgerContext;
  /** The items this runner believes it holds: what `renew` compares against, and `release` lets go. */
  readonly #held = new Set<string>();
  #runId: number | null = null;
  /** This runner holds the batch's lister lease (lister-lease.ts): it lets it go when it lets go of everything. */
  #isLister = false;
  /** Whether this runner looked, after its first admitted attempts, if the tables need statistics. */
  #statsLooked = false;

  constructor(c: LedgerContext, runnerId: string, leaseMs: number) {
    this.#c = c;
    this.runnerId = runnerId;
    this.leaseMs = leaseMs;
  }

  /** The run whose heartbeat each renewal beats. */
  runStarted(runId: number): void {
    this.#runId = runId;
  }

  /** An item this runner settled: its lease went with the step that settled it (leases.ts, leaseLetGo). */
  settled(itemId: string): void {
    this.#held.delete(itemId);
  }

  /**
   * Write-ahead, and the one budget and slot count of every runner, in one round trip: under the
   * batch's lock, each attempt in order is admitted or not as the database stands after the ones
   * before it (claim-queries.ts, verdictOf), and the admitted ones are written with their
   * item's lease (attempt-writes.ts, prepareStatements), all committed before any POST.
   */
  async prepare(attempts: readonly NewAttempt[], admission: Admission): Promise<Admitted> {
    const result = await this.#prepare(attempts, admission);
    if (!this.#statsLooked && result.admitted.length > 0) {
      this.#statsLooked = true;
      await this.#analyseFresh();
    }
    return result;
  }

  /**
   * On a fresh database, once the batch has attempts to count: statistics, so that the server
   * stops running plans made on an empty table (claim-queries.ts, analyseStatement). Once a run.
   */
  #analyseFresh(): Promise<void> {
    const c = this.#c;
    return c.db.step(async () => {
      const [row] = await c.db.read(neverAnalysedQuery(c));
      if ((row as { never?: boolean } | undefined)?.never === true) await c.db.batch([analyseStatement(c)]);
    });
  }

  #prepare(attempts: readonly NewAttempt[], admission: Admission): Promise<Admitted> {
    const c = this.#c;
    return c.db.step(async () => {
      if (attempts.length === 0)
        return { admitted: [], elsewhere: [], noRoom: [], redefined: await this.#redefined(admission) };
      const keys = attempts.map((attempt) => attempt.idempotencyKey);
      const each = attempts.map((attempt) => [
        verdictOf(c, this.runnerId, attempt, admission),
        ...prepareStatements(c, attempt, { runnerId: this.runnerId, leaseMs: this.leaseMs }),
      ]);
      const head = [c.db.sql.lockBatch(c.q, c.batchId)!, admissionBase(c, admission), lockItems(c, attempts)];
      // Last, the attempts with these keys whose items this runner holds: a step run again after a
      // lost connection whose COMMIT went through finds its own attempts there (its inserts wrote
      // nothing the second time). Each found attempt's item is looked up by its key: as a join,
      // the planner read every item of the batch to find the runner's (docs/performance.md).
      const already = c.q
        .selectFrom('attempts')
        .select(ATTEMPT_COLUMNS)
        .where('batch_id', '=', c.batchId)
        .where(c.db.sql.inList('idempotency_key', keys))
        .where((eb) =>
          eb(
            eb
              .selectFrom('items')
              .select('items.claimed_by')
              .whereRef('items.batch_id', '=', 'attempts.batch_id')
              .whereRef('items.item_id', '=', 'attempts.item_id'),
            '=',
            this.runnerId,
          ),
        )
        .compile();
      // And the items this runner would offer next: leased, or found another runner's.
      const ahead = admission.ahead?.length
        ? [leaseAheadQuery(c, this.runnerId, this.leaseMs, admission.ahead)]
        : [];
      const results = await c.db.batch(
        [...head, ...each.flat(), already, inUseAfter(c), ...ahead],
        'durable',
      );
      return this.#admitted(attempts, results.slice(head.length));
    });
  }

  /**
   * Each attempt's four results (its verdict, its item's claim, its insert's row if it was
   * written, its event), then the attempts found with their keys, then the batch's slots in use,
   * then (when asked) the items ahead, leased or another runner's.
   */
  async #admitted(
    attempts: readonly NewAttempt[],
    results: ReadonlyArray<{ rows: unknown[] }>,
  ): Promise<Admitted> {
    const verdicts = attempts.map(
      (_, n) => results[n * 4]!.rows[0] as { verdict: string; revision: number | null },
    );
    const found = new Map(
      results[attempts.length * 4]!.rows.map((row) => [(row as AttemptRecord).idempotencyKey, row]),
    );
    const written = attempts.map(
      (attempt, n) => results[n * 4 + 2]!.rows[0] ?? found.get(attempt.idempotencyKey),
    );
    const batchInUse = Number((results[attempts.length * 4 + 1]!.rows[0] as { inUse: unknown }).inUse);
    const ahead = (results[attempts.length * 4 + 2]?.rows ?? []) as Array<{ itemId: string; mine: boolean }>;
    for (const row of ahead) if (row.mine) this.#held.add(row.itemId);
    const takenAhead = ahead.filter((row) => !row.mine).map((row) => row.itemId);
    const redefined = verdicts.find((each) => each.verdict === 'redefined');
    if (redefined && written.every((row) => row === undefined))
      return { admitted: [], elsewhere: [], noRoom: [], redefined: Number(redefined.revision), batchInUse };
    const chosen = attempts.filter((_, n) => written[n] !== undefined);
    const admitted = await preparedOf(
      this.#c,
      chosen,
      written.filter((row) => row !== undefined),
    );
    for (const attempt of chosen) this.#held.add(attempt.itemId);
    // What was not written waits for room, unless its item is another runner's.
    const elsewhere: string[] = [];
    const noRoom: string[] = [];
    for (const [n, attempt] of attempts.entries())
      if (written[n] === undefined)
        (verdicts[n]!.verdict === 'elsewhere' ? elsewhere : noRoom).push(attempt.itemId);
    return { admitted, elsewhere, noRoom, redefined: null, batchInUse, takenAhead };
  }

  /** The batch's current revision where it is not the runner's; else null. */
  async #redefined(admission: Admission): Promise<number | null> {
    const c = this.#c;
    const [row] = await c.db.read(currentQuery(c));
    const current = row ? numbers(row as StoredDefinition).revision : null;
    const revision = admission.revision ?? null;
    return revision !== null && current !== null && current !== revision ? current : null;
  }

  slotsInUse(): Promise<number> {
    const c = this.#c;
    return c.db.step(async () => {
      const [row] = await c.db.read(inUseAfter(c));
      return Number((row as { inUse: unknown }).inUse);
    });
  }

  claimUnsent(itemId: string, knownSeq: number): Promise<boolean> {
    const c = this.#c;
    return c.db.step(async () => {
      const [result] = await c.db.batch([
        c.q
          .updateTable('items')
          .set({ claimed_by: this.runnerId, lease_until: leaseUntil(this.leaseMs) })
          .where('batch_id', '=', c.batchId)
          .where('item_id', '=', itemId)
          .where(unleased(this.runnerId))
          .where(latestSeq(c, itemId), '=', knownSeq)
          .compile(),
      ]);
      if (result!.changes === 1) this.#held.add(itemId);
      return result!.changes === 1;
    });
  }

  /**
   * Claims items to resume, verify or fetch. An item another runner holds stays its own, settled
   * or not: a runner lets an item go as it settles it, so a live lease on a settled item is rare
   * and short, and taking it would make its runner think its lease lapsed.
   */
  claim(itemIds: readonly string[]): Promise<Set<string>> {
    const c = this.#c;
    return c.db.step(async () => {
      if (itemIds.length === 0) return new Set<string>();
      const [result] = await c.db.batch([claimFree(c, this.runnerId, this.leaseMs, itemIds)]);
      const claimed = new Set(result!.rows.map((row: { itemId: string }) => row.itemId));
      for (const id of claimed) this.#held.add(id);
      return claimed;
    });
  }

  /** Extends this runner's leases and beats its run's heartbeat, in one statement. */
  renew(): Promise<string[]> {
    const c = this.#c;
    return c.db.step(async () => {
      const beat =
        this.#runId === null
          ? sql``
          : sql`WITH beat AS (UPDATE runs SET heartbeat_at = now() WHERE id = ${this.#runId}) `;
      const [result] = await c.db.batch([
        sql<{ itemId: string }>`${beat}UPDATE items SET lease_until = ${leaseUntil(this.leaseMs)}
          WHERE batch_id = ${c.batchId} AND claimed_by = ${this.runnerId} RETURNING item_id AS "itemId"`.compile(
          c.q,
        ),
      ]);
      const still = new Set(result!.rows.map((row: { itemId: string }) => row.itemId));
      const lost = [...this.#held].filter((id) => !still.has(id));
      for (const id of lost) this.#held.delete(id);
      return lost;
    });
  }

  heldElsewhere(): Promise<Set<string>> {
    const c = this.#c;
    return c.db.step(async () => {
      const rows = await c.db.read(
        c.q
          .selectFrom('items')
          .select('item_id as itemId')
          .where('batch_id', '=', c.batchId)
          .where('claimed_by', 'is not', null)
          .where('claimed_by', '<>', this.runnerId)
          .where(sql<boolean>`lease_until >= now()`)
          .where('state', 'in', ['pending', 'in_flight'])
          .compile(),
      );
      return new Set(rows.map((row) => row.itemId));
    });
  }

  /** This runner's leases of these items (all it holds, and the lister lease, when none are named), in one round trip. */
  release(itemIds?: readonly string[]): Promise<void> {
    const c = this.#c;
    return c.db.step(async () => {
      const ids = (itemIds ?? [...this.#held]).filter((id) => this.#held.has(id));
      const lister = itemIds === undefined && this.#isLister;
      const statements = [
        ...(lister ? [listerLease.releaseListerLeaseStatement(c, this.runnerId)] : []),
        ...(ids.length === 0
          ? []
          : [
              c.q
                .updateTable('items')
                .set({ claimed_by: null, lease_until: null })
                .where('batch_id', '=', c.batchId)
                .where('claimed_by', '=', this.runnerId)
                .where('item_id', 'in', ids)
                .compile(),
            ]),
      ];
      if (statements.length > 0) await c.db.batch(statements);
      if (lister) this.#isLister = false;
      for (const id of ids) this.#held.delete(id);
    });
  }

  takeListerLease(turnMs: number): Promise<BatchJob[] | null> {
    return this.#c.db.step(async () => {
      const jobs = await listerLease.takeListerLease(this.#c, this.runnerId, turnMs);
      if (jobs !== null) this.#isLister = true;
      return jobs;
    });
  }

  releaseListerLease(): Promise<void> {
    return this.#c.db.step(async () => {
      if (!this.#isLister) return;
      await this.#c.db.batch([listerLease.releaseListerLeaseStatement(this.#c, this.runnerId)]);
      this.#isLister = false;
    });
  }

  publishViews(views: readonly JobView[], unfinished: readonly string[]): Promise<void> {
    return this.#c.db.step(() => listerLease.publishViews(this.#c, views, unfinished));
  }

  jobViews(jobIds: readonly string[]): Promise<JobView[]> {
    return this.#c.db.step(() => listerLease.jobViews(this.#c, jobIds));
  }
}
