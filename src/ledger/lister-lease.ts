import { sql } from 'kysely';
import type { Statement } from './dialect/database.js';
import type { BatchJob, JobView } from './ledger.js';
import type { LedgerContext } from './ledger-context.js';

/**
 * The batch's one lister (docs/shared-ledger.md, "One lister"): the lister lease, the right to look at
 * the service's job list for the batch, lasts one turn; held by the runner that looked last and
 * taken over by any runner once nobody looked for a turn (its lister died, ended, or has nothing to follow). What it saw of the
 * other runners' jobs is kept in job_views for them to read, instead of each listing the
 * workspace's jobs, everyone's among them, on its own. The database's clock judges the turn.
 * PostgreSQL only: a ledger one run holds has no other runners to list for.
 */

const UNFINISHED = sql<boolean>`a.state = 'accepted' AND a.job_status IN ('queued', 'running')`;

/**
 * Takes the batch's lister lease when this runner took the last one or nobody took one within `turnMs`,
 * and reads the batch's unfinished jobs if it did: one round trip. The lease taken now has the
 * transaction's own time (now()), which no other runner's can have.
 */
export async function takeListerLease(
  c: LedgerContext,
  runnerId: string,
  turnMs: number,
): Promise<BatchJob[] | null> {
  const [taken, jobs] = await c.db.batch([
    sql`INSERT INTO job_looks (batch_id, runner, looked_at) VALUES (${c.batchId}, ${runnerId}, now())
      ON CONFLICT (batch_id) DO UPDATE SET runner = excluded.runner, looked_at = excluded.looked_at
      WHERE job_looks.runner = ${runnerId}
         OR job_looks.looked_at < now() - make_interval(secs => cast(${turnMs} as double precision) / 1000)
      RETURNING 1`.compile(c.q),
    sql<BatchJob>`SELECT a.job_id AS "jobId", a.job_created_at AS "createdAt", a.created_at AS "preparedAt"
      FROM attempts a WHERE a.batch_id = ${c.batchId} AND ${UNFINISHED}
        AND EXISTS (SELECT 1 FROM job_looks l WHERE l.batch_id = ${c.batchId} AND l.runner = ${runnerId}
                    AND l.looked_at = now())`.compile(c.q),
  ]);
  return taken!.rows.length === 0 ? null : (jobs!.rows as BatchJob[]);
}

/**
 * Lets the lister lease go (the runner ends or has nothing to follow), if this runner holds it, and drops
 * the views their runners have read since its last write: at the batch's end no lister comes
 * after it to drop them, and their output URLs need not stay. One statement.
 */
export function releaseListerLeaseStatement(c: LedgerContext, runnerId: string): Statement {
  return sql`WITH read AS (
      DELETE FROM job_views v WHERE v.batch_id = ${c.batchId} AND NOT EXISTS (
        SELECT 1 FROM attempts a WHERE a.batch_id = ${c.batchId} AND a.job_id = v.job_id AND ${UNFINISHED}))
    DELETE FROM job_looks WHERE batch_id = ${c.batchId} AND runner = ${runnerId}`.compile(c.q);
}

/**
 * One statement: drops the views of jobs no longer unfinished in the ledger (their runner read
 * them and recorded the job final: their output URLs need not stay), then writes the new ones. A
 * view of a final job is never replaced, so a lister that lost its turn mid-look cannot put an
 * older state over a newer one.
 */
export async function publishViews(
  c: LedgerContext,
  views: readonly JobView[],
  unfinished: readonly string[],
): Promise<void> {
  const column = (pick: (view: JobView) => string) => views.map(pick);
  await c.db.batch([
    sql`WITH gone AS (DELETE FROM job_views WHERE batch_id = ${c.batchId} AND job_id <> ALL(cast(${[...unfinished]} as text[])))
      INSERT INTO job_views (batch_id, job_id, status, job, seen_at)
        SELECT ${c.batchId}, v.job_id, v.status, v.job, now()
          FROM unnest(cast(${column((v) => v.jobId)} as text[]), cast(${column((v) => v.status)} as text[]),
                      cast(${column((v) => v.job)} as text[])) AS v(job_id, status, job)
        ON CONFLICT (batch_id, job_id) DO UPDATE
          SET status = excluded.status, job = excluded.job, seen_at = excluded.seen_at
          WHERE job_views.status IN ('queued', 'running')`.compile(c.q),
  ]);
}

/** The lister's views of these jobs, those it has published. */
export async function jobViews(c: LedgerContext, jobIds: readonly string[]): Promise<JobView[]> {
  if (jobIds.length === 0) return [];
  return c.db.read(
    c.q
      .selectFrom('job_views')
      .select(['job_id as jobId', 'status', 'job'])
      .where('batch_id', '=', c.batchId)
      .where('job_id', 'in', jobIds)
      .compile(),
  ) as Promise<JobView[]>;
}
