import { sql } from 'kysely';
import type { Statement, Tx } from './dialect/database.js';
import type { LedgerContext } from './ledger-context.js';
import type { ServiceBinding } from './records.js';

/**
 * The service this ledger belongs to. A SQLite file belongs to one service: its `service` table
 * holds one row. A PostgreSQL database holds many batches, each bound on its own row (batches).
 */

const text = (value: string | null) => sql<string | null>`cast(${value} as text)`;

/** The binding as a SELECT: null columns, or no row, while unbound. */
function bindingQuery(c: LedgerContext) {
  return c.can.servicePerBatch
    ? c.q
        .selectFrom('batches')
        .select(['service_identity as identity', 'service_bound_at as boundAt'])
        .where('id', '=', c.batchId)
    : c.q.selectFrom('service').select(['identity', 'bound_at as boundAt']).where('id', '=', 1);
}

function bindingOf(
  rows: ReadonlyArray<{ identity: string | null; boundAt: string | null }>,
): ServiceBinding | null {
  const [row] = rows;
  return row?.identity && row.boundAt ? { identity: row.identity, boundAt: row.boundAt } : null;
}

/** The binding as a step's transaction sees it (a copy checks its target's before it loads a batch). */
export async function boundServiceIn(c: LedgerContext, tx: Tx) {
  const [result] = await tx.run([bindingQuery(c).compile()]);
  const [row] = result!.rows as Array<{ identity: string | null; boundAt: string | null }>;
  return row?.identity ? { identity: row.identity, boundAt: row.boundAt } : null;
}

/** Unbound too: a ledger opened read-only at an older schema, without the service table yet. */
export async function boundService(c: LedgerContext): Promise<ServiceBinding | null> {
  if (c.none || !c.has(c.can.servicePerBatch ? 'batches' : 'service')) return null;
  return bindingOf(await c.db.read(bindingQuery(c).compile()));
}

/** The event, then the binding, each only while unbound; then the binding as it stands. */
function bindStatements(c: LedgerContext, identity: string): Statement[] {
  const at = c.at();
  const detail = JSON.stringify({ service: identity });
  const event = (source: ReturnType<typeof unbound>) =>
    c.q
      .insertInto('events')
      .columns(['at', 'batch_id', 'item_id', 'attempt_id', 'kind', 'detail'])
      .expression(source)
      .compile();
  const unbound = () =>
    c.q
      .selectFrom('batches')
      .select([
        text(at).as('at'),
        'id',
        sql<null>`cast(null as text)`.as('item_id'),
        sql<null>`cast(null as bigint)`.as('attempt_id'),
        text('service_bound').as('kind'),
        text(detail).as('detail'),
      ])
      .where('id', '=', c.batchId);
  if (c.can.servicePerBatch)
    return [
      event(unbound().where('service_identity', 'is', null)),
      c.q
        .updateTable('batches')
        .set({ service_identity: identity, service_bound_at: at })
        .where('id', '=', c.batchId)
        .where('service_identity', 'is', null)
        .compile(),
      bindingQuery(c).compile(),
    ];
  return [
    event(unbound().where((eb) => eb.not(eb.exists(eb.selectFrom('service').select('id'))))),
    c.q
      .insertInto('service')
      .values({ id: 1, identity, bound_at: at })
      .onConflict((conflict) => conflict.column('id').doNothing())
      .compile(),
    bindingQuery(c).compile(),
  ];
}

/** Binds the ledger to `identity` once; a ledger already bound keeps its service. */
export async function bindService(c: LedgerContext, identity: string): Promise<ServiceBinding> {
  const results = await c.db.batch(bindStatements(c, identity));
  return bindingOf(results[2]!.rows)!;
}

/**
 * A dump's binding (copy-ledger): set where unbound; a ledger already bound to another service
 * is refused (its jobs are that service's). `refuse` words the refusal.
 */
export function dumpedServiceStatements(c: LedgerContext, service: ServiceBinding): Statement[] {
  if (c.can.servicePerBatch)
    return [
      c.q
        .updateTable('batches')
        .set({ service_identity: service.identity, service_bound_at: service.boundAt })
        .where('id', '=', c.batchId)
        .compile(),
    ];
  return [
    c.q
      .insertInto('service')
      .values({ id: 1, identity: service.identity, bound_at: service.boundAt })
      .onConflict((conflict) =>
        conflict.column('id').doUpdateSet((eb) => ({
          identity: eb.ref('excluded.identity'),
          bound_at: eb.ref('excluded.bound_at'),
        })),
      )
      .compile(),
  ];
}
