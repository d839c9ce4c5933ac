import { resolve } from 'node:path';
import { BatchPaths, batchRootOf } from '../batch-paths.js';
import { migrate } from './schema.js';
import { type PgConfig, SyncConnection } from './sync-connection.js';

export interface PgOpenOptions {
  now?: () => Date;
  readonly?: boolean;
  /** How long a step waits for a database that stopped answering (docs/shared-ledger.md). */
  reconnectWithinMs: number;
}

/**
 * One PostgreSQL connection and the batch it works for: the query modules of postgres/ work
 * through it, as those of the SQLite ledger work through LedgerConnection.
 */
export class PgLedgerConnection {
  readonly db: SyncConnection;
  readonly batchId: number;
  readonly now: () => Date;
  readonly paths: BatchPaths;

  private constructor(db: SyncConnection, batchId: number, now: () => Date, paths: BatchPaths) {
    this.db = db;
    this.batchId = batchId;
    this.now = now;
    this.paths = paths;
  }

  static open(
    config: PgConfig,
    batchName: string,
    manifestPath: string,
    options: PgOpenOptions,
  ): PgLedgerConnection {
    const now = options.now ?? (() => new Date());
    const db = new SyncConnection(config, { reconnectWithinMs: options.reconnectWithinMs });
    try {
      if (!options.readonly) migrate(db);
      const batch = findBatch(db, batchName, manifestPath, now, options.readonly ?? false);
      const paths = new BatchPaths(batchRootOf(manifestPath), batchRootOf(batch.manifestPath));
      return new PgLedgerConnection(db, batch.id, now, paths);
    } catch (error) {
      db.close();
      throw error;
    }
  }

  at(): string {
    return this.now().toISOString();
  }

  close(): void {
    this.db.close();
  }
}

/**
 * The batch's row, found by its manifest's name: every runner of the batch, on any machine,
 * opens the same row, whatever folder its copy of the project is in. A read of a database that
 * was never set up, or that has no such batch, reads as batch -1 (no rows).
 */
function findBatch(
  db: SyncConnection,
  batchName: string,
  manifestPath: string,
  now: () => Date,
  readonly: boolean,
): { id: number; manifestPath: string } {
  const current = resolve(manifestPath);
  if (readonly && !schemaExists(db)) return { id: -1, manifestPath: current };
  const [found] = db.query<{ id: number; manifestPath: string }>(
    'SELECT id, manifest_path AS "manifestPath" FROM batches WHERE name = $1',
    [batchName],
  );
  if (found !== undefined || readonly) return found ?? { id: -1, manifestPath: current };
  db.query(
    `INSERT INTO batches (name, manifest_path, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`,
    [batchName, current, now().toISOString()],
  );
  const [row] = db.query<{ id: number; manifestPath: string }>(
    'SELECT id, manifest_path AS "manifestPath" FROM batches WHERE name = $1',
    [batchName],
  );
  return row!;
}

function schemaExists(db: SyncConnection): boolean {
  const [row] = db.query<{ found: string | null }>("SELECT to_regclass('batches')::text AS found");
  return row?.found != null;
}
