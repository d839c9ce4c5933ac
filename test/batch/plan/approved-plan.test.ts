import { describe, expect, it } from 'vitest';
import { type ApprovedPlan, planDifferences, planHash } from '../../../src/batch/plan/approved-plan.js';

function approved(fields: Partial<ApprovedPlan> = {}): ApprovedPlan {
  const body = {
    format: 'mediabatch-plan/1' as const,
    manifest: 'm',
    manifest_sha256: 'a'.repeat(64),
    settings: { budget_usd: '1.000000', concurrency: null, retries: 2 },
    asked: { retry_failed: false, regenerate_expired: false },
    ledger: { spent_usd: '0.000000', refunded_usd: '0.000000', reserved_usd: '0.000000' },
    items: [
      { id: 'a', plan: 'new' as const, request_hash: 'h1', expected_usd: '0.400000' },
      { id: 'b', plan: 'new' as const, request_hash: 'h2', expected_usd: null },
    ],
    to_submit: 2,
    total_at_most_usd: '1.000000',
    ...fields,
  };
  return { ...body, plan_sha256: planHash(body) };
}

describe('approved plans', () => {
  it("hashes the plan's fields but its own, the same for the same plan whatever the key order", () => {
    const plan = approved();
    const reordered = Object.fromEntries(Object.entries(plan).reverse()) as unknown as ApprovedPlan;
    expect(planHash(reordered)).toBe(plan.plan_sha256);
    expect(planHash({ ...plan, total_at_most_usd: '2.000000' })).not.toBe(plan.plan_sha256);
  });

  it('finds nothing between a plan and itself', () => {
    expect(planDifferences(approved(), approved())).toEqual([]);
  });

  it('names what changed: the manifest and its settings, the choices, the ledger, items and prices', () => {
    const now = approved({
      manifest_sha256: 'b'.repeat(64),
      settings: { budget_usd: '2.000000', concurrency: null, retries: 2 },
      asked: { retry_failed: true, regenerate_expired: false },
      ledger: { spent_usd: '0.400000', refunded_usd: '0.000000', reserved_usd: '0.000000' },
      items: [
        { id: 'a', plan: 'new', request_hash: 'h1', expected_usd: '0.500000' },
        { id: 'b', plan: 'new', request_hash: 'other', expected_usd: null },
        { id: 'c', plan: 'new', request_hash: 'h3', expected_usd: null },
      ],
    });
    expect(planDifferences(approved(), now)).toEqual([
      'the manifest changed (budget_usd)',
      'the plan was made without `retryFailed`',
      'the ledger moved since: spent $0.00 then, $0.40 now',
      'items added: c',
      'items changed: b',
      'prices known to the ledger changed: a ($0.40 then, $0.50 now)',
    ]);
    const done = approved({
      items: [{ id: 'a', plan: 'done', request_hash: 'h1', expected_usd: '0.400000' }],
    });
    expect(planDifferences(approved(), done)).toEqual([
      'items removed: b',
      'items planned otherwise: a (new then, done now)',
    ]);
  });
});
