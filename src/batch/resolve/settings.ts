import { UserError } from '../../errors.js';
import { DEFAULT_LEASE_MS, DEFAULT_RECONNECT_MS, type PostgresEnv } from '../../ledger/index.js';

/**
 * Every environment variable the library reads, read once when a batch is resolved (the
 * environment an API call was given, else the process's) into typed settings. Nothing else in
 * the library reads an environment variable: a given `env` reaches every part, the S3 store and
 * the --on-complete hook included.
 */
export interface BatchSettings {
  baseUrl: string | null;
  /** Never written to a ledger, log, error, event or file. */
  apiKey: string | null;
  httpTimeoutMs: number | null;
  preflightWindowMs: number;
  modelBusyDelayMs: number | null;
  notifyUrl: string | null;
  notifySecret: string | null;
  notifyWindowMs: number;
  /** The variables an S3 store is configured from (AWS_*, MEDIABATCH_S3_ADDRESSING). */
  storageEnv: NodeJS.ProcessEnv;
  /** What an --on-complete command inherits: the environment without the secrets. */
  hookEnv: Record<string, string>;
  /** PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE, PGSSLMODE: a shared ledger's missing parts. */
  postgresEnv: PostgresEnv;
  /** A shared ledger's lease: a dead runner's items are adopted this long after its last renewal. */
  leaseMs: number;
  /** How long a run waits for a shared ledger's database that stopped answering. */
  reconnectWithinMs: number;
}

const DEFAULT_PREFLIGHT_SECONDS = 30;
const DEFAULT_NOTIFY_SECONDS = 60;

/** Secrets a hook must never inherit. */
const SECRET_VARIABLES = ['MEDIAGEN_API_KEY', 'MEDIABATCH_NOTIFY_SECRET', 'PGPASSWORD'];

const POSTGRES_VARIABLES = ['PGHOST', 'PGPORT', 'PGUSER', 'PGPASSWORD', 'PGDATABASE', 'PGSSLMODE'] as const;

/** The variables read as a positive number of seconds, each with where it goes. */
const SECONDS_VARIABLES = [
  ['MEDIABATCH_HTTP_TIMEOUT', 'httpTimeoutMs'],
  ['MEDIABATCH_PREFLIGHT_SECONDS', 'preflightWindowMs'],
  ['MEDIABATCH_MODEL_BUSY_SECONDS', 'modelBusyDelayMs'],
  ['MEDIABATCH_NOTIFY_SECONDS', 'notifyWindowMs'],
  ['MEDIABATCH_LEASE_SECONDS', 'leaseMs'],
  ['MEDIABATCH_LEDGER_WAIT_SECONDS', 'reconnectWithinMs'],
] as const;

export function readSettings(env: NodeJS.ProcessEnv): BatchSettings {
  const millis = Object.fromEntries(
    SECONDS_VARIABLES.map(([name, field]) => [field, positiveMillis(env[name], name)]),
  ) as Record<(typeof SECONDS_VARIABLES)[number][1], number | null>;
  const hookEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    if (value !== undefined && !SECRET_VARIABLES.includes(name)) hookEnv[name] = value;
  const storageEnv: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env))
    if (name.startsWith('AWS_') || name === 'MEDIABATCH_S3_ADDRESSING') storageEnv[name] = value;
  return {
    baseUrl: env.MEDIAGEN_BASE_URL || null,
    apiKey: env.MEDIAGEN_API_KEY || null,
    httpTimeoutMs: millis.httpTimeoutMs,
    preflightWindowMs: millis.preflightWindowMs ?? DEFAULT_PREFLIGHT_SECONDS * 1000,
    modelBusyDelayMs: millis.modelBusyDelayMs,
    notifyUrl: env.MEDIABATCH_NOTIFY_URL || null,
    notifySecret: env.MEDIABATCH_NOTIFY_SECRET || null,
    notifyWindowMs: millis.notifyWindowMs ?? DEFAULT_NOTIFY_SECONDS * 1000,
    storageEnv,
    hookEnv,
    postgresEnv: Object.fromEntries(POSTGRES_VARIABLES.map((name) => [name, env[name] || undefined])),
    leaseMs: millis.leaseMs ?? DEFAULT_LEASE_MS,
    reconnectWithinMs: millis.reconnectWithinMs ?? DEFAULT_RECONNECT_MS,
  };
}

/** A positive number of seconds, in milliseconds; null when not given. */
export function positiveMillis(text: string | undefined, name: string): number | null {
  if (text === undefined || text === '') return null;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new UserError(`${name} must be a positive number of seconds, got '${text}'`, 'setting_invalid');
  return value * 1000;
}
