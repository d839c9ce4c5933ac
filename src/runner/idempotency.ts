import { randomUUID } from 'node:crypto';
import type { AttemptRecord } from '../ledger/index.js';
import type { MediaGenClient } from '../service-client/client.js';
import type { Job } from '../service-client/schemas.js';

/**
 * The whole life of an idempotency key, which is what keeps a resend from paying twice:
 * 1. created once per attempt (`newIdempotencyKey`) and committed to the ledger with the exact
 *    request body before the first POST;
 * 2. resent, with that same body, after every answer that does not decide the attempt (no answer,
 *    a 500, a 429), in this run and in any later run;
 * 3. past the service's key memory (`keyMayBeForgotten`), never resent blindly: the job it may have
 *    created is looked for first (`findJobOfAttempt`);
 * 4. retired when an answer decides the attempt (a job, or an HTTP error that proves none exists):
 *    a later attempt of the item gets a new key.
 */

export function newIdempotencyKey(): string {
  return `mb_${randomUUID()}`;
}

/** The service may forget keys after a day; an hour's margin keeps a resend on the safe side. */
export const KEY_MEMORY_MS = 23 * 60 * 60 * 1000;

export function keyMayBeForgotten(attempt: AttemptRecord, now: number): boolean {
  return now - Date.parse(attempt.createdAt) > KEY_MEMORY_MS;
}

/** Whether a listed job is the one an attempt created, by the metadata every request carries. */
export function isJobOfAttempt(job: Job, manifestName: string, attempt: AttemptRecord): boolean {
  return (
    job.metadata['mediabatch.manifest'] === manifestName &&
    job.metadata['mediabatch.item'] === attempt.itemId &&
    job.metadata['mediabatch.attempt'] === String(attempt.seq)
  );
}

/** Looks through jobs created since shortly before the attempt for the one it created. */
export async function findJobOfAttempt(
  client: MediaGenClient,
  manifestName: string,
  attempt: AttemptRecord,
): Promise<Job | null> {
  // An hour before the attempt's record tolerates a clock skew between us and the service.
  const since = new Date(Date.parse(attempt.createdAt) - 60 * 60 * 1000).toISOString();
  for await (const page of client.listJobPages({ created_after: since, limit: 100 })) {
    const job = page.data.data.find((candidate) => isJobOfAttempt(candidate, manifestName, attempt));
    if (job) return job;
  }
  return null;
}
