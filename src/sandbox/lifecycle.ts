import type { JobStatus } from '../service-client/schemas.js';
import type { ClipShape } from './mp4.js';

export type FinalStatus = 'succeeded' | 'failed' | 'canceled';

/**
 * A job's whole future is fixed when it is accepted: when it starts running, when it ends and how.
 * Its state at any moment is then a pure function of the clock, so tests can jump the injected
 * clock forward and no timer has to fire for a job to progress.
 */
export interface StoredJob {
  /** Creation order; breaks ties between jobs created in the same millisecond. */
  seq: number;
  id: string;
  workspaceId: string;
  apiKeyId: number;
  idempotencyKey: string;
  bodyHash: string;
  prompt: string;
  model: string;
  input: Record<string, unknown>;
  metadata: Record<string, unknown>;
  amountMicros: number;
  createdAt: number;
  startAt: number;
  finalAt: number;
  outcome: { status: FinalStatus; code: string | null };
  /** A failed or canceled job left charged (the `refund_missing` fault): its refund never comes. */
  refundWithheld?: boolean;
  retentionMs: number;
  /**
   * The clip its output is, fixed at acceptance so that a later change of the configured defaults
   * cannot change a job's bytes; absent from jobs of state files written before clips had shapes.
   */
  clip?: ClipShape;
}

export interface JobView {
  status: JobStatus;
  final: boolean;
  refundedMicros: number;
  errorCode: string | null;
  completedAt: number | null;
  expiresAt: number | null;
  /** The output files can still be fetched (succeeded and within retention). */
  outputAvailable: boolean;
}

export interface Timeline {
  startAt: number;
  finalAt: number;
  outcome: { status: FinalStatus; code: string | null };
}

/**
 * Places a job on the clock. A job still unfinished `timeoutMs` after creation fails with `timeout`
 * at exactly that moment, whatever outcome it would otherwise have had.
 */
export function planTimeline(
  createdAt: number,
  plan: { queuedMs: number; runningMs: number; outcome: { status: FinalStatus; code: string | null } },
  timeoutMs: number,
): Timeline {
  const startAt = createdAt + plan.queuedMs;
  const endAt = startAt + plan.runningMs;
  const timeoutAt = createdAt + timeoutMs;
  if (endAt > timeoutAt) {
    return {
      startAt: Math.min(startAt, timeoutAt),
      finalAt: timeoutAt,
      outcome: { status: 'failed', code: 'timeout' },
    };
  }
  return { startAt, finalAt: endAt, outcome: plan.outcome };
}

export function viewJob(job: StoredJob, now: number): JobView {
  if (now < job.finalAt) {
    return {
      status: now < job.startAt ? 'queued' : 'running',
      final: false,
      refundedMicros: 0,
      errorCode: null,
      completedAt: null,
      expiresAt: null,
      outputAvailable: false,
    };
  }
  const { status, code } = job.outcome;
  const expiresAt = job.finalAt + job.retentionMs;
  return {
    status,
    final: true,
    refundedMicros: refundOf(job),
    errorCode: status === 'failed' ? (code ?? 'processing_failed') : null,
    completedAt: job.finalAt,
    expiresAt,
    outputAvailable: status === 'succeeded' && now < expiresAt,
  };
}

/** What a final job gives back: all of its charge when it failed or was canceled, unless withheld. */
export function refundOf(job: StoredJob): number {
  return job.outcome.status === 'succeeded' || job.refundWithheld === true ? 0 : job.amountMicros;
}

const ERROR_MESSAGES: Record<string, string> = {
  model_busy: 'The provider is at capacity. Resubmit with a new key after about 30 seconds.',
  content_rejected: 'The provider rejected the input or output during moderation.',
  provider_unavailable: 'The provider returned an error or timed out.',
  processing_failed: 'Generation failed.',
  timeout: 'No result after the job time limit.',
};

export function jobErrorMessage(code: string): string {
  return ERROR_MESSAGES[code] ?? `The job failed (${code}).`;
}
