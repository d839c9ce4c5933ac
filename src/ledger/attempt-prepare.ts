import { type Selectable, sql } from 'kysely';
import { ATTEMPT_COLUMNS, getAttempt, toAttempt } from './attempt-reads.js';
import type { Statement } from './dialect/database.js';
import { leaseUntil } from './leases.js';
import type { LedgerContext } from './ledger-context.js';
import type { AttemptRecord } from './records.js';
import { type AttemptKey, attemptEventOf, attemptKey, byAttempt } from './runs-and-events.js';
import { StatementShape } from './statement-shape.js';
import type { AttemptsTable } from './tables.js';

/**
 * An attempt written before its POST (write-ahead): its row, its item in flight, its event; on a
 * shared ledger only where admission admits it.
 */
export interface NewAttempt {
  itemId: string;
  seq: number;
  idempotencyKey: string;
  requestBody: string;
  requestHash: string;
  reservedMicros: number;
  /** Default 1; a redo prepares the next take. */
  take?: number;
  /** The item's template variables as JSON text, or null. */
  vars?: string | null;
}

/**
 * A shared ledger's admission (claims.ts): the attempt is written only where the step's verdict on
 * it (kept in a setting local to the transaction) admits it, and its item takes this runner's lease.
 */
export interface Admit {
  runnerId: string;
  leaseMs: number;
}

/** The verdict the admission step judged for the attempt it is writing (claims.ts). */
export const ADMITTED = sql<boolean>`current_setting('mediabatch.verdict') = 'admit'`;

/** An attempt's columns as written before its POST (the table's own types). */
type PreparedValues = Pick<
  Selectable<AttemptsTable>,
  | 'batch_id'
  | 'item_id'
  | 'seq'
  | 'idempotency_key'
  | 'request_body'
  | 'request_hash'
  | 'reserved_micros'
  | 'created_at'
  | 'take'
  | 'vars'
> & { state: 'prepared' };

/** The attempt's row; admitted, written only where the verdict admits it. */
const attemptRow = new StatementShape((c, v: PreparedValues, variant: 'admit' | 'own') => {
  const columns = Object.keys(v) as Array<keyof PreparedValues>;
  const insert =
    variant === 'admit'
      ? c.q
          .insertInto('attempts')
          .columns(columns)
          .expression(c.q.selectNoFrom(columns.map((column) => sql`${v[column]}`.as(column))).where(ADMITTED))
      : c.q.insertInto('attempts').values(v);
  const guarded = c.can.severalRunners
    ? insert.onConflict((conflict) => conflict.columns([...c.db.sql.keyColumns]).doNothing())
    : insert;
  return guarded.returning(ATTEMPT_COLUMNS);
});

/** The item in flight with the attempt's request, only where its attempt is (or is admitted). */
const itemInFlight = new StatementShape(
  (
    c,
    v: AttemptKey & {
      state: 'in_flight';
      request_hash: string;
      at: string;
      item_id: string;
      runner: string;
      lease_ms: number;
    },
    variant: 'admit' | 'own',
  ) => {
    const lease = variant === 'admit' ? { claimed_by: v.runner, lease_until: leaseUntil(v.lease_ms) } : {};
    const item = c.q
      .updateTable('items')
      .set({ state: v.state, request_hash: v.request_hash, updated_at: v.at, ...lease })
      .where('batch_id', '=', v.batch_id)
      .where('item_id', '=', v.item_id);
    if (variant === 'admit') return item.where(ADMITTED);
    return item.where((eb) => eb.exists(eb.selectFrom('attempts').select('id').where(byAttempt(v, 'key'))));
  },
);

/**
 * An attempt's row, its item in flight with the request its latest attempt sends (the same hash,
 * except for an item whose max_cost_usd alone changed, which takes the new one), and its event,
 * each written only if the attempt is. A key already in a shared ledger (a step run again after
 * a lost connection whose COMMIT went through) adds nothing; SQLite refuses it (UNIQUE), as it
 * never runs a step twice.
 */
export function prepareStatements(c: LedgerContext, attempt: NewAttempt, admit?: Admit): Statement[] {
  const at = c.at();
  const values: PreparedValues = {
    batch_id: c.batchId,
    item_id: attempt.itemId,
    seq: attempt.seq,
    idempotency_key: attempt.idempotencyKey,
    request_body: attempt.requestBody,
    request_hash: attempt.requestHash,
    reserved_micros: attempt.reservedMicros,
    state: 'prepared',
    created_at: at,
    take: attempt.take ?? 1,
    vars: attempt.vars ?? null,
  };
  const variant = admit ? 'admit' : 'own';
  const detail = {
    seq: attempt.seq,
    reserved: attempt.reservedMicros,
    ...(attempt.take && attempt.take > 1 ? { take: attempt.take } : {}),
  };
  const item = itemInFlight.bind(
    c,
    {
      ...attemptKey(c, { key: attempt.idempotencyKey })[0],
      state: 'in_flight',
      request_hash: attempt.requestHash,
      at,
      item_id: attempt.itemId,
      runner: admit?.runnerId ?? '',
      lease_ms: admit?.leaseMs ?? 0,
    },
    variant,
  );
  const event = attemptEventOf(c, { key: attempt.idempotencyKey }, 'attempt_prepared', detail, {
    createdAt: at,
  });
  // Admitted, the item is claimed first, under the condition the insert then meets again (a
  // claim changes nothing it reads): neither is written without the other.
  const row = attemptRow.bind(c, values, variant);
  return admit ? [item, row, event] : [row, item, event];
}

/** The attempts prepareStatements wrote, in the order asked (a key found already is read back). */
export async function preparedOf(
  c: LedgerContext,
  attempts: readonly NewAttempt[],
  inserted: readonly unknown[],
): Promise<AttemptRecord[]> {
  const byKey = new Map(inserted.map((row) => [(row as AttemptRecord).idempotencyKey, row]));
  const records: AttemptRecord[] = [];
  for (const attempt of attempts) {
    const row = byKey.get(attempt.idempotencyKey);
    records.push(row ? toAttempt(row) : await getAttempt(c, { key: attempt.idempotencyKey }));
  }
  return records;
}

/** Several attempts made durable together, each before its own POST (write-ahead). */
export async function prepareAttempts(
  c: LedgerContext,
  attempts: readonly NewAttempt[],
): Promise<AttemptRecord[]> {
  if (attempts.length === 0) return [];
  const results = await c.db.batch(
    attempts.flatMap((attempt) => prepareStatements(c, attempt)),
    'durable',
  );
  return preparedOf(
    c,
    attempts,
    results.filter((_, n) => n % 3 === 0).flatMap((result) => result.rows),
  );
}
