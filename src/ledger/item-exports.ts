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
  /** The attempt's saved files in index order; empty when it saved none. */
  files: SavedFile[];
}

export interface SavedFile {
  idx: number;
  path: string;
  sha256: string;
  bytes: number;
}

/**
 * One saved file of one attempt of one item: an attempt without saved files has one row, its file
 * columns null, and an item without attempts one row, its attempt columns null too.
 */
export type ExportRow = [
  index: number,
  state: ItemState | null,
  errorCode: string | null,
  attemptId: number | null,
  netMicros: number | null,
  filesSaved: number | null,
  prompt: string | null,
  input: string | null,
  model: string | null,
  vars: string | null,
  jobId: string | null,
  completedAt: string | null,
  expiresAt: string | null,
  fileIdx: number | null,
  path: string | null,
  sha256: string | null,
  bytes: number | null,
];

/**
 * The ids drive the walk: json_each is the outer loop (LEFT JOINs keep it there), so rows come in
 * the ids' order without a sort holding them all. Each item's attempts come through the (batch_id,
 * item_id, seq) index and their files through the files' key, and the count, the sum, the standing
 * attempt and its files are taken in JS: correlated subqueries for them searched the attempts four
 * times per item and sorted each item's files, a third of the walk. Items have one attempt or a
 * few, so the rows of attempts that do not stand cost little.
 */
const exportSql = (vars: string) => `SELECT m.key, i.state, i.error_code,
  a.id, a.amount_micros - a.refunded_micros, a.files_saved,
  json_extract(a.request_body, '$.input.prompt'), json_remove(json_extract(a.request_body, '$.input'), '$.prompt'),
  json_extract(a.request_body, '$.model'), ${vars},
  a.job_id, a.completed_at, a.expires_at,
  f.idx, batch_path(f.path), f.sha256, f.bytes
FROM json_each(@ids) m
LEFT JOIN items i ON i.batch_id = @batchId AND i.item_id = m.value
LEFT JOIN attempts a ON a.batch_id = @batchId AND a.item_id = m.value
LEFT JOIN files f ON a.files_saved = 1 AND f.attempt_id = a.id`;

/** Streamed: the caller must finish with the rows before the ledger closes. */
export function* itemExports(c: LedgerConnection, ids: readonly string[]): Generator<ItemExport> {
  // A ledger written before variables were recorded is read as it is (read-only: never migrated).
  const vars = c.hasColumn('attempts', 'vars') ? 'a.vars' : 'NULL';
  const statement = c.prepare(exportSql(vars)).raw();
  // The walk reads each page about once, so SQLite's default 16 MB page cache would only fill with
  // pages it never needs again: 2 MB holds the trees' inner pages, and peak RSS is 15 MB lower.
  const cacheSize = c.db.pragma('cache_size', { simple: true }) as number;
  c.db.pragma(`cache_size = ${WALK_CACHE_KIB}`);
  try {
    yield* itemsOf(statement.iterate({ batchId: c.batchId, ids: JSON.stringify(ids) }), ids);
  } finally {
    c.db.pragma(`cache_size = ${cacheSize}`);
  }
}

/**
 * Items this batch paid for (an attempt charged, or files saved) whose ids are not among `ids`:
 * what a manifest no longer names (an item removed, or renamed when a list value changed) but the
 * money and the files on disk still stand for. In id order, so an export is the same every time.
 * An unpaid attempt (refused, or refunded in full) moved no money, so such an item is left out.
 */
const PAID_ELSEWHERE = `SELECT DISTINCT item_id FROM attempts
WHERE batch_id = @batchId AND (amount_micros > 0 OR files_saved = 1)
  AND item_id NOT IN (SELECT value FROM json_each(@ids))
ORDER BY item_id`;

export function paidItemsNotIn(c: LedgerConnection, ids: readonly string[]): string[] {
  return c
    .prepare(PAID_ELSEWHERE)
    .pluck()
    .all({ batchId: c.batchId, ids: JSON.stringify(ids) }) as string[];
}

/** In KiB, as SQLite takes a negative cache_size. */
const WALK_CACHE_KIB = -2000;

/** Each item's export from its rows (ExportRow), which come an item's together, in the ids' order. */
export function* itemsOf(rows: IterableIterator<unknown>, ids: readonly string[]): Generator<ItemExport> {
  // An item's rows are consecutive, and so are an attempt's: the first row of the next ends them.
  let item: ItemRows | null = null;
  for (const row of rows as IterableIterator<ExportRow>) {
    if (item === null || item.first[0] !== row[0]) {
      if (item !== null) yield new ExportedItem(ids, item);
      item = new ItemRows(row);
    }
    item.add(row);
  }
  if (item !== null) yield new ExportedItem(ids, item);
}

/*
 * Every object made per item here, and per record in report/export-records.ts, comes from a class,
 * not an object literal. When one garbage collection finds most of a literal's recent objects
 * alive, V8 may allocate that literal's objects straight into the old generation from then on
 * ("pretenuring"); there a dead one keeps the young strings it points to alive until the next full
 * collection. In about one 100,000-item export in twelve that added 90 MB to peak RSS. V8 keeps
 * that feedback for literals, not for constructor calls (docs/performance.md).
 */

/** One item's rows so far: its first (the item's own columns) and what its attempts add up to. */
class ItemRows {
  count = 0;
  net = 0;
  standing: ExportRow | null = null;
  /** The standing attempt's files, in the order read. */
  files: SavedFile[] = [];
  /** The attempt of the row before. */
  #attemptId: number | null = null;

  constructor(readonly first: ExportRow) {}

  add(row: ExportRow): void {
    const attemptId = row[3];
    if (attemptId === null) return;
    if (attemptId !== this.#attemptId) {
      this.#attemptId = attemptId;
      this.count += 1;
      this.net += row[4]!;
      if (stands(row, this.standing)) {
        this.standing = row;
        this.files = [];
      }
    }
    if (row[13] !== null && this.standing![3] === attemptId) {
      this.files.push(new FileRow(row[13], row[14]!, row[15]!, row[16]!));
    }
  }
}

/** The newest attempt whose files were saved stands for the item, else the newest (ids grow). */
function stands(row: ExportRow, standing: ExportRow | null): boolean {
  if (standing === null) return true;
  const saved = row[5] === 1;
  const standingSaved = standing[5] === 1;
  return saved === standingSaved ? row[3]! > standing[3]! : saved;
}

class FileRow implements SavedFile {
  constructor(
    readonly idx: number,
    readonly path: string,
    readonly sha256: string,
    readonly bytes: number,
  ) {}
}

class ExportedItem implements ItemExport {
  readonly itemId: string;
  readonly state: ItemState | null;
  readonly errorCode: string | null;
  readonly attempts: number;
  readonly netMicros: number;
  readonly prompt: string | null;
  readonly input: string | null;
  readonly model: string | null;
  readonly vars: string | null;
  readonly jobId: string | null;
  readonly completedAt: string | null;
  readonly expiresAt: string | null;
  readonly files: SavedFile[];

  constructor(ids: readonly string[], { first, standing, count, net, files }: ItemRows) {
    const [index, state, errorCode] = first;
    // Without attempts, the first row's attempt columns are the LEFT JOIN's nulls.
    const [, , , , , , prompt, input, model, vars, jobId, completedAt, expiresAt] = standing ?? first;
    this.itemId = ids[index]!;
    this.state = state;
    this.errorCode = errorCode;
    this.attempts = count;
    this.netMicros = net;
    this.prompt = prompt;
    this.input = input;
    this.model = model;
    this.vars = vars;
    this.jobId = jobId;
    this.completedAt = completedAt;
    this.expiresAt = expiresAt;
    // The files' key gives them in index order already; sorting a file or two makes it certain.
    this.files = files.length > 1 ? files.sort((a, b) => a.idx - b.idx) : files;
  }
}
