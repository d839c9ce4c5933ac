-- The batch's slots in use (claim-queries.ts, openSlots), counted at every admission: a few
-- hundred entries at most, where the index by state read every finished attempt of the batch
-- (a planner that saw only prepared attempts when it last analysed the table scanned it whole).
  CREATE INDEX attempts_open_slots ON attempts (batch_id)
    WHERE state = 'prepared' OR (state = 'accepted' AND job_status IN ('queued', 'running'));
