-- Checks of saved outputs (docs/checks.md): each take's outcome against its request, and the
-- item state `checks_failed` for an item none of whose takes passed. SQLite cannot change a
-- CHECK constraint in place, so items is rebuilt with its rows.
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
