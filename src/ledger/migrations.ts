import type { Database } from 'better-sqlite3';
import { batchRootOf, storedPath } from './batch-paths.js';
import { migrationSql, migrationSteps } from './migration-files.js';

/** The batch the ledger is being opened for, which a migration may need to know. */
export interface MigrationContext {
  batchName: string;
  /** The manifest's path as given now (the project may have moved since the ledger was written). */
  manifestPath: string;
}

/** A step that needs the rows themselves (and the opening batch) in JavaScript. */
type CodeStep = (db: Database, context: MigrationContext | null) => void;

/**
 * Version 5: saved files relative to the batch root, the manifest's folder (batch-paths.ts): a
 * project moved or copied as a whole keeps its outputs. Until now paths were absolute, written
 * against the manifest's folder of their run. A path inside the opening manifest's folder as it is
 * now is made relative to it (the files are there); else one inside the folder the batch's row
 * recorded is made relative to that (the project moved since: its files moved with it); any other
 * path (an absolute output.dir, a bucket's URI) is kept. Earlier `file_moved` events keep the
 * paths they were written with: the event log is append-only.
 */
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
 * Version 9, after 8 added the columns: a copy made before copies named their result: its key is `reused:<attempt copied>:...`. In id
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

/**
 * Versioned schema: the numbered files of migrations/sqlite/ (migration-files.ts) and the steps
 * written in code, applied in order and recorded in PRAGMA user_version. Money columns are integer
 * micro-dollars.
 */
const MIGRATIONS = migrationSteps<CodeStep>('sqlite', { 5: relativeFilePaths, 9: copiesPointAtTheirResult });

export const SCHEMA_VERSION = MIGRATIONS.length;

/**
 * Brings the database to SCHEMA_VERSION (or `to`, an earlier one, as the tests make the ledgers of
 * earlier versions); each step commits with its version number. `context` is the batch being
 * opened (null: none known, as for a ledger only inspected).
 */
export function migrate(db: Database, context: MigrationContext | null = null, to = SCHEMA_VERSION): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > SCHEMA_VERSION) {
    throw new Error(
      `ledger schema version ${current} is newer than this mediabatch understands (${SCHEMA_VERSION})`,
    );
  }
  for (let version = current; version < to; version += 1) {
    db.transaction(() => {
      const step = MIGRATIONS[version]!;
      if ('file' in step) db.exec(migrationSql(step));
      else step.code(db, context);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}
