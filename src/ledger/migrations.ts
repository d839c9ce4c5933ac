import type { Database } from 'better-sqlite3';
import { batchRootOf, storedPath } from './batch-paths.js';

/** The batch the ledger is being opened for, which a migration may need to know. */
export interface MigrationContext {
  batchName: string;
  /** The manifest's path as given now (the project may have moved since the ledger was written). */
  manifestPath: string;
}

/** A step of SQL, or a step that needs the rows themselves (and the opening batch) in JavaScript. */
type Migration = string | ((db: Database, context: MigrationContext | null) => void);

/**
 * Versioned schema, applied in order and recorded in PRAGMA user_version. A migration is never
 * edited once released: add a new one. Money columns are integer micro-dollars.
 */
const MIGRATIONS: readonly Migration[] = [
  `
  CREATE TABLE batches (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    manifest_path TEXT NOT NULL,
    created_at    TEXT NOT NULL
  );
  CREATE TABLE items (
    batch_id      INTEGER NOT NULL REFERENCES batches(id),
    item_id       TEXT NOT NULL,
    request_hash  TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('pending','in_flight','done','failed','budget_exceeded','expired')),
    retries_used  INTEGER NOT NULL DEFAULT 0,
    error_code    TEXT,
    error_message TEXT,
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (batch_id, item_id)
  ) WITHOUT ROWID;
  CREATE TABLE attempts (
    id              INTEGER PRIMARY KEY,
    batch_id        INTEGER NOT NULL REFERENCES batches(id),
    item_id         TEXT NOT NULL,
    seq             INTEGER NOT NULL,
    idempotency_key TEXT NOT NULL UNIQUE,
    request_body    TEXT NOT NULL,
    request_hash    TEXT NOT NULL,
    reserved_micros INTEGER NOT NULL DEFAULT 0,
    state           TEXT NOT NULL CHECK (state IN ('prepared','accepted','rejected')),
    http_status     INTEGER,
    http_code       TEXT,
    job_id          TEXT UNIQUE,
    job_status      TEXT,
    amount_micros   INTEGER NOT NULL DEFAULT 0,
    refunded_micros INTEGER NOT NULL DEFAULT 0,
    error_code      TEXT,
    error_message   TEXT,
    expires_at      TEXT,
    files_saved     INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL,
    answered_at     TEXT,
    completed_at    TEXT,
    UNIQUE (batch_id, item_id, seq)
  );
  CREATE INDEX attempts_open ON attempts (batch_id, state, job_status);
  CREATE TABLE files (
    attempt_id INTEGER NOT NULL REFERENCES attempts(id),
    idx        INTEGER NOT NULL,
    path       TEXT NOT NULL,
    bytes      INTEGER NOT NULL,
    sha256     TEXT NOT NULL,
    saved_at   TEXT NOT NULL,
    PRIMARY KEY (attempt_id, idx)
  ) WITHOUT ROWID;
  CREATE TABLE events (
    id         INTEGER PRIMARY KEY,
    at         TEXT NOT NULL,
    batch_id   INTEGER NOT NULL,
    item_id    TEXT,
    attempt_id INTEGER,
    kind       TEXT NOT NULL,
    detail     TEXT
  );
  CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
  CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'the event log is append-only'); END;
  CREATE TABLE runs (
    id          INTEGER PRIMARY KEY,
    batch_id    INTEGER NOT NULL,
    pid         INTEGER NOT NULL,
    started_at  TEXT NOT NULL,
    ended_at    TEXT,
    exit_code   INTEGER
  );
  `,
  // Takes: a redo (run --redo) makes a new take of a done item; earlier takes keep their files.
  `
  ALTER TABLE attempts ADD COLUMN take INTEGER NOT NULL DEFAULT 1;
  `,
  // The service the ledger belongs to (docs/services.md): its jobs, spend and files are that
  // service's, so running it against another one would take them for results there. One row.
  `
  CREATE TABLE service (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    identity  TEXT NOT NULL,
    bound_at  TEXT NOT NULL
  );
  `,
  // Template variables (docs/manifest.md, Templates): the values an attempt's prompt was rendered
  // from, as a JSON object in the manifest's order; NULL for an item without variables.
  `
  ALTER TABLE attempts ADD COLUMN vars TEXT;
  `,
  // Saved files relative to the batch root, the manifest's folder (batch-paths.ts): a project
  // moved or copied as a whole keeps its outputs. Until now paths were absolute, written against
  // the manifest's folder of their run. A path inside the opening manifest's folder as it is now
  // is made relative to it (the files are there); else one inside the folder the batch's row
  // recorded is made relative to that (the project moved since: its files moved with it); any
  // other path (an absolute output.dir, a bucket's URI) is kept. Earlier `file_moved` events keep
  // the paths they were written with: the event log is append-only.
  relativeFilePaths,
  // Each saved file's modification time (ms since the epoch, whole) as it was once saved, so that
  // `status` and `plan` can tell a file edited since by one stat, without reading it (docs/results.md).
  // NULL for files saved before: only their size is compared without --verify.
  `
  ALTER TABLE files ADD COLUMN mtime_ms INTEGER;
  `,
  // Keepers (docs/gallery.md): which take of each manifest item a person chose. `item_id` is the
  // manifest item (the group of its variants), `kept_item_id` the ledger item whose take is kept.
  // No foreign key: an item renamed or removed from the manifest keeps its row until kept again.
  `
  CREATE TABLE keepers (
    batch_id     INTEGER NOT NULL REFERENCES batches(id),
    item_id      TEXT NOT NULL,
    kept_item_id TEXT NOT NULL,
    take         INTEGER NOT NULL,
    chosen_at    TEXT NOT NULL,
    PRIMARY KEY (batch_id, item_id)
  ) WITHOUT ROWID;
  `,
  // A paid result is one record (docs/results.md, "The record of a result"): the attempt whose job
  // made the bytes. A copy of it is a take that points at it: `made_by_job` names that job and
  // `copied_from` the key of the take copied. Copies made before this step are found by their key.
  `
  ALTER TABLE attempts ADD COLUMN made_by_job TEXT;
  ALTER TABLE attempts ADD COLUMN copied_from TEXT;
  `,
  copiesPointAtTheirResult,
  // Checks of saved outputs (docs/checks.md): each take's outcome against its request, and the
  // item state `checks_failed` for an item none of whose takes passed. SQLite cannot change a
  // CHECK constraint in place, so items is rebuilt with its rows.
  `
  CREATE TABLE take_checks (
    attempt_id INTEGER PRIMARY KEY REFERENCES attempts(id),
    outcome    TEXT NOT NULL CHECK (outcome IN ('passed','failed','unchecked')),
    reason     TEXT,
    video      TEXT,
    checked_at TEXT NOT NULL
  );
  CREATE TABLE items_checked (
    batch_id      INTEGER NOT NULL REFERENCES batches(id),
    item_id       TEXT NOT NULL,
    request_hash  TEXT NOT NULL,
    state         TEXT NOT NULL CHECK (state IN ('pending','in_flight','done','failed','budget_exceeded','expired','checks_failed')),
    retries_used  INTEGER NOT NULL DEFAULT 0,
    error_code    TEXT,
    error_message TEXT,
    updated_at    TEXT NOT NULL,
    PRIMARY KEY (batch_id, item_id)
  ) WITHOUT ROWID;
  INSERT INTO items_checked SELECT batch_id, item_id, request_hash, state, retries_used, error_code, error_message, updated_at FROM items;
  DROP TABLE items;
  ALTER TABLE items_checked RENAME TO items;
  `,
];

function relativeFilePaths(db: Database, context: MigrationContext | null): void {
  const rows = db
    .prepare(
      `SELECT f.attempt_id AS attemptId, f.idx, f.path, b.name, b.manifest_path AS manifestPath
         FROM files f JOIN attempts a ON a.id = f.attempt_id JOIN batches b ON b.id = a.batch_id`,
    )
    .all() as Array<{ attemptId: number; idx: number; path: string; name: string; manifestPath: string }>;
  const update = db.prepare('UPDATE files SET path = ? WHERE attempt_id = ? AND idx = ?');
  for (const row of rows) {
    const roots = [batchRootOf(row.manifestPath)];
    if (context !== null && row.name === context.batchName) roots.unshift(batchRootOf(context.manifestPath));
    const stored = storedPath(row.path, roots);
    if (stored !== row.path) update.run(stored, row.attemptId, row.idx);
  }
}

/**
 * A copy made before copies named their result: its key is `reused:<attempt copied>:...`. In id
 * order, so a copy of a copy finds the job its source already points at.
 */
function copiesPointAtTheirResult(db: Database): void {
  const copies = db
    .prepare(
      `SELECT id, idempotency_key AS key FROM attempts WHERE idempotency_key LIKE 'reused:%' ORDER BY id`,
    )
    .all() as Array<{ id: number; key: string }>;
  const source = db.prepare(
    'SELECT idempotency_key AS key, coalesce(job_id, made_by_job) AS job FROM attempts WHERE id = ?',
  );
  const update = db.prepare('UPDATE attempts SET copied_from = ?, made_by_job = ? WHERE id = ?');
  for (const copy of copies) {
    const from = source.get(Number(copy.key.split(':')[1])) as
      | { key: string; job: string | null }
      | undefined;
    if (from) update.run(from.key, from.job, copy.id);
  }
}

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the database to SCHEMA_VERSION; each step commits with its version number. `context` is
 * the batch being opened (null: none known, as for a ledger only inspected).
 */
export function migrate(db: Database, context: MigrationContext | null = null): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    throw new Error(
      `ledger schema version ${current} is newer than this mediabatch understands (${SCHEMA_VERSION})`,
    );
  }
  for (let version = current; version < SCHEMA_VERSION; version += 1) {
    db.transaction(() => {
      const step = MIGRATIONS[version]!;
      if (typeof step === 'string') db.exec(step);
      else step(db, context);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}
