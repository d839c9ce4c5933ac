import { BatchPaths, batchRootOf } from './batch-paths.js';
import { findBatch } from './batch-row.js';
import {
  databaseLocation,
  type LedgerLocation,
  ledgerFileOf,
  openDatabase,
} from './dialect/ledger-location.js';
import type { PgConfig } from './dialect/postgres.js';
import { KyselyLedger } from './kysely-ledger.js';
import type { Ledger } from './ledger.js';
import { LedgerContext } from './ledger-context.js';

export {
  fileLocation,
  isSharedLocation,
  type LedgerLocation,
  ledgerFileOf,
  sameLedger,
} from './dialect/ledger-location.js';
export type { PgConfig } from './dialect/postgres.js';

/** The PG* variables every PostgreSQL tool understands, as given to the batch. */
export interface PostgresEnv {
  PGHOST?: string | undefined;
  PGPORT?: string | undefined;
  PGUSER?: string | undefined;
  PGPASSWORD?: string | undefined;
  PGDATABASE?: string | undefined;
  PGSSLMODE?: string | undefined;
}

export const isDatabaseUrl = (text: string): boolean => /^postgres(ql)?:\/\//i.test(text);

/**
 * A libpq-style URL, its missing parts taken from the PG* variables as libpq does (the URL wins).
 * PGSSLMODE require or verify-*: TLS (verify-*: the certificate checked); disable, allow, prefer
 * or unset: none, as pg's own default.
 */
export function postgresLocation(url: string, env: PostgresEnv): LedgerLocation {
  const parsed = new URL(url);
  const sslmode = parsed.searchParams.get('sslmode') ?? env.PGSSLMODE ?? null;
  const config: PgConfig = {
    host: env.PGHOST || 'localhost',
    port: Number(env.PGPORT) || 5432,
    ...(env.PGUSER ? { user: env.PGUSER } : {}),
    ...(env.PGPASSWORD ? { password: env.PGPASSWORD } : {}),
    ...(env.PGDATABASE ? { database: env.PGDATABASE } : {}),
    ...sslOf(sslmode),
    connectionString: url,
  };
  return databaseLocation(config, addressOf(parsed, env));
}

function sslOf(mode: string | null): Pick<PgConfig, 'ssl'> {
  if (mode === 'require') return { ssl: { rejectUnauthorized: false } };
  if (mode === 'verify-ca' || mode === 'verify-full') return { ssl: true };
  return {};
}

/**
 * The database's address as people see it and as the batch's output marker names it: user, host,
 * port and database, each from the URL or else its PG* variable, never the password (which
 * databaseLocation hides all the same). Every runner of the batch names the same database the same
 * way, however each spelled its URL.
 */
function addressOf(url: URL, env: PostgresEnv): string {
  const user = decodeURIComponent(url.username) || env.PGUSER || '';
  const host = url.hostname || env.PGHOST || 'localhost';
  const port = url.port || env.PGPORT || '5432';
  const database = decodeURIComponent(url.pathname.slice(1)) || env.PGDATABASE || user;
  return `postgres://${user ? `${encodeURIComponent(user)}@` : ''}${host}:${port}/${encodeURIComponent(database)}`;
}

export interface OpenLedgerOptions {
  readonly?: boolean;
  now?: () => Date;
  /** A run's name among the runners of a shared ledger; read-only commands and tools pass none. */
  runnerId?: string;
  /** A shared ledger's lease and how long a step waits for its database (docs/shared-ledger.md). */
  leaseMs?: number;
  reconnectWithinMs?: number;
  /**
   * Called once each time a step of a shared ledger starts waiting for its database, which went
   * away, with how long it will wait (ms): the run says so. Not called for a database that never
   * answered since the ledger was opened: opening it fails at once.
   */
  onWaiting?: (waitMs: number) => void;
}

/** Thirty seconds: a dead runner's items are adopted this long after its last renewal. */
export const DEFAULT_LEASE_MS = 30_000;
/** Two minutes: a database away for longer stops the run (it fails no item). */
export const DEFAULT_RECONNECT_MS = 120_000;

/**
 * Opens (creating and migrating when writing) the batch's ledger where `location` says. A
 * database that cannot be reached fails within the connection timeout (5 s) with a
 * DatabaseLostError naming its host and port (errors.ts).
 */
export async function openLedger(
  location: LedgerLocation,
  batchName: string,
  manifestPath: string,
  options: OpenLedgerOptions = {},
): Promise<Ledger> {
  const readonly = options.readonly ?? false;
  const now = options.now ?? (() => new Date());
  const { db, columns } = await openDatabase(location, {
    readonly,
    batchName,
    manifestPath,
    reconnectWithinMs: options.reconnectWithinMs ?? DEFAULT_RECONNECT_MS,
    onWaiting: options.onWaiting,
  });
  try {
    const hasBatches = columns === null || columns.has('batches');
    const batch = await findBatch(db, batchName, manifestPath, now().toISOString(), readonly, hasBatches);
    const context = new LedgerContext({
      db,
      batchId: batch.id,
      now,
      paths: new BatchPaths(batchRootOf(manifestPath), batchRootOf(batch.manifestPath)),
      runnerId: options.runnerId ?? null,
      columns,
    });
    // A file is named by its path; a database by its URL without the password.
    const shown = ledgerFileOf(location) ?? location.shown;
    return new KyselyLedger(context, shown, options.leaseMs ?? DEFAULT_LEASE_MS);
  } catch (error) {
    await db.close();
    throw error;
  }
}
