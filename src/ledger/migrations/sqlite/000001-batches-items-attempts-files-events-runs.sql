-- The first schema: batches, their items, attempts (one per request sent), saved files, the
-- append-only event log and runs. Money columns are integer micro-dollars.
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
