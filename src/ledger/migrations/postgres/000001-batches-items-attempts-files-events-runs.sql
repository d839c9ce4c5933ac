-- The first schema: one database holds many batches, each known by its manifest's name; items
-- carry a runner's lease and runs a heartbeat. Money is integer micro-dollars (bigint); times are
-- ISO text, as in SQLite, apart from the leases, which the database's own clock judges.
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
