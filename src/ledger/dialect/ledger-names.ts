import { resolve } from 'node:path';
import { databaseLocation, fileLocation, type LedgerLocation } from './ledger-location.js';
import type { PgConfig } from './postgres.js';

/**
 * A ledger as people name it: a SQLite file's path, or a PostgreSQL database's postgres:// URL
 * with the PG* variables every PostgreSQL tool reads, the one place the two are told apart.
 */

/** The PG* variables every PostgreSQL tool understands, as given to the batch. */
export interface PostgresEnv {
  PGHOST?: string | undefined;
  PGPORT?: string | undefined;
  PGUSER?: string | undefined;
  PGPASSWORD?: string | undefined;
  PGDATABASE?: string | undefined;
  PGSSLMODE?: string | undefined;
}

/**
 * Whether a ledger as named (a flag, an output folder's marker) is a database runners share, by
 * its postgres:// address, rather than a file's path.
 */
export const namesSharedLedger = (text: string): boolean => /^postgres(ql)?:\/\//i.test(text);

/** The ledger a person named: a database by its postgres:// address, else a file's path from `cwd`. */
export function namedLocation(text: string, cwd: string, env: PostgresEnv): LedgerLocation {
  return namesSharedLedger(text) ? postgresLocation(text, env) : fileLocation(resolve(cwd, text));
}

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
