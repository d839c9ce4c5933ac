import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import pg from 'pg';
import type { SandboxHandle } from '../../../src/sandbox/index.js';

/** The shared ledger's rows, read with plain SQL, independently of the ledger under test. */
export interface SharedRows {
  items: Array<{ item_id: string; state: string }>;
  attempts: Array<{
    id: number;
    item_id: string;
    idempotency_key: string;
    state: string;
    job_id: string | null;
    amount_micros: number;
    refunded_micros: number;
  }>;
  files: Array<{ attempt_id: number; path: string; sha256: string }>;
}

export async function readSharedLedger(url: string, batch: string): Promise<SharedRows> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const id = (await client.query('SELECT id FROM batches WHERE name = $1', [batch])).rows[0]?.id;
    const rows = async <T>(sql: string) => (await client.query(sql, [id])).rows as T[];
    const num = <T extends Record<string, unknown>>(row: T) =>
      Object.fromEntries(
        Object.entries(row).map(([k, v]) => [
          k,
          typeof v === 'string' && /_micros$|^id$|^attempt_id$/.test(k) ? Number(v) : v,
        ]),
      ) as T;
    return {
      items: await rows('SELECT item_id, state FROM items WHERE batch_id = $1'),
      attempts: (
        await rows<SharedRows['attempts'][number]>(
          `SELECT id, item_id, idempotency_key, state, job_id, amount_micros, refunded_micros
             FROM attempts WHERE batch_id = $1 ORDER BY id`,
        )
      ).map(num),
      files: (
        await rows<SharedRows['files'][number]>(
          'SELECT f.attempt_id, f.path, f.sha256 FROM files f JOIN attempts a ON a.id = f.attempt_id WHERE a.batch_id = $1',
        )
      ).map(num),
    };
  } finally {
    await client.end();
  }
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/**
 * What must hold once several runners finished a batch together: returns the violations. Money
 * and jobs are the service's own records; files are the bytes on disk. `failedHonestly` names the
 * items the caller proved failed on the service (every job failed, retries ran out): those must
 * end failed with no net charge; every other item done with exactly one.
 */
export function sharedViolations(
  sandbox: SandboxHandle,
  rows: SharedRows,
  batch: {
    name: string;
    dir: string;
    budgetMicros: number;
    concurrency: number;
    failedHonestly?: ReadonlySet<string>;
  },
): string[] {
  const problems: string[] = [];
  const records = sandbox.records();
  const jobs = records.jobs.filter((job) => job.metadata['mediabatch.manifest'] === batch.name);
  const conflicts = records.requests.filter((request) => request.status === 409);
  if (conflicts.length > 0) problems.push(`the service answered 409 to ${conflicts.length} request(s)`);
  const failedHonestly = batch.failedHonestly ?? new Set<string>();
  const endOf = (itemId: string) => (failedHonestly.has(itemId) ? 'failed' : 'done');
  const wrongEnd = rows.items.filter((item) => item.state !== endOf(item.item_id));
  if (wrongEnd.length > 0)
    problems.push(`items not done: ${wrongEnd.map((item) => `${item.item_id}=${item.state}`)}`);
  // Exactly one net charge per done item, and nothing charged that is not done.
  const net = new Map<string, number>();
  for (const job of jobs) {
    if (job.amountMicros - job.refundedMicros <= 0) continue;
    const item = String(job.metadata['mediabatch.item']);
    net.set(item, (net.get(item) ?? 0) + 1);
  }
  for (const item of rows.items)
    if ((net.get(item.item_id) ?? 0) !== (endOf(item.item_id) === 'done' ? 1 : 0))
      problems.push(`${item.item_id} has ${net.get(item.item_id) ?? 0} net-charged jobs`);
  // The budget at every moment of the service's charge timeline: charges first at equal times.
  const moments = jobs.flatMap((job) => [
    { at: Date.parse(job.createdAt), delta: job.amountMicros, order: 0 },
    ...(job.completedAt && job.refundedMicros > 0
      ? [{ at: Date.parse(job.completedAt), delta: -job.refundedMicros, order: 1 }]
      : []),
  ]);
  moments.sort((a, b) => a.at - b.at || a.order - b.order);
  let spent = 0;
  for (const moment of moments) {
    spent += moment.delta;
    if (spent > batch.budgetMicros)
      problems.push(`the service held ${spent} net at ${moment.at}, over the budget`);
  }
  // Never more unfinished jobs of the batch at once than its concurrency.
  const spans = jobs.flatMap((job) => [
    { at: Date.parse(job.createdAt), delta: 1, order: 1 },
    { at: job.completedAt ? Date.parse(job.completedAt) : Number.POSITIVE_INFINITY, delta: -1, order: 0 },
  ]);
  spans.sort((a, b) => a.at - b.at || a.order - b.order);
  let open = 0;
  let most = 0;
  for (const span of spans) {
    open += span.delta;
    most = Math.max(most, open);
  }
  if (most > batch.concurrency)
    problems.push(`${most} jobs of the batch ran at once, concurrency ${batch.concurrency}`);
  // Every saved file is whole and is what its job served.
  const jobsById = new Map(jobs.map((job) => [job.id, job]));
  const attempts = new Map(rows.attempts.map((attempt) => [attempt.id, attempt]));
  for (const file of rows.files) {
    const path = isAbsolute(file.path) ? file.path : join(batch.dir, file.path);
    const bytes = existsSync(path) ? readFileSync(path) : null;
    const job = jobsById.get(attempts.get(file.attempt_id)?.job_id ?? '');
    if (bytes === null || sha256(bytes) !== file.sha256) problems.push(`${file.path} is missing or altered`);
    else if (job?.files[0]?.sha256 !== file.sha256) problems.push(`${file.path} is not what its job served`);
  }
  // Every job traces back to an attempt the ledger committed before its POST.
  const keys = new Set(rows.attempts.map((attempt) => attempt.idempotency_key));
  for (const job of jobs)
    if (!keys.has(job.idempotencyKey)) problems.push(`job ${job.id} has a key no attempt has`);
  return problems;
}
