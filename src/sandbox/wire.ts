import { formatUsd } from '../money.js';
import { jobErrorMessage, type StoredJob, viewJob } from './lifecycle.js';
import type { SandboxStore } from './store.js';

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** Path of a job's n-th file below the origin; shared by the URL builder and the download route. */
export const filePath = (jobId: string, index: number): string =>
  `/v1/files/${encodeURIComponent(jobId)}/${index}`;

/**
 * The job exactly as the service shapes it at `now`, the shape jobSchema in src/api/schemas.ts
 * accepts. URLs are signed afresh on every call, so any fetch of a job hands out a URL valid for
 * the full lifetime.
 */
export function wireJob(
  store: SandboxStore,
  job: StoredJob,
  now: number,
  origin: string,
): Record<string, unknown> {
  const view = viewJob(job, now);
  const expiresMs = now + Math.round(store.config.url_lifetime_seconds * 1000);
  const files = view.outputAvailable
    ? [{ type: 'video', url: `${origin}${filePath(job.id, 0)}?${store.signer.query(job.id, 0, expiresMs)}` }]
    : [];
  return {
    id: job.id,
    object: 'job',
    capability: 'video.generation',
    model: job.model,
    status: view.status,
    input: job.input,
    output: { files },
    cost: { amount_usd: formatUsd(job.amountMicros), refunded_usd: formatUsd(view.refundedMicros) },
    error:
      view.errorCode === null ? null : { code: view.errorCode, message: jobErrorMessage(view.errorCode) },
    metadata: job.metadata,
    created_at: iso(job.createdAt),
    completed_at: iso(view.completedAt),
    expires_at: iso(view.expiresAt),
  };
}
