import type { JobSnapshot } from '../ledger/index.js';
import { parseUsdStrict } from '../money.js';
import type { Job } from '../service-client/schemas.js';

export function jobSnapshot(job: Job): JobSnapshot {
  return {
    jobId: job.id,
    status: job.status,
    amountMicros: parseUsdStrict(job.cost.amount_usd),
    refundedMicros: parseUsdStrict(job.cost.refunded_usd),
    errorCode: job.status === 'canceled' ? (job.error?.code ?? 'canceled') : (job.error?.code ?? null),
    errorMessage: job.error?.message ?? null,
    expiresAt: job.expires_at,
    completedAt: job.completed_at,
    createdAt: job.created_at,
  };
}

/** The code that decides what happens to an item whose job ended without success. */
export function failureCode(job: Job): string {
  if (job.status === 'canceled') return 'canceled';
  return job.error?.code ?? 'unknown';
}
