-- One lister per batch (docs/shared-ledger.md, "One lister"): the runner that looked at the
-- service's job list last, and what it saw of the other runners' jobs, for them to read.
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
