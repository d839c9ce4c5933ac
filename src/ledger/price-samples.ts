import { sql } from 'kysely';
import type { LedgerContext } from './ledger-context.js';

/**
 * The prices charged so far for one kind of request: the newest charge of that kind (its id,
 * amount and the priced part of its body), and how many accepted attempts of it there were.
 */
export interface PriceSample {
  id: number;
  requestBody: string;
  amountMicros: number;
  samples: number;
  sumMicros: number;
}

/** The fields that may set a price (cost-estimate.ts reads them), as JSON text: a type apart from its value. */
const FIELDS = { model: ['model'], seconds: ['input', 'seconds'], definition: ['input', 'definition'] };

/**
 * One row per kind of request among accepted attempts with a job, a handful however many
 * attempts there are: the groups are made by the database, the newest of each (its highest id)
 * joined back for its amount. The body is reduced to the fields that make cost-estimate.ts's
 * price key; JSON.parse takes an array as well.
 */
export async function priceSamples(c: LedgerContext): Promise<PriceSample[]> {
  const field = (path: readonly string[]) => c.db.sql.jsonAt('request_body', path);
  const rows = await c.db.read(
    c.q
      .with('g', (q) =>
        q
          .selectFrom('attempts')
          .select([
            sql<number>`max(id)`.as('id'),
            sql<number>`count(*)`.as('samples'),
            sql<number>`cast(sum(amount_micros) as bigint)`.as('sumMicros'),
            field(FIELDS.model).as('model'),
            field(FIELDS.seconds).as('seconds'),
            field(FIELDS.definition).as('definition'),
          ])
          .where('batch_id', '=', c.batchId)
          .where('state', '=', 'accepted')
          .where('job_id', 'is not', null)
          .where(c.db.sql.isJsonDocument('request_body') as never)
          .groupBy([field(FIELDS.model), field(FIELDS.seconds), field(FIELDS.definition)]),
      )
      .selectFrom('g')
      .innerJoin('attempts as a', 'a.id', 'g.id')
      .select([
        'g.id',
        'a.amount_micros as amountMicros',
        'g.samples',
        'g.sumMicros',
        'g.model',
        'g.seconds',
        'g.definition',
      ])
      .orderBy('g.id')
      .compile(),
  );
  return rows.map(({ id, amountMicros, samples, sumMicros, model, seconds, definition }) => ({
    id,
    amountMicros,
    samples: Number(samples),
    sumMicros: Number(sumMicros),
    requestBody: `{"model":${model ?? 'null'},"input":{"seconds":${seconds ?? 'null'},"definition":${definition ?? 'null'}}}`,
  }));
}
