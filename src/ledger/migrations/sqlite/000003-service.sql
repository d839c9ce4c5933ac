-- The service the ledger belongs to (docs/services.md): its jobs, spend and files are that
-- service's, so running it against another one would take them for results there. One row.
  CREATE TABLE service (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    identity  TEXT NOT NULL,
    bound_at  TEXT NOT NULL
  );
