import type { JobSnapshot } from '../../src/ledger/records.js';

/** What the ledger contract tests (test/ledger/contract*.test.ts) write through either ledger. */

export const T0 = '2026-01-02T03:04:05.000Z';

export function job(jobId: string, fields: Partial<JobSnapshot> = {}): JobSnapshot {
  return {
    jobId,
    status: 'queued',
    amountMicros: 0,
    refundedMicros: 0,
    errorCode: null,
    errorMessage: null,
    expiresAt: null,
    completedAt: null,
    ...fields,
  };
}

export function body(prompt: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    model: 'm1',
    input: { prompt, seconds: 5, ...extra },
    mediabatch: { item: prompt },
  });
}

export function newAttempt(itemId: string, seq: number, fields: { reserved?: number; take?: number } = {}) {
  return {
    itemId,
    seq,
    idempotencyKey: `${itemId}.${seq}`,
    requestBody: body(`${itemId} ${seq}`),
    requestHash: `h-${itemId}`,
    reservedMicros: fields.reserved ?? 0,
    ...(fields.take ? { take: fields.take } : {}),
  };
}

/** Every row of a streamed read, in order. */
export async function all<T>(rows: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const row of rows) out.push(row);
  return out;
}
