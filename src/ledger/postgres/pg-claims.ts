import type { RunnerClaims } from '../ledger.js';
import type { PgLedgerConnection } from './pg-ledger-connection.js';

const LEASE_UNTIL = 'now() + make_interval(secs => $3::double precision / 1000)';

/**
 * The leases of one runner on a shared ledger (ledger.ts, RunnerClaims). The database's clock
 * judges every lease, so runners on machines whose clocks disagree still agree on who holds what.
 */
export class PgClaims implements RunnerClaims {
  readonly runnerId: string;
  readonly leaseMs: number;
  readonly #c: PgLedgerConnection;
  /** The items this runner believes it holds: what `renew` compares against. */
  readonly #held = new Set<string>();
  #runId: number | null = null;

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
        WHERE batch_id = $1 AND claimed_by IS NOT NULL AND claimed_by <> $2 AND lease_until >= now()`,
      [this.#c.batchId, this.runnerId],
    );
    return new Set(rows.map((row) => row.itemId));
  }

  release(itemIds?: readonly string[]): void {
    const ids = itemIds ?? [...this.#held];
    if (ids.length === 0) return;
    this.#c.db.query(
      `UPDATE items SET claimed_by = NULL, lease_until = NULL
        WHERE batch_id = $1 AND claimed_by = $2 AND item_id = ANY($3::text[])`,
      [this.#c.batchId, this.runnerId, ids],
    );
    for (const id of ids) this.#held.delete(id);
  }
}

/** Runs of the batch whose heartbeat is younger than `leaseMs`: live runners, on any machine. */
export function liveRuns(c: PgLedgerConnection, leaseMs: number): number {
  const [row] = c.db.query<{ live: number }>(
    `SELECT COUNT(*)::bigint AS live FROM runs WHERE batch_id = $1 AND ended_at IS NULL
       AND heartbeat_at > now() - make_interval(secs => $2::double precision / 1000)`,
    [c.batchId, leaseMs],
  );
  return Number(row?.live ?? 0);
}
