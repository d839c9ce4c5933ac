import { describe, expect, it } from 'vitest';
import { buildPlanReport } from '../../../src/batch/plan/plan-report.js';
import { buildRequestBody } from '../../../src/runner/request.js';
import type { Account } from '../../../src/service-client/schemas.js';
import { attempt, item, manifest, record } from '../../documents/records.js';

const NOW = Date.parse('2030-01-01T12:00:00.000Z');
const SIX_720 = { seconds: 6, definition: '720p' };
const paidBody = (input: Record<string, unknown>) => ({ input: { prompt: 'old', ...input }, metadata: {} });
/** An accepted, succeeded attempt of an item that is no longer in the manifest: a price and a spend. */
const paid = (micros: number, input: Record<string, unknown> = SIX_720) =>
  attempt({ itemId: 'gone', body: paidBody(input), amountMicros: micros });

const account = (
  fields: { balance?: string; enabled?: boolean; active?: number; limit?: number } = {},
): Account => ({
  object: 'account',
  balance: { amount_usd: fields.balance ?? '100.000000', enabled: fields.enabled ?? true },
  concurrency: { active: fields.active ?? 0, limit: fields.limit ?? 3 },
});

describe('plan report (pure)', () => {
  it('labels each item as run would treat it', () => {
    const items = [
      'fresh',
      'edited',
      'waiting',
      'watching',
      'finished',
      'again',
      'over',
      'gone-out',
      'rejected',
    ].map((id) => item(id, SIX_720));
    const [, edited, waiting, watching, finished, again, over, goneOut, rejected] = items;
    const view = {
      items: [
        record(edited!, 'done', { requestHash: 'older' }),
        record(waiting!, 'in_flight'),
        record(watching!, 'in_flight'),
        record(finished!, 'done'),
        record(again!, 'failed', { errorCode: 'processing_failed', errorMessage: 'boom' }),
        record(over!, 'budget_exceeded', { errorCode: 'budget_exceeded' }),
        record(goneOut!, 'expired'),
        record(rejected!, 'failed', { errorCode: 'content_rejected', errorMessage: 'no' }),
      ],
      attempts: [
        attempt({ itemId: 'waiting', state: 'prepared', jobId: null, reservedMicros: 100_000 }),
        attempt({ itemId: 'watching', jobStatus: 'running', amountMicros: 200_000 }),
        attempt({ itemId: 'finished', filesSaved: true, amountMicros: 200_000 }),
      ],
      files: [],
    };
    const doc = buildPlanReport(manifest(items), view, null, NOW);
    expect(doc.items.map((entry) => [entry.id, entry.plan])).toEqual([
      ['fresh', 'new'],
      ['edited', 'changed'],
      ['waiting', 'in_flight'],
      ['watching', 'in_flight'],
      ['finished', 'done'],
      ['again', 'retry'],
      ['over', 'retry'],
      ['gone-out', 'expired'],
      ['rejected', 'failed'],
    ]);
    expect(doc.items[0]).toEqual({ id: 'fresh', plan: 'new', estimate_usd: '0.200000' });
    expect(doc.items[5]!.reason).toBe(
      'last attempt ended with processing_failed: boom; a re-run tries again with a new key',
    );
    expect(doc.items[6]!.reason).toBe('did not fit in budget_usd last time');
    expect(doc.totals).toMatchObject({
      new: 1,
      changed: 1,
      in_flight: 2,
      done: 1,
      retry: 2,
      expired: 1,
      failed: 1,
    });
    expect(doc.totals.spent_usd).toBe('0.400000');
    expect(doc.totals.reserved_usd).toBe('0.100000');
    expect(doc.totals.estimate_usd).toBe('0.800000');
    expect(doc.account).toBeNull();
  });

  it('an item needs its cap to fit, but spends only its estimated price', () => {
    const capped = item('capped', SIX_720, { maxCostMicros: 900_000 });
    const plain = item('plain', SIX_720);
    const long = item('long', { seconds: 12 }, { maxCostMicros: 900_000 });
    const doc = buildPlanReport(
      manifest([capped, plain, long], 1_200_000),
      { items: [], attempts: [paid(200_000)], files: [] },
      null,
      NOW,
    );
    // left 1.00: capped needs 0.90, spends 0.20 -> 0.80; plain spends 0.20 -> 0.60; long needs 0.90.
    expect(doc.items).toEqual([
      { id: 'capped', plan: 'new', estimate_usd: '0.200000' },
      { id: 'plain', plan: 'new', estimate_usd: '0.200000' },
      {
        id: 'long',
        plan: 'blocked_by_budget',
        reason:
          'reserves its max_cost_usd cap of $0.90 but $0.60 is left of budget_usd (prices seen $0.20): ' +
          'raise budget_usd, or lower max_cost_usd to about $0.20, the prices seen (the cheaper fix)',
        estimate_usd: '0.900000',
      },
    ]);
    expect(doc.totals).toMatchObject({
      budget_left_usd: '1.000000',
      estimate_usd: '0.400000',
      blocked_by_budget: 1,
    });
  });

  it('reserved money counts against the budget and is named in the reason', () => {
    const doc = buildPlanReport(
      manifest([item('a', SIX_720)], 500_000),
      {
        items: [],
        attempts: [
          paid(200_000),
          attempt({ itemId: 'x', state: 'prepared', jobId: null, reservedMicros: 200_000 }),
        ],
        files: [],
      },
      null,
      NOW,
    );
    expect(doc.items[0]).toMatchObject({
      plan: 'blocked_by_budget',
      reason:
        'has no max_cost_usd, so it reserves all that is left of budget_usd, $0.10, which is less than it costs ' +
        '(prices seen $0.20): raise budget_usd; $0.20 reserved by unanswered attempts may free up',
    });
  });

  it('with nothing seen the estimate is unknown; with nothing left an unpriced item is blocked', () => {
    const open = buildPlanReport(
      manifest([item('a', {}), item('b', {})], 1_000_000),
      { items: [], attempts: [], files: [] },
      null,
      NOW,
    );
    expect(open.items.map((entry) => entry.plan)).toEqual(['new', 'new']);
    expect(open.totals.estimate_usd).toBeNull();
    expect(open.warnings).toEqual([
      '2 items to submit have no price seen in the ledger and no max_cost_usd: the cost estimate is unknown',
    ]);
    const held = attempt({ itemId: 'x', state: 'prepared', jobId: null, reservedMicros: 1_000 });
    const full = buildPlanReport(
      manifest([item('a', {})], 1_000),
      { items: [], attempts: [held], files: [] },
      null,
      NOW,
    );
    expect(full.items[0]).toMatchObject({
      plan: 'blocked_by_budget',
      reason:
        'has nothing left of budget_usd to reserve (no price seen yet): raise budget_usd; ' +
        '$0.001 reserved by unanswered attempts may free up',
    });
  });

  it('passes the account through and warns about wallet, balance and concurrency', () => {
    const view = { items: [], attempts: [paid(300_000)], files: [] };
    const items = [item('a', SIX_720), item('b', SIX_720)];
    const healthy = buildPlanReport(
      manifest(items),
      view,
      { baseUrl: 'http://h/v1', ok: true, account: account() },
      NOW,
    );
    expect(healthy.account).toEqual({
      base_url: 'http://h/v1',
      wallet_enabled: true,
      balance_usd: '100.000000',
      concurrency: { active: 0, limit: 3 },
      error: null,
    });
    expect(healthy.warnings).toEqual([]);
    const poor = buildPlanReport(
      manifest(items),
      view,
      {
        baseUrl: 'http://h/v1',
        ok: true,
        account: account({ balance: '0.500000', enabled: false, active: 3, limit: 3 }),
      },
      NOW,
    );
    expect(poor.warnings).toEqual([
      expect.stringMatching(/^the API wallet is disabled/),
      expect.stringMatching(/^the balance \$0\.50 is below the estimate \$0\.60/),
      'the workspace is at its concurrency limit (3/3): run will wait for free slots',
    ]);
  });

  it('an account error is carried in the document, without account warnings', () => {
    const doc = buildPlanReport(
      manifest([item('a', SIX_720)]),
      { items: [], attempts: [], files: [] },
      {
        baseUrl: 'http://h/v1',
        ok: false,
        status: 401,
        code: 'invalid_api_key',
        message: '401 invalid_api_key: bad key',
      },
      NOW,
    );
    expect(doc.account).toEqual({
      base_url: 'http://h/v1',
      wallet_enabled: null,
      balance_usd: null,
      concurrency: null,
      error: { status: 401, code: 'invalid_api_key', message: '401 invalid_api_key: bad key' },
    });
  });

  it('warns about finished outputs that expire within 6 hours', () => {
    const a = item('a', SIX_720);
    const soon = new Date(NOW + 2 * 3600_000).toISOString();
    const doc = buildPlanReport(
      manifest([a]),
      {
        items: [record(a, 'in_flight')],
        attempts: [attempt({ itemId: 'a', jobStatus: 'succeeded', expiresAt: soon, amountMicros: 100_000 })],
        files: [],
      },
      null,
      NOW,
    );
    expect(doc.items[0]!.plan).toBe('in_flight');
    expect(doc.warnings).toEqual([
      expect.stringMatching(/^a: finished output not saved yet expires in 120 min/),
    ]);
  });

  it("an item run will not submit for a file in its way is held back, not priced (namesTaken, run's rule)", () => {
    const [a, b, c] = ['a', 'b', 'c'].map((id) => item(id, SIX_720, { maxCostMicros: 500_000 }));
    const saved = attempt({ itemId: 'c', filesSaved: true, amountMicros: 200_000 });
    const doc = buildPlanReport(
      manifest([a!, b!, c!], 5_000_000),
      {
        // c is done, its file the ledger's; a and b are new, a file nobody recorded holds a's name.
        items: [record(c!, 'done')],
        attempts: [paid(200_000), saved],
        files: [
          { attemptId: saved.id, idx: 0, path: '/work/out/unit/c.mp4', bytes: 1, sha256: 'x', savedAt: '' },
        ],
      },
      null,
      NOW,
      { outputFiles: ['/work/out/unit/a.mp4', '/work/out/unit/c.mp4'] },
    );
    expect(doc.items.map((entry) => [entry.id, entry.plan, entry.estimate_usd])).toEqual([
      ['a', 'held_back', null],
      ['b', 'new', '0.200000'],
      ['c', 'done', null],
    ]);
    expect(doc.items[0]!.reason).toMatch(/a\.mp4 is in the way, a file this ledger did not write/);
    // Only what run submits is priced: b's estimate, b's cap.
    expect(doc.totals).toMatchObject({
      new: 1,
      held_back: 1,
      to_submit: 1,
      estimate_usd: '0.200000',
      at_most_usd: '0.500000',
    });
    expect(doc.warnings).toEqual([
      expect.stringMatching(/^a: run will not submit it: .*a\.mp4 is in the way/),
    ]);
    expect(doc.summary).toMatch(
      /^Plan: 1 new, 1 unchanged, 1 held back \(a file this ledger did not write is in the way\), 1 stray file;/,
    );
  });

  it('an undone edit whose first take is lost: fetched again from its job while the service holds it, else priced', () => {
    const a = item('a', SIX_720, { maxCostMicros: 500_000 });
    const edited = item('a', { ...SIX_720, prompt: 'a green boat' }, { maxCostMicros: 500_000 });
    const plan = (expiresAt: string) => {
      const first = attempt({
        itemId: 'a',
        requestBody: buildRequestBody('unit', a, 1, a.maxCostMicros),
        take: 1,
        filesSaved: true,
        amountMicros: 200_000,
        expiresAt,
      });
      const second = attempt({
        itemId: 'a',
        seq: 2,
        requestBody: buildRequestBody('unit', edited, 2, edited.maxCostMicros),
        take: 2,
        filesSaved: true,
        amountMicros: 200_000,
      });
      const file = (of: typeof first, path: string) => ({
        attemptId: of.id,
        idx: 0,
        path,
        bytes: 1,
        sha256: 'x',
        savedAt: '',
      });
      return buildPlanReport(
        manifest([a]),
        {
          items: [record(edited, 'done', { itemId: 'a' })],
          attempts: [first, second],
          files: [file(first, '/work/out/unit/a.take1.mp4'), file(second, '/work/out/unit/a.mp4')],
        },
        null,
        NOW,
        // The first take's file is altered: no intact take of its request is left.
        { takeIsThere: (take) => take.attemptId !== first.id },
      );
    };
    const held = plan(new Date(NOW + 3600_000).toISOString());
    expect(held.items[0]).toMatchObject({
      id: 'a',
      plan: 'refetch',
      estimate_usd: null,
      reused_from: { item: 'a', take: 1 },
    });
    expect(held.items[0]!.reason).toMatch(
      /^no saved take of its request is intact .*: fetched again as a new take, nothing to pay$/,
    );
    expect(held.totals).toMatchObject({ to_submit: 0, refetch: 1, at_most_usd: '0.000000' });
    // Past its expires_at nothing holds the result: it is bought again, and priced.
    const gone = plan(new Date(NOW - 3600_000).toISOString());
    expect(gone.items[0]).toMatchObject({ id: 'a', plan: 'changed', estimate_usd: '0.200000' });
    expect(gone.totals).toMatchObject({ to_submit: 1 });
  });
});
