import { describe, expect, it } from 'vitest';
import { auditFindings, auditSums, jobProblems, maxCostOf } from '../../../src/commands/audit/audit-rules.js';
import type { AttemptRecord } from '../../../src/ledger/records.js';
import type { Job } from '../../../src/service-client/schemas.js';

function job(id: string, status: Job['status'], amount: string, refunded: string, metadata = {}): Job {
  return {
    id,
    object: 'job',
    capability: 'video.generation',
    model: 'acme-video-2',
    status,
    input: { prompt: 'p' },
    output: { files: [] },
    cost: { amount_usd: amount, refunded_usd: refunded },
    error: status === 'failed' ? { code: 'processing_failed', message: 'Generation failed.' } : null,
    metadata: { 'mediabatch.manifest': 'm', 'mediabatch.item': 'x', ...metadata },
    created_at: '2026-11-24T00:00:00.000Z',
    completed_at: status === 'queued' || status === 'running' ? null : '2026-11-24T00:01:00.000Z',
    expires_at: null,
  };
}

function attempt(jobId: string, fields: Partial<AttemptRecord> = {}): AttemptRecord {
  return {
    id: 1,
    itemId: 'x',
    seq: 1,
    idempotencyKey: `key-${jobId}`,
    requestBody: JSON.stringify({ input: { prompt: 'p' }, max_cost_usd: '0.500000' }),
    requestHash: 'h',
    reservedMicros: 500_000,
    state: 'accepted',
    httpStatus: 202,
    httpCode: null,
    jobId,
    jobStatus: 'failed',
    amountMicros: 400_000,
    refundedMicros: 400_000,
    errorCode: null,
    errorMessage: null,
    expiresAt: null,
    filesSaved: false,
    createdAt: '2026-11-24T00:00:00.000Z',
    answeredAt: null,
    completedAt: null,
    ...fields,
  };
}

describe('audit rules', () => {
  it('a failed or canceled job refunded in full is fine; one left charged owes the difference', () => {
    expect(jobProblems(job('job_a', 'failed', '0.400000', '0.400000'), attempt('job_a'), null)).toEqual([]);
    expect(jobProblems(job('job_b', 'canceled', '0.400000', '0.400000'), null, null)).toEqual([]);
    const [missing] = jobProblems(
      job('job_c', 'failed', '0.400000', '0.100000'),
      attempt('job_c', { refundedMicros: 100_000 }),
      'req_1',
    );
    expect(missing).toMatchObject({ kind: 'refund_missing', amountMicros: 300_000, requestId: 'req_1' });
    // A succeeded job keeps its charge, as it should.
    expect(jobProblems(job('job_d', 'succeeded', '0.400000', '0.000000'), null, null)).toEqual([]);
  });

  it('a charge over the max_cost_usd its request sent is owed back, above the cap', () => {
    const over = jobProblems(
      job('job_a', 'succeeded', '0.600000', '0.000000'),
      attempt('job_a', { jobStatus: 'succeeded', amountMicros: 600_000, refundedMicros: 0 }),
      null,
    );
    expect(over.map((p) => [p.kind, p.amountMicros, p.maxCostMicros])).toEqual([
      ['over_max_cost', 100_000, 500_000],
    ]);
    expect(maxCostOf('{"input":{}}')).toBeNull();
    expect(maxCostOf('not json')).toBeNull();
  });

  it('a final job the ledger recorded otherwise is flagged with the difference; an unfinished record is not', () => {
    const seen = job('job_a', 'failed', '0.400000', '0.400000');
    const differs = jobProblems(seen, attempt('job_a', { refundedMicros: 0 }), null);
    expect(differs.map((p) => [p.kind, p.amountMicros])).toEqual([['ledger_differs', -400_000]]);
    expect(jobProblems(seen, attempt('job_a', { jobStatus: 'running', refundedMicros: 0 }), null)).toEqual(
      [],
    );
  });

  it('sums both sides, flags jobs only one side knows, and counts other clients apart', () => {
    const findings = auditFindings(
      [
        {
          attempt: attempt('job_a'),
          answer: { kind: 'found', job: job('job_a', 'failed', '0.400000', '0.400000'), requestId: null },
        },
        {
          attempt: attempt('job_b', { jobStatus: 'succeeded', refundedMicros: 0 }),
          answer: { kind: 'found', job: job('job_b', 'succeeded', '0.400000', '0.000000'), requestId: null },
        },
        {
          attempt: attempt('job_gone', { jobStatus: 'succeeded', refundedMicros: 0 }),
          answer: { kind: 'not_found', requestId: 'r' },
        },
      ],
      {
        unrecorded: [job('job_new', 'queued', '0.200000', '0.000000')],
        others: [job('job_theirs', 'failed', '1.000000', '0.000000', { 'mediabatch.manifest': 'other' })],
      },
      800_000,
    );
    expect(findings.problems.map((p) => [p.kind, p.jobId, p.amountMicros])).toEqual([
      ['not_on_service', 'job_gone', 400_000],
      ['not_in_ledger', 'job_new', 200_000],
    ]);
    expect(findings.serviceNetMicros).toBe(600_000);
    expect(findings.ledgerNetMicros).toBe(800_000);
    expect(findings.jobs).toEqual({ ledger: 3, found: 2, unrecorded: 1, unfinished: 1 });
    // Another client's failed job left charged is counted, never flagged.
    expect(findings.others).toEqual({ jobs: 1, netMicros: 1_000_000 });
    expect(auditSums(findings.problems)).toEqual({ owedMicros: 0, unexplainedMicros: 600_000 });
  });
});
