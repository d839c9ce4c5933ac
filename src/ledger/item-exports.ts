import type { LedgerConnection } from './ledger-connection.js';
import type { ItemState } from './records.js';

/**
 * One row per manifest item, in the order of the ids given, for `export`: what the ledger knows of
 * the item and of the attempt that stands for it (the newest whose files were saved, else the
 * newest). SQLite walks the ids, so 100,000 rows stream without being held (docs/performance.md).
 */
export interface ItemExport {
  itemId: string;
  /** Null when the ledger does not know the item. */
  state: ItemState | null;
  errorCode: string | null;
  attempts: number;
  /** Charged net of refunds over every attempt. */
  netMicros: number;
  /** The attempt's `input` as JSON text, exactly as it was sent, and its model. */
  input: string | null;
  model: string | null;
  /** The variables the attempt's prompt was rendered from, as JSON text. */
  vars: string | null;
  jobId: string | null;
  completedAt: string | null;
  expiresAt: string | null;
  /** JSON array of [path, sha256, bytes] of the attempt's saved files, or null. */
  files: string | null;
}

type ExportRow = [
  itemId: string,
  state: ItemState | null,
  errorCode: string | null,
  attempts: number | null,
  netMicros: number | null,
  input: string | null,
  model: string | null,
  vars: string | null,
  jobId: string | null,
  completedAt: string | null,
  expiresAt: string | null,
  files: string | null,
];

const exportSql = (vars: string) => `WITH m(pos, item_id) AS (SELECT key, value FROM json_each(@ids)),
per AS (
  SELECT item_id, COUNT(*) AS attempts, SUM(amount_micros - refunded_micros) AS net,
    COALESCE(MAX(CASE WHEN files_saved = 1 THEN id END), MAX(id)) AS shown
  FROM attempts WHERE batch_id = @batchId GROUP BY item_id)
SELECT m.item_id, i.state, i.error_code, per.attempts, per.net,
  json_extract(a.request_body, '$.input'), json_extract(a.request_body, '$.model'), ${vars},
  a.job_id, a.completed_at, a.expires_at,
  CASE WHEN a.files_saved = 1 THEN (SELECT json_group_array(json_array(path, sha256, bytes) ORDER BY idx)
    FROM files WHERE attempt_id = a.id) END
FROM m
LEFT JOIN items i ON i.batch_id = @batchId AND i.item_id = m.item_id
LEFT JOIN per ON per.item_id = m.item_id
LEFT JOIN attempts a ON a.id = per.shown
ORDER BY m.pos`;

/** Streamed: the caller must finish with the rows before the ledger closes. */
export function* itemExports(c: LedgerConnection, ids: readonly string[]): Generator<ItemExport> {
  // A ledger written before variables were recorded is read as it is (read-only: never migrated).
  const vars = c.hasColumn('attempts', 'vars') ? 'a.vars' : 'NULL';
  const statement = c.prepare(exportSql(vars)).raw();
  const rows = statement.iterate({
    batchId: c.batchId,
    ids: JSON.stringify(ids),
  }) as IterableIterator<ExportRow>;
  for (const row of rows) {
    const [
      itemId,
      state,
      errorCode,
      attempts,
      netMicros,
      input,
      model,
      varsText,
      jobId,
      completedAt,
      expiresAt,
      files,
    ] = row;
    yield {
      itemId,
      state,
      errorCode,
      attempts: attempts ?? 0,
      netMicros: netMicros ?? 0,
      input,
      model,
      vars: varsText,
      jobId,
      completedAt,
      expiresAt,
      files,
    };
  }
}
