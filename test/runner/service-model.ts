import type { AttemptRecord } from '../../src/ledger/records.js';
import { parseUsd } from '../../src/money.js';

/** Job failure codes the model throws at the runner: every retryable one, final ones, an unknown one. */
export const JOB_CODES = [
  'model_busy',
  'provider_unavailable',
  'processing_failed',
  'timeout',
  'content_rejected',
  'canceled',
  'mystery_code',
] as const;

/** What the service may do with one POST: answers, faults before/after storing, refusals. */
export const ANSWERS = [
  '202',
  '429',
  '500-before',
  '500-after',
  'drop-before',
  'drop-after',
  '400',
  '401',
  '402',
  '409',
  ...JOB_CODES.map((code) => `202-failed:${code}`),
] as const;

export interface ServiceJob {
  id: string;
  key: string;
  itemId: string;
  amount: number;
  refunded: number;
  status: 'queued' | 'succeeded' | 'failed' | 'canceled';
  code: string | null;
}

export type Reply =
  | { type: 'job'; job: ServiceJob }
  | { type: 'lost' }
  | { type: 'http'; status: number; code: string };

/**
 * The service's side, as the interface spec describes it: a known key replays its job; a job
 * is charged when stored and refunded when it fails; HTTP errors create nothing. Authentication
 * comes before the key lookup; with `billingFirst`, so does the wallet check.
 */
export class ServiceModel {
  readonly jobs: ServiceJob[] = [];

  constructor(readonly billingFirst: boolean) {}

  byKey(key: string): ServiceJob | undefined {
    return this.jobs.find((job) => job.key === key);
  }

  post(attempt: AttemptRecord, kind: string, costMicros: number): Reply {
    if (kind === '500-before' || kind === 'drop-before') return { type: 'lost' };
    if (kind === '401') return { type: 'http', status: 401, code: 'invalid_api_key' };
    const lost = kind === '500-after' || kind === 'drop-after';
    const known = this.byKey(attempt.idempotencyKey);
    if (known) {
      if (kind === '402' && this.billingFirst)
        return { type: 'http', status: 402, code: 'insufficient_balance' };
      return lost ? { type: 'lost' } : { type: 'job', job: { ...known } };
    }
    if (kind === '429') return { type: 'http', status: 429, code: 'concurrency_limited' };
    if (kind === '400') return { type: 'http', status: 400, code: 'invalid_parameter' };
    if (kind === '402') return { type: 'http', status: 402, code: 'insufficient_balance' };
    if (kind === '409') return { type: 'http', status: 409, code: 'idempotency_key_reused' };
    const max = JSON.parse(attempt.requestBody).max_cost_usd as string | undefined;
    if (max !== undefined && costMicros > parseUsd(max)!) {
      return { type: 'http', status: 400, code: 'max_cost_exceeded' };
    }
    const failedWith = kind.startsWith('202-failed:') ? kind.slice('202-failed:'.length) : null;
    const job: ServiceJob = {
      id: `job-${this.jobs.length + 1}`,
      key: attempt.idempotencyKey,
      itemId: attempt.itemId,
      amount: costMicros,
      refunded: failedWith === null ? 0 : costMicros,
      status: failedWith === null ? 'queued' : failedWith === 'canceled' ? 'canceled' : 'failed',
      code: failedWith === null || failedWith === 'canceled' ? null : failedWith,
    };
    this.jobs.push(job);
    return lost ? { type: 'lost' } : { type: 'job', job: { ...job } };
  }

  /** A queued job reaches its final state; a failed or canceled one is refunded in full. */
  finish(job: ServiceJob, outcome: string): void {
    if (outcome === 'succeeded') job.status = 'succeeded';
    else {
      job.status = outcome === 'canceled' ? 'canceled' : 'failed';
      job.code = outcome === 'canceled' ? null : outcome;
      job.refunded = job.amount;
    }
  }
}
