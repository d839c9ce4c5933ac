import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AttemptRecord, ItemRecord } from '../../src/ledger/records.js';
import { planItem, retriesCarried } from '../../src/runner/item-plan.js';
import { decideSubmitError, refusalSettlesAttempt } from '../../src/runner/policy.js';
import { apiError, type ItemSpec, World, type WorldConfig } from './decision-model.js';
import { blankItem, LedgerModel } from './ledger-model.js';
import { ANSWERS, JOB_CODES } from './service-model.js';

/**
 * Model-based test of the runner's decision core: random service answers, job outcomes, crashes
 * (after any durable write, or between steps) and re-runs, applied through the pure functions.
 * What must hold after every step is checked in `checkInvariants`; the `World` itself throws when
 * a new key or a resend breaks the rules.
 */
type Cmd = fc.Command<object, World>;

function checkInvariants(world: World): void {
  const netJobs = new Map<string, number>();
  let serviceNet = 0;
  for (const job of world.service.jobs) {
    const net = job.amount - job.refunded;
    serviceNet += net;
    if (net > 0) netJobs.set(job.itemId, (netJobs.get(job.itemId) ?? 0) + 1);
  }
  for (const [item, count] of netJobs)
    if (count > 1) throw new Error(`${item} has ${count} net-charged jobs`);
  const { budgetMicros, spentMicros, reservedMicros } = world.budgetState();
  if (budgetMicros !== null && spentMicros + reservedMicros > budgetMicros)
    throw new Error(`spent ${spentMicros} + reserved ${reservedMicros} > budget ${budgetMicros}`);
  if (budgetMicros !== null && serviceNet > budgetMicros)
    throw new Error(`the service charged ${serviceNet} net > budget ${budgetMicros}`);
  // Under a budget every request carries a cap and reserves it, so the ledger bounds the service.
  if (budgetMicros !== null && serviceNet > spentMicros + reservedMicros)
    throw new Error(
      `the service charged ${serviceNet} net; the ledger knows ${spentMicros} + ${reservedMicros}`,
    );
  for (const [itemId, record] of world.ledger.items) {
    if (record.state !== 'done') continue;
    const latest = world.ledger.attempts.filter((a) => a.itemId === itemId).at(-1);
    if (!latest?.filesSaved || netJobs.get(itemId) !== 1)
      throw new Error(`${itemId} done without its one job`);
  }
}

/** Answers stop being transient: every POST is answered, every job succeeds, runs follow re-runs. */
function settle(world: World): void {
  world.ledger.crashAfterWrites = null;
  let reruns = 0;
  for (let round = 0; round < 500; round++) {
    world.fillSlots();
    for (const id of [...world.posting.keys()]) world.answer(id, '202');
    for (const job of world.service.jobs) if (job.status === 'queued') world.service.finish(job, 'succeeded');
    world.poll();
    for (const id of [...world.downloads]) world.download(id);
    checkInvariants(world);
    const idle =
      world.unfinished === 0 && world.downloads.size === 0 && (world.stop || world.queue.length === 0);
    if (!idle) continue;
    const open = [...world.ledger.items.values()].filter(
      (record) => !['done', 'failed', 'budget_exceeded'].includes(record.state),
    );
    if (open.length === 0 && world.ledger.items.size === world.config.items.length) return;
    if (++reruns > 3) throw new Error(`items never final: ${open.map((r) => `${r.itemId}:${r.state}`)}`);
    world.crash(false); // the user runs it again
  }
  throw new Error('no quiescence after 500 rounds');
}

function checkBooks(world: World): void {
  let charged = 0;
  let refunded = 0;
  for (const job of world.service.jobs) {
    charged += job.amount;
    refunded += job.refunded;
  }
  const ledgerCharged = world.ledger.attempts.reduce((sum, a) => sum + a.amountMicros, 0);
  const ledgerRefunded = world.ledger.attempts.reduce((sum, a) => sum + a.refundedMicros, 0);
  expect({ charged: ledgerCharged, refunded: ledgerRefunded }).toEqual({ charged, refunded });
  expect(world.ledger.attempts.filter((a) => a.state === 'prepared')).toEqual([]);
}

const step = (name: string, act: (world: World) => void): Cmd => ({
  check: () => true,
  run: (_model, world) => {
    act(world);
    checkInvariants(world);
    // The run loop offers free slots to waiting items after every event.
    world.guard(() => world.fillSlots());
    checkInvariants(world);
  },
  toString: () => name,
});

const pick = <T>(values: readonly T[], index: number): T | undefined =>
  values[index % Math.max(1, values.length)];

/** A kill may strike right after the first or second durable write of a step, or not at all. */
const crashArb = fc.option(fc.integer({ min: 1, max: 2 }), { nil: null, freq: 2 });
const crashing = (w: World, after: number | null, act: () => void, deliver = false) => {
  w.ledger.crashAfterWrites = after;
  w.guard(act, deliver);
  w.ledger.crashAfterWrites = null;
};
const killed = (after: number | null) => (after === null ? '' : `, kill after write ${after}`);

const answerArb = fc
  .tuple(fc.nat(), fc.constantFrom(...ANSWERS), fc.boolean(), crashArb)
  .map(([n, answer, deliver, after]) =>
    step(`answer(${n}, ${answer}${killed(after)})`, (w) => {
      const id = pick([...w.posting.keys()], n);
      if (id !== undefined) crashing(w, after, () => w.answer(id, answer), deliver);
    }),
  );

const finishArb = fc
  .tuple(fc.nat(), fc.constantFrom('succeeded', 'succeeded', ...JOB_CODES))
  .map(([n, outcome]) =>
    step(`finish(${n}, ${outcome})`, (w) => {
      const job = pick(
        w.service.jobs.filter((j) => j.status === 'queued'),
        n,
      );
      if (job) w.service.finish(job, outcome);
    }),
  );

/** Answers weigh most: they are where the decisions are. */
const commandArbs = [
  answerArb,
  answerArb,
  answerArb,
  finishArb,
  finishArb,
  crashArb.map((after) => step(`poll(${killed(after)})`, (w) => crashing(w, after, () => w.poll()))),
  fc.tuple(fc.nat(), crashArb).map(([n, after]) =>
    step(`download(${n}${killed(after)})`, (w) => {
      const id = pick([...w.downloads], n);
      if (id !== undefined) crashing(w, after, () => w.download(id));
    }),
  ),
  fc.boolean().map((deliver) => step(`crash(deliver=${deliver})`, (w) => w.crash(deliver))),
];

const configArb: fc.Arbitrary<WorldConfig> = fc
  .record({
    items: fc.array(
      fc.record({
        cost: fc.integer({ min: 1, max: 5 }),
        cap: fc.option(fc.integer({ min: 0, max: 6 }), { nil: null }),
      }),
      { minLength: 1, maxLength: 4 },
    ),
    budget: fc.option(fc.integer({ min: 0, max: 25 }), { nil: null }),
    retries: fc.integer({ min: 0, max: 3 }),
    slotLimit: fc.integer({ min: 1, max: 3 }),
    billingFirst: fc.boolean(),
  })
  .map(({ items, budget, retries, slotLimit, billingFirst }) => ({
    items: items.map(
      (item, index): ItemSpec => ({
        id: `item-${index}`,
        hash: `hash-${index}`,
        costMicros: item.cost * 10_000,
        capMicros: item.cap === null ? null : item.cap * 10_000,
      }),
    ),
    budgetMicros: budget === null ? null : budget * 10_000,
    retries,
    slotLimit,
    billingFirst,
  }));

describe('runner decision core, model-based', () => {
  it('never pays twice, resends with the same key, keeps to retries and budget, and settles every item', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(configArb, fc.commands(commandArbs, { maxCommands: 80 }), (config, commands) => {
        const world = new World(config);
        fc.modelRun(() => ({ model: {}, real: world }), commands);
        settle(world);
        checkBooks(world);
        for (const path of world.seen) seen.add(path);
        for (const record of world.ledger.items.values())
          seen.add(`${record.state}:${record.errorCode ?? ''}`);
      }),
      { numRuns: Number(process.env.RUNS ?? 1000) },
    );
    // The generated histories reach every interesting path, so the properties are not vacuous.
    for (const path of [
      'crash',
      'resubmission',
      'refusal-kept-attempt-open',
      'done:',
      'budget_exceeded:budget_exceeded',
      'failed:retries_exhausted',
      'failed:idempotency_key_reused',
      'failed:content_rejected',
      'failed:max_cost_exceeded',
      'failed:invalid_parameter',
    ])
      expect(seen).toContain(path);
  });
});

describe('the rules the model found missing', () => {
  const refusal = (status: number, code: string) => decideSubmitError(apiError(status, code), 0, () => 0, 1);
  const attemptWith = (patch: Partial<AttemptRecord>): AttemptRecord => ({
    ...new LedgerModel().prepare('a', 'h', 1, 0, null),
    ...patch,
  });
  const item = (patch: Partial<ItemRecord>): ItemRecord => ({ ...blankItem('a', 'h'), ...patch });

  it('a 401 or 402 settles an attempt only when no earlier send of its key went unanswered', () => {
    for (const [status, code] of [
      [401, 'invalid_api_key'],
      [402, 'insufficient_balance'],
    ] as const) {
      expect(refusalSettlesAttempt(refusal(status, code), false)).toBe(true);
      expect(refusalSettlesAttempt(refusal(status, code), true)).toBe(false);
    }
    expect(refusalSettlesAttempt(refusal(400, 'invalid_parameter'), true)).toBe(true);
    expect(refusalSettlesAttempt(refusal(409, 'idempotency_key_reused'), true)).toBe(true);
  });

  it('a 409 recorded just before a kill fails the item on the re-run instead of a new key', () => {
    const rejected = attemptWith({ state: 'rejected', httpStatus: 409, httpCode: 'idempotency_key_reused' });
    expect(planItem('h', item({ state: 'in_flight' }), rejected, { regenerateExpired: false })).toEqual({
      label: 'failed',
      action: 'skip',
      code: 'idempotency_key_reused',
    });
  });

  it('an item a killed run left mid-way keeps its used retries; a final one starts afresh', () => {
    const failedJob = attemptWith({ state: 'accepted', jobStatus: 'failed' });
    const midway = item({ state: 'pending', retriesUsed: 2 });
    expect(retriesCarried(planItem('h', midway, failedJob, { regenerateExpired: false }), midway)).toBe(2);
    const exhausted = item({ state: 'failed', retriesUsed: 2, errorCode: 'retries_exhausted' });
    expect(retriesCarried(planItem('h', exhausted, failedJob, { regenerateExpired: false }), exhausted)).toBe(
      0,
    );
  });
});
