import type { ColumnType, Generated } from 'kysely';
import type { AttemptState, ItemState } from './records.js';

/**
 * The ledger's tables as Kysely sees them: one description for both databases (migrations.ts,
 * dialect/postgres-schema.ts). Money is integer micro-dollars, times are ISO text. A few columns
 * exist in one database only, and only that database's steps touch them: PostgreSQL keeps the
 * service on the batch's row, leases on items, heartbeats on runs and the service's creation time
 * of jobs; SQLite keeps the service in a table of one row.
 */
export interface Tables {
  batches: BatchesTable;
  items: ItemsTable;
  attempts: AttemptsTable;
  files: FilesTable;
  events: EventsTable;
  runs: RunsTable;
  keepers: KeepersTable;
  take_checks: TakeChecksTable;
  /** SQLite only. */
  service: ServiceTable;
  /** PostgreSQL only, as the three below. */
  job_looks: JobLooksTable;
  job_views: JobViewsTable;
  batch_definitions: BatchDefinitionsTable;
}

/** A timestamp PostgreSQL's clock writes (leases, heartbeats): set by SQL, read as a Date. */
type DatabaseTime = ColumnType<Date | null, never, unknown>;

export interface BatchesTable {
  id: Generated<number>;
  name: string;
  manifest_path: string;
  created_at: string;
  service_identity: ColumnType<string | null, string | null | undefined, string | null>;
  service_bound_at: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface ItemsTable {
  batch_id: number;
  item_id: string;
  request_hash: string;
  state: ItemState;
  retries_used: Generated<number>;
  error_code: string | null;
  error_message: string | null;
  updated_at: string;
  claimed_by: ColumnType<string | null, string | null | undefined, unknown>;
  lease_until: DatabaseTime;
}

export interface AttemptsTable {
  id: Generated<number>;
  batch_id: number;
  item_id: string;
  seq: number;
  idempotency_key: string;
  request_body: string;
  request_hash: string;
  reserved_micros: Generated<number>;
  state: AttemptState;
  http_status: ColumnType<number | null, number | null | undefined, number | null>;
  http_code: ColumnType<string | null, string | null | undefined, string | null>;
  job_id: ColumnType<string | null, string | null | undefined, string | null>;
  job_status: ColumnType<string | null, string | null | undefined, string | null>;
  amount_micros: Generated<number>;
  refunded_micros: Generated<number>;
  error_code: ColumnType<string | null, string | null | undefined, string | null>;
  error_message: ColumnType<string | null, string | null | undefined, string | null>;
  expires_at: ColumnType<string | null, string | null | undefined, string | null>;
  files_saved: Generated<number>;
  created_at: string;
  answered_at: ColumnType<string | null, string | null | undefined, string | null>;
  completed_at: ColumnType<string | null, string | null | undefined, string | null>;
  take: Generated<number>;
  vars: ColumnType<string | null, string | null | undefined, string | null>;
  /** A copy's result: the job that made its bytes (the attempt it copies has it, or points at it). */
  made_by_job: ColumnType<string | null, string | null | undefined, string | null>;
  /** A copy's source: the idempotency key of the take it copied. */
  copied_from: ColumnType<string | null, string | null | undefined, string | null>;
  /** PostgreSQL only: when the service created the job (the lister's starting point). */
  job_created_at: ColumnType<string | null, string | null | undefined, unknown>;
}

export interface FilesTable {
  attempt_id: number;
  idx: number;
  path: string;
  bytes: number;
  sha256: string;
  saved_at: string;
  mtime_ms: number | null;
}

export interface EventsTable {
  id: Generated<number>;
  at: string;
  batch_id: number;
  item_id: string | null;
  attempt_id: number | null;
  kind: string;
  detail: string | null;
}

export interface RunsTable {
  id: Generated<number>;
  batch_id: number;
  pid: number;
  /** PostgreSQL only, as heartbeat_at. */
  runner: ColumnType<string | null, string | null | undefined, string | null>;
  started_at: string;
  ended_at: string | null;
  exit_code: number | null;
  heartbeat_at: DatabaseTime;
}

export interface KeepersTable {
  batch_id: number;
  item_id: string;
  kept_item_id: string;
  take: number;
  chosen_at: string;
}

export interface TakeChecksTable {
  attempt_id: number;
  outcome: 'passed' | 'failed' | 'unchecked';
  reason: string | null;
  video: string | null;
  checked_at: string;
}

export interface ServiceTable {
  id: number;
  identity: string;
  bound_at: string;
}

export interface JobLooksTable {
  batch_id: number;
  runner: string;
  looked_at: DatabaseTime;
}

export interface JobViewsTable {
  batch_id: number;
  job_id: string;
  status: string | null;
  job: string | null;
  seen_at: DatabaseTime;
}

export interface BatchDefinitionsTable {
  batch_id: number;
  revision: number;
  hash: string;
  definition: string;
  budget_micros: number | null;
  defined_at: string;
  defined_by: string | null;
}
