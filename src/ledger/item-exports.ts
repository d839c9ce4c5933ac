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
  /** The attempt's prompt, its other `input` fields as JSON text, and its model, as sent. */
  prompt: string | null;
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
  prompt: string | null,
  input: string | null,
  model: string | null,
  vars: string | null,
  jobId: string | null,
  completedAt: string | null,
  expiresAt: string | null,
  files: string | null,
];

/**
 * The ids drive the walk: json_each is the outer loop (a LEFT JOIN keeps it there), so rows come
 * in the ids' order without a sort holding them all. Each item's attempts are found through the
 * (batch_id, item_id, seq) index; ids grow with every attempt, so the newest is the highest.
 */
const exportSql = (vars: string) => `SELECT m.value, i.state, i.error_code,
  (SELECT COUNT(*) FROM attempts x WHERE x.batch_id = @batchId AND x.item_id = m.value),
  (SELECT SUM(x.amount_micros - x.refunded_micros) FROM attempts x WHERE x.batch_id = @batchId AND x.item_id = m.value),
  json_extract(a.request_body, '$.input.prompt'), json_remove(json_extract(a.request_body, '$.input'), '$.prompt'),
  json_extract(a.request_body, '$.model'), ${vars},
  a.job_id, a.completed_at, a.expires_at,
  CASE WHEN a.files_saved = 1 THEN (SELECT json_group_array(json_array(path, sha256, bytes) ORDER BY idx)
    FROM files WHERE attempt_id = a.id) END
FROM json_each(@ids) m
LEFT JOIN items i ON i.batch_id = @batchId AND i.item_id = m.value
LEFT JOIN attempts a ON a.id = COALESCE(
  (SELECT MAX(x.id) FROM attempts x WHERE x.batch_id = @batchId AND x.item_id = m.value AND x.files_saved = 1),
  (SELECT MAX(x.id) FROM attempts x WHERE x.batch_id = @batchId AND x.item_id = m.value))`;

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
      prompt,
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
      prompt,
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
