import type { BatchJob, JobView } from '../ledger.js';
import type { PgLedgerConnection } from './pg-ledger-connection.js';

/**
 * The batch's one lister (docs/shared-ledger.md, "One lister"): the look at the service's job list
 * is a lease of one turn, held by the runner that looked last and taken over by any runner once
 * nobody looked for a turn (its lister died, ended, or has nothing to follow). What it saw of the
 * other runners' jobs is kept in job_views for them to read, instead of each listing the
 * workspace's jobs, everyone's among them, on its own. The database's clock judges the turn.
 */

/** Takes the batch's look when this runner took the last one or nobody took one within `turnMs`. */
export function takeLook(c: PgLedgerConnection, runnerId: string, turnMs: number): BatchJob[] | null {
  const taken = c.db.query(
    `INSERT INTO job_looks (batch_id, runner, looked_at) VALUES ($1, $2, now())
       ON CONFLICT (batch_id) DO UPDATE SET runner = excluded.runner, looked_at = excluded.looked_at
       WHERE job_looks.runner = $2
          OR job_looks.looked_at < now() - make_interval(secs => $3::double precision / 1000)
       RETURNING 1`,
    [c.batchId, runnerId, turnMs],
  );
  if (taken.length === 0) return null;
  return c.db.query<BatchJob>(
    `SELECT job_id AS "jobId", job_created_at AS "createdAt", created_at AS "preparedAt" FROM attempts
      WHERE batch_id = $1 AND state = 'accepted' AND job_status IN ('queued', 'running')`,
    [c.batchId],
  );
}

/**
 * Lets the look go at once (the runner ends or has nothing to follow), if this runner holds it, and
 * drops the views their runners have read since its last write: at the batch's end no lister comes
 * after it to drop them, and their output URLs need not stay.
 */
export function releaseLook(c: PgLedgerConnection, runnerId: string): void {
  c.db.query(
    `WITH read AS (
       DELETE FROM job_views v WHERE v.batch_id = $1 AND NOT EXISTS (
         SELECT 1 FROM attempts a WHERE a.batch_id = $1 AND a.job_id = v.job_id
            AND a.state = 'accepted' AND a.job_status IN ('queued', 'running')))
     DELETE FROM job_looks WHERE batch_id = $1 AND runner = $2`,
    [c.batchId, runnerId],
  );
}

/**
 * One statement: drops the views of jobs no longer unfinished in the ledger (their runner read
 * them and recorded the job final: their output URLs need not stay), then writes the new ones. A
 * view of a final job is never replaced, so a lister that lost its turn mid-look cannot put an
 * older state over a newer one.
 */
export function publishViews(
  c: PgLedgerConnection,
  views: readonly JobView[],
  unfinished: readonly string[],
): void {
  c.db.query(
    `WITH gone AS (DELETE FROM job_views WHERE batch_id = $1 AND job_id <> ALL($2::text[]))
     INSERT INTO job_views (batch_id, job_id, status, job, seen_at)
       SELECT $1, v.job_id, v.status, v.job, now()
         FROM unnest($3::text[], $4::text[], $5::text[]) AS v(job_id, status, job)
       ON CONFLICT (batch_id, job_id) DO UPDATE
         SET status = excluded.status, job = excluded.job, seen_at = excluded.seen_at
         WHERE job_views.status IN ('queued', 'running')`,
    [
      c.batchId,
      unfinished,
      views.map((view) => view.jobId),
      views.map((view) => view.status),
      views.map((view) => view.job),
    ],
  );
}

export function jobViews(c: PgLedgerConnection, jobIds: readonly string[]): JobView[] {
  if (jobIds.length === 0) return [];
  return c.db.query<JobView>(
    `SELECT job_id AS "jobId", status, job FROM job_views WHERE batch_id = $1 AND job_id = ANY($2::text[])`,
    [c.batchId, jobIds],
  );
}
