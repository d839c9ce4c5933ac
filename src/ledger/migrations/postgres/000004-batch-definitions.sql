-- One definition per batch (docs/shared-ledger.md): the expanded manifest every runner of the
-- batch runs, one row per revision, the highest current; its budget binds admission.
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
