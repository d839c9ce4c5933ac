import { CompiledQuery, sql } from 'kysely';
import type { LedgerDatabase } from './database.js';

/**
 * The PostgreSQL ledger's schema, versioned like the SQLite one (migrations.ts): applied in
 * order, each step committed with its number in mediabatch_schema, never edited once released.
 * One database holds many batches, each known by its manifest's name; money is integer
 * micro-dollars (bigint); times are ISO text, as in SQLite, apart from the leases, which the
 * database's own clock judges so that runners on machines with skewed clocks agree.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE batches (
    id               bigserial PRIMARY KEY,
    name             text NOT NULL UNIQUE,
    manifest_path    text NOT NULL,
    created_at       text NOT NULL,
    service_identity text,
    service_bound_at text
  );
  CREATE TABLE items (
    batch_id      bigint NOT NULL REFERENCES batches(id),
    item_id       text NOT NULL,
    request_hash  text NOT NULL,
    state         text NOT NULL CHECK (state IN ('pending','in_flight','done','failed','budget_exceeded','expired')),
    retries_used  integer NOT NULL DEFAULT 0,
    error_code    text,
    error_message text,
    updated_at    text NOT NULL,
    claimed_by    text,
    lease_until   timestamptz,
    PRIMARY KEY (batch_id, item_id)
  );
  CREATE INDEX items_claims ON items (batch_id, claimed_by);
  CREATE TABLE attempts (
    id              bigserial PRIMARY KEY,
    batch_id        bigint NOT NULL REFERENCES batches(id),
    item_id         text NOT NULL,
    seq             integer NOT NULL,
    idempotency_key text NOT NULL,
    request_body    text NOT NULL,
    request_hash    text NOT NULL,
    reserved_micros bigint NOT NULL DEFAULT 0,
    state           text NOT NULL CHECK (state IN ('prepared','accepted','rejected')),
    http_status     integer,
    http_code       text,
    job_id          text,
    job_status      text,
    amount_micros   bigint NOT NULL DEFAULT 0,
    refunded_micros bigint NOT NULL DEFAULT 0,
    error_code      text,
    error_message   text,
    expires_at      text,
    files_saved     integer NOT NULL DEFAULT 0,
    created_at      text NOT NULL,
    answered_at     text,
    completed_at    text,
    take            integer NOT NULL DEFAULT 1,
    vars            text,
    UNIQUE (batch_id, idempotency_key),
    UNIQUE (batch_id, job_id),
    UNIQUE (batch_id, item_id, seq)
  );
  CREATE INDEX attempts_open ON attempts (batch_id, state, job_status);
  CREATE INDEX attempts_item ON attempts (batch_id, item_id, seq);
  CREATE TABLE files (
    attempt_id bigint NOT NULL REFERENCES attempts(id),
    idx        integer NOT NULL,
    path       text NOT NULL,
    bytes      bigint NOT NULL,
    sha256     text NOT NULL,
    saved_at   text NOT NULL,
    mtime_ms   bigint,
    PRIMARY KEY (attempt_id, idx)
  );
  CREATE TABLE events (
    id         bigserial PRIMARY KEY,
    at         text NOT NULL,
    batch_id   bigint NOT NULL,
    item_id    text,
    attempt_id bigint,
    kind       text NOT NULL,
    detail     text
  );
  CREATE INDEX events_batch ON events (batch_id, id);
  CREATE FUNCTION mediabatch_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'the event log is append-only'; END $$;
  CREATE TRIGGER events_append_only BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION mediabatch_events_append_only();
  CREATE TABLE runs (
    id           bigserial PRIMARY KEY,
    batch_id     bigint NOT NULL REFERENCES batches(id),
    pid          integer NOT NULL,
    runner       text,
    started_at   text NOT NULL,
    ended_at     text,
    exit_code    integer,
    heartbeat_at timestamptz
  );
  `,
  // Keepers (docs/gallery.md): which take of each manifest item a person chose; migrations.ts's
  // keepers table in PostgreSQL's types.
  `
  CREATE TABLE keepers (
    batch_id     bigint NOT NULL REFERENCES batches(id),
    item_id      text NOT NULL,
    kept_item_id text NOT NULL,
    take         integer NOT NULL,
    chosen_at    text NOT NULL,
    PRIMARY KEY (batch_id, item_id)
  );
  `,
  // One lister per batch (docs/shared-ledger.md, "One lister"): the runner that looked at the
  // service's job list last, and what it saw of the other runners' jobs, for them to read.
  `
  ALTER TABLE attempts ADD COLUMN job_created_at text;
  CREATE TABLE job_looks (
    batch_id  bigint PRIMARY KEY REFERENCES batches(id),
    runner    text NOT NULL,
    looked_at timestamptz NOT NULL
  );
  CREATE TABLE job_views (
    batch_id bigint NOT NULL REFERENCES batches(id),
    job_id   text NOT NULL,
    status   text,
    job      text,
    seen_at  timestamptz NOT NULL,
    PRIMARY KEY (batch_id, job_id)
  );
  `,
  // One definition per batch (docs/shared-ledger.md): the expanded manifest every runner of the
  // batch runs, one row per revision, the highest current; its budget binds admission.
  `
  CREATE TABLE batch_definitions (
    batch_id      bigint NOT NULL REFERENCES batches(id),
    revision      integer NOT NULL,
    hash          text NOT NULL,
    definition    text NOT NULL,
    budget_micros bigint,
    defined_at    text NOT NULL,
    defined_by    text,
    PRIMARY KEY (batch_id, revision)
  );
  `,
  // Keys in byte order (COLLATE "C"), whatever the database's own collation: the streamed reads
  // page by item id in SQLite's order of its keys (paging.ts), and need an index to start a page
  // from the last key without sorting the batch.
  `
  CREATE INDEX items_key ON items (batch_id, item_id COLLATE "C");
  CREATE INDEX attempts_key ON attempts (batch_id, item_id COLLATE "C", seq);
  `,
  // A copy points at its result (migrations.ts, the same step): the job that made its bytes and the
  // key of the take copied, filled in for copies made before from their keys.
  `
  ALTER TABLE attempts ADD COLUMN made_by_job text;
  ALTER TABLE attempts ADD COLUMN copied_from text;
  UPDATE attempts c SET copied_from = s.idempotency_key
    FROM attempts s
   WHERE c.idempotency_key LIKE 'reused:%'
     AND s.id = split_part(c.idempotency_key, ':', 2)::bigint;
  WITH RECURSIVE up (copy_id, source_id) AS (
    SELECT id, split_part(idempotency_key, ':', 2)::bigint FROM attempts WHERE idempotency_key LIKE 'reused:%'
    UNION ALL
    SELECT up.copy_id, split_part(a.idempotency_key, ':', 2)::bigint
      FROM up JOIN attempts a ON a.id = up.source_id
     WHERE a.idempotency_key LIKE 'reused:%'
  )
  UPDATE attempts c SET made_by_job = a.job_id
    FROM up JOIN attempts a ON a.id = up.source_id
   WHERE c.id = up.copy_id AND a.job_id IS NOT NULL;
  `,
  // Checks of saved outputs (docs/checks.md): migrations.ts's take_checks, and the item state
  // `checks_failed`.
  `
  CREATE TABLE take_checks (
    attempt_id bigint PRIMARY KEY REFERENCES attempts(id),
    outcome    text NOT NULL CHECK (outcome IN ('passed','failed','unchecked')),
    reason     text,
    video      text,
    checked_at text NOT NULL
  );
  ALTER TABLE items DROP CONSTRAINT items_state_check;
  ALTER TABLE items ADD CONSTRAINT items_state_check
    CHECK (state IN ('pending','in_flight','done','failed','budget_exceeded','expired','checks_failed'));
  `,
  // Checks of your own (docs/checks.md): migrations.ts's score and checks of take_checks.
  `
  ALTER TABLE take_checks ADD COLUMN score double precision;
  ALTER TABLE take_checks ADD COLUMN checks text;
  `,
  // The batch's slots in use (claim-queries.ts, openSlots), counted at every admission: a few
  // hundred entries at most, where the index by state read every finished attempt of the batch
  // (a planner that saw only prepared attempts when it last analysed the table scanned it whole).
  `
  CREATE INDEX attempts_open_slots ON attempts (batch_id)
    WHERE state = 'prepared' OR (state = 'accepted' AND job_status IN ('queued', 'running'));
  `,
];

export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

/** Any fixed number: the advisory lock that lets one runner at a time migrate a shared database. */
const MIGRATION_LOCK = 727_001;

/** Brings the database to POSTGRES_SCHEMA_VERSION; runners starting together wait for each other. */
export async function migratePostgres(db: LedgerDatabase): Promise<void> {
  await db.transaction(async (tx) => {
    const [, , found] = await tx.run([
      sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`.compile(db.q),
      CompiledQuery.raw(
        'CREATE TABLE IF NOT EXISTS mediabatch_schema (version integer NOT NULL, applied_at text NOT NULL)',
      ),
      CompiledQuery.raw('SELECT MAX(version) AS version FROM mediabatch_schema'),
    ]);
    const current = Number(found!.rows[0]?.version ?? 0);
    if (current > POSTGRES_SCHEMA_VERSION)
      throw new Error(
        `ledger schema version ${current} is newer than this mediabatch understands (${POSTGRES_SCHEMA_VERSION})`,
      );
    const steps: CompiledQuery[] = [];
    for (let version = current; version < POSTGRES_SCHEMA_VERSION; version += 1)
      steps.push(
        // Without values: sent as one text, its several statements together.
        CompiledQuery.raw(MIGRATIONS[version]!),
        sql`INSERT INTO mediabatch_schema (version, applied_at) VALUES (${version + 1}, ${new Date().toISOString()})`.compile(
          db.q,
        ),
      );
    await tx.run(steps, true);
  });
}

/** The tables and columns a database has (a read-only look never migrates it), as `table` and `table.column`. */
export async function postgresColumns(db: LedgerDatabase): Promise<Set<string>> {
  const rows = await db.read(
    sql<{ t: string; c: string }>`SELECT table_name AS t, column_name AS c FROM information_schema.columns
      WHERE table_schema = current_schema()`.compile(db.q),
  );
  return new Set(rows.flatMap((row) => [row.t, `${row.t}.${row.c}`]));
}
