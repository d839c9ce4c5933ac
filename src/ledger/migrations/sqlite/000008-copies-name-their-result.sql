-- A paid result is one record (docs/results.md, "The record of a result"): the attempt whose job
-- made the bytes. A copy of it is a take that points at it: `made_by_job` names that job and
-- `copied_from` the key of the take copied. Copies made before this step are found by their key.
  ALTER TABLE attempts ADD COLUMN made_by_job TEXT;
  ALTER TABLE attempts ADD COLUMN copied_from TEXT;
