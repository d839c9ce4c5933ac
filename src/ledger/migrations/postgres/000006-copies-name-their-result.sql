-- A copy points at its result (migrations.ts, the same step): the job that made its bytes and the
-- key of the take copied, filled in for copies made before from their keys.
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
