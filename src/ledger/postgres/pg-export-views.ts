import { type ExportRow, type ItemExport, itemsOf } from '../item-exports.js';
import type { PriceSample } from '../price-samples.js';
import type { PgLedgerConnection } from './pg-ledger-connection.js';

/**
 * `export`'s rows and the price samples in PostgreSQL, as item-exports.ts and price-samples.ts give
 * them. What SQLite reads of a request body with json_extract is read here in JS from the body
 * itself (`sqliteValue`): PostgreSQL's jsonb would reorder an input's keys and print it with
 * spaces, and export writes the input's JSON text as it is.
 */

/**
 * The rows of item-exports.ts's walk, its columns in the same places: the body comes in the
 * prompt's column, and the prompt, the input and the model are taken from it in JS.
 */
const EXPORT = `SELECT m.ord - 1, i.state, i.error_code,
  a.id, a.amount_micros - a.refunded_micros, a.files_saved, a.request_body, NULL, NULL, a.vars,
  a.job_id, a.completed_at, a.expires_at, f.idx, f.path, f.sha256, f.bytes
FROM unnest($2::text[]) WITH ORDINALITY m(item_id, ord)
LEFT JOIN items i ON i.batch_id = $1 AND i.item_id = m.item_id
LEFT JOIN attempts a ON a.batch_id = $1 AND a.item_id = m.item_id
LEFT JOIN files f ON a.files_saved = 1 AND f.attempt_id = a.id
ORDER BY m.ord, a.id, f.idx`;

const BODY = 6;

export function itemExports(c: PgLedgerConnection, ids: readonly string[]): IterableIterator<ItemExport> {
  const rows = c.db.queryArrays<ExportRow>(EXPORT, [c.batchId, ids]);
  let attemptId: number | null = null;
  let sent: [prompt: unknown, input: string | null, model: unknown] = [null, null, null];
  for (const row of rows) {
    if (row[3] === null) continue;
    // An attempt's rows (one per file) are consecutive: its body is read once.
    if (row[3] !== attemptId) {
      attemptId = row[3];
      sent = requestParts(row[BODY]!);
    }
    [row[6], row[7], row[8]] = sent as [string | null, string | null, string | null];
    if (row[14] !== null) row[14] = c.paths.absolute(row[14]);
  }
  return itemsOf(rows.values(), ids);
}

/**
 * What item-exports.ts's SQL reads of a body: json_extract of $.input.prompt and $.model, and
 * json_remove($.input, '$.prompt') as minified JSON text.
 */
function requestParts(body: string): [prompt: unknown, input: string | null, model: unknown] {
  const parsed = JSON.parse(body) as { input?: unknown; model?: unknown } | null;
  const input = parsed?.input;
  let rest: string | null = null;
  if (input !== undefined && input !== null) {
    if (typeof input === 'object' && !Array.isArray(input)) {
      const { prompt: _prompt, ...others } = input as Record<string, unknown>;
      rest = JSON.stringify(others);
    } else rest = JSON.stringify(input);
  }
  return [sqliteValue(fieldOf(input, 'prompt')), rest, sqliteValue(parsed?.model)];
}

function fieldOf(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

/** A JSON value as SQLite's json_extract gives it: null when absent, true as 1, objects as text. */
function sqliteValue(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return typeof value === 'object' ? JSON.stringify(value) : value;
}

/** item-exports.ts's PAID_ELSEWHERE; the ids are an anti-join, not a list searched per row. */
const PAID_ELSEWHERE = `SELECT DISTINCT item_id COLLATE "C" AS item_id FROM attempts a
WHERE batch_id = $1 AND (amount_micros > 0 OR files_saved = 1)
  AND NOT EXISTS (SELECT 1 FROM unnest($2::text[]) m(id) WHERE m.id = a.item_id)
ORDER BY 1`;

export function paidItemsNotIn(c: PgLedgerConnection, ids: readonly string[]): string[] {
  return c.db.queryArrays<[string]>(PAID_ELSEWHERE, [c.batchId, ids]).map(([id]) => id);
}

/**
 * price-samples.ts's groups: jsonb tells a missing field from a JSON null and a number from a
 * string, as SQLite's json_extract with json_type does. The newest charge of a group is its
 * highest id. A body that is not a JSON object or array is left out.
 */
const PRICE_SAMPLES = `SELECT MAX(id), (array_agg(amount_micros ORDER BY id DESC))[1], COUNT(*), SUM(amount_micros)::bigint,
  b -> 'model', b -> 'input' -> 'seconds', b -> 'input' -> 'definition'
FROM (SELECT id, amount_micros, request_body::jsonb AS b FROM attempts
      WHERE batch_id = $1 AND state = 'accepted' AND job_id IS NOT NULL AND request_body ~ '^\\s*[[{]') x
GROUP BY b -> 'model', b -> 'input' -> 'seconds', b -> 'input' -> 'definition'
ORDER BY 1`;

type PriceRow = [
  id: number,
  amount: number,
  samples: number,
  sum: number,
  model: unknown,
  seconds: unknown,
  definition: unknown,
];

export function priceSamples(c: PgLedgerConnection): PriceSample[] {
  return c.db
    .queryArrays<PriceRow>(PRICE_SAMPLES, [c.batchId])
    .map(([id, amountMicros, samples, sumMicros, ...fields]) => {
      const [model, seconds, definition] = fields.map(jsonOf);
      return {
        id,
        amountMicros,
        samples,
        sumMicros,
        requestBody: `{"model":${model},"input":{"seconds":${seconds},"definition":${definition}}}`,
      };
    });
}

/** A field as json_object writes what json_extract gave it. */
function jsonOf(value: unknown): string {
  const extracted = sqliteValue(value);
  return typeof value === 'object' && value !== null ? (extracted as string) : JSON.stringify(extracted);
}
