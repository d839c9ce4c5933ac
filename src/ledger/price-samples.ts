import type { LedgerConnection } from './ledger-connection.js';

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

/** The fields that may set a price, with their JSON types, so no two different values share a group. */
const FIELDS = ['$.model', '$.input.seconds', '$.input.definition']
  .map((path) => `json_extract(request_body, '${path}'), json_type(request_body, '${path}')`)
  .join(', ');

/**
 * One row per kind of request among accepted attempts with a job: MAX(id) makes the row's other
 * bare columns (the amount) those of the newest attempt of the group. The body is reduced to the
 * fields cost-estimate.ts reads, which makes its price key; JSON.parse takes an array as well.
 */
const PRICE_SAMPLES = `SELECT MAX(id) AS id, amount_micros AS amountMicros, COUNT(*) AS samples,
  SUM(amount_micros) AS sumMicros, json_object(
    'model', json_extract(request_body, '$.model'),
    'input', json_object('seconds', json_extract(request_body, '$.input.seconds'),
                         'definition', json_extract(request_body, '$.input.definition'))) AS requestBody
FROM attempts WHERE batch_id = ? AND state = 'accepted' AND job_id IS NOT NULL
  AND json_valid(request_body) AND json_type(request_body) IN ('object', 'array')
GROUP BY ${FIELDS}`;

/** A handful of rows however many attempts there are. */
export function priceSamples(c: LedgerConnection): PriceSample[] {
  return c.prepare(PRICE_SAMPLES).all(c.batchId) as PriceSample[];
}
