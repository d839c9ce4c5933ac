import type { StoredDefinition } from '../ledger.js';
import type { SyncBatchDefinitions } from '../sync-ledger.js';
import { BATCH_LOCK } from './pg-attempts.js';
import type { PgLedgerConnection } from './pg-ledger-connection.js';

const COLUMNS = `revision, hash, definition, budget_micros AS "budgetMicros", defined_at AS "definedAt",
  defined_by AS "definedBy"`;

/**
 * A shared batch's definition, one row per revision (docs/shared-ledger.md, "One definition per
 * batch"). A new revision is written under the batch's advisory lock, the one admission takes
 * (pg-claims.ts), so no attempt is admitted against a revision that is no longer current.
 */
export class PgDefinitions implements SyncBatchDefinitions {
  readonly #c: PgLedgerConnection;

  constructor(c: PgLedgerConnection) {
    this.#c = c;
  }

  current(): StoredDefinition | null {
    // A read-only look at a database without the batch, or older than definitions, finds none.
    if (this.#c.batchId === -1 || !definitionsTableExists(this.#c)) return null;
    return currentDefinition(this.#c);
  }

  define(next: Omit<StoredDefinition, 'revision' | 'definedAt'>, over: number): StoredDefinition {
    const c = this.#c;
    return c.db.transaction(() => {
      c.db.query('SELECT pg_advisory_xact_lock($1, $2)', [BATCH_LOCK, c.batchId]);
      const current = currentDefinition(c);
      if (current !== null && (current.revision !== over || current.hash === next.hash)) return current;
      const [row] = c.db.query<StoredDefinition>(
        `INSERT INTO batch_definitions (batch_id, revision, hash, definition, budget_micros, defined_at, defined_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
        [
          c.batchId,
          (current?.revision ?? 0) + 1,
          next.hash,
          next.definition,
          next.budgetMicros,
          c.at(),
          next.definedBy,
        ],
      );
      return numbers(row!);
    });
  }
}

/** The batch's current revision: the highest. */
export function currentDefinition(c: PgLedgerConnection): StoredDefinition | null {
  const [row] = c.db.query<StoredDefinition>(
    `SELECT ${COLUMNS} FROM batch_definitions WHERE batch_id = $1 ORDER BY revision DESC LIMIT 1`,
    [c.batchId],
  );
  return row ? numbers(row) : null;
}

/** The current revision and its budget alone: what admission compares and holds to. */
export function currentRevision(
  c: PgLedgerConnection,
): { revision: number; budgetMicros: number | null } | null {
  const [row] = c.db.query<{ revision: number; budgetMicros: string | number | null }>(
    `SELECT revision, budget_micros AS "budgetMicros" FROM batch_definitions
      WHERE batch_id = $1 ORDER BY revision DESC LIMIT 1`,
    [c.batchId],
  );
  if (!row) return null;
  return {
    revision: Number(row.revision),
    budgetMicros: row.budgetMicros === null ? null : Number(row.budgetMicros),
  };
}

function numbers(row: StoredDefinition): StoredDefinition {
  return {
    ...row,
    revision: Number(row.revision),
    budgetMicros: row.budgetMicros === null ? null : Number(row.budgetMicros),
  };
}

function definitionsTableExists(c: PgLedgerConnection): boolean {
  const [row] = c.db.query<{ found: string | null }>(
    "SELECT to_regclass('batch_definitions')::text AS found",
  );
  return row?.found != null;
}
