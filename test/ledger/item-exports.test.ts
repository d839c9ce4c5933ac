import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/ledger/ledger.js';
import { openLedger } from '../../src/ledger/open-ledger.js';
import { all } from '../support/ledger-fixtures.js';
import { tempDir } from '../support/temp.js';

/** One attempt as a test draws it: charged or not, its files saved or not. */
interface DrawnAttempt {
  amount: number;
  refund: number;
  accepted: boolean;
  /** Indexes of the files saved, in the order they were recorded; null: none saved. */
  files: number[] | null;
}

interface DrawnItem {
  /** Whether the items table has a row for it (attempts can exist without one, and the reverse). */
  known: boolean;
  attempts: DrawnAttempt[];
  /** Its attempts' seq numbers count down: the walk meets them in seq order, not in id order. */
  countDown: boolean;
}

const attempt: fc.Arbitrary<DrawnAttempt> = fc.record({
  amount: fc.integer({ min: 0, max: 2_000_000 }),
  refund: fc.integer({ min: 0, max: 2_000_000 }),
  accepted: fc.boolean(),
  files: fc.option(fc.shuffledSubarray([0, 1, 2], { minLength: 1 }), { nil: null }),
});
const item: fc.Arbitrary<DrawnItem> = fc.record({
  known: fc.boolean(),
  attempts: fc.array(attempt, { maxLength: 4 }),
  countDown: fc.boolean(),
});

const open = (path: string): Promise<Ledger> =>
  openLedger({ kind: 'sqlite', path, shown: path }, 'demo', '/m.yaml');

/** Writes the drawn items through the ledger's own API; attempts of all items interleave. */
async function write(ledger: Ledger, items: DrawnItem[]): Promise<void> {
  await ledger.putItems(
    items.flatMap((drawn, i) =>
      drawn.known
        ? [{ itemId: `i${i}`, requestHash: 'h', state: 'failed' as const, errorCode: `e${i}` }]
        : [],
    ),
  );
  const rounds = Math.max(0, ...items.map((drawn) => drawn.attempts.length));
  for (let round = 1; round <= rounds; round += 1) {
    for (const [i, drawn] of items.entries()) {
      const a = drawn.attempts[round - 1];
      if (!a) continue;
      const seq = drawn.countDown ? 10 - round : round;
      const body = { input: { prompt: `p${i}.${seq}`, n: seq }, model: `m${seq}` };
      const prepared = await ledger.prepareAttempt({
        itemId: `i${i}`,
        seq,
        idempotencyKey: `k${i}.${seq}`,
        requestBody: JSON.stringify(body),
        requestHash: 'h',
        reservedMicros: 0,
      });
      if (a.accepted) {
        await ledger.recordAccepted(prepared.id, 202, {
          jobId: `job${i}.${seq}`,
          status: 'succeeded',
          amountMicros: a.amount,
          refundedMicros: Math.min(a.refund, a.amount),
          errorCode: null,
          errorMessage: null,
          expiresAt: null,
          completedAt: `t${seq}`,
        });
      }
      if (a.files) {
        const files = a.files.map((idx) => ({
          idx,
          path: `/o/${i}.${seq}.${idx}`,
          bytes: idx,
          sha256: `s${idx}`,
        }));
        await ledger.recordFilesSaved(prepared.id, files);
      }
    }
  }
}

/** What export must say of each id, worked out from the ledger's plain listings. */
async function expected(ledger: Ledger, ids: string[]) {
  const items = await ledger.listItems();
  const attempts = await ledger.listAttempts();
  const files = await ledger.listFiles();
  return ids.map((id) => {
    const row = items.find((each) => each.itemId === id);
    const own = attempts.filter((each) => each.itemId === id);
    const saved = own.filter((each) => files.some((file) => file.attemptId === each.id));
    const newest = (list: typeof own) =>
      list.reduce<(typeof own)[number] | null>(
        (best, each) => (best === null || each.id > best.id ? each : best),
        null,
      );
    const standing = newest(saved) ?? newest(own);
    const standingFiles = files
      .filter((file) => standing !== null && file.attemptId === standing.id)
      .sort((a, b) => a.idx - b.idx)
      .map(({ idx, path, sha256, bytes }) => ({ idx, path, sha256, bytes }));
    return {
      itemId: id,
      state: row?.state ?? null,
      errorCode: row?.errorCode ?? null,
      attempts: own.length,
      netMicros: own.reduce((sum, each) => sum + each.amountMicros - each.refundedMicros, 0),
      prompt: standing
        ? (JSON.parse(standing.requestBody) as { input: { prompt: string } }).input.prompt
        : null,
      jobId: standing?.jobId ?? null,
      files: standingFiles,
    };
  });
}

describe('itemExports', () => {
  it('gives each id, in the order asked, its count, net cost and standing attempt', async () => {
    const dir = tempDir('mediabatch-exports-');
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(item, { maxLength: 6 }),
        fc.integer({ min: 0, max: 3 }),
        async (items, unknown) => {
          run += 1;
          const ledger = await open(join(dir, `${run}.sqlite`));
          try {
            await write(ledger, items);
            // Asked in reverse, with ids the ledger has never seen mixed in.
            const ids = [
              ...items.map((_, i) => `i${i}`),
              ...Array.from({ length: unknown }, (_, i) => `x${i}`),
            ];
            ids.reverse();
            const got = (await all(ledger.itemExports(ids))).map((row) => ({
              itemId: row.itemId,
              state: row.state,
              errorCode: row.errorCode,
              attempts: row.attempts,
              netMicros: row.netMicros,
              prompt: row.prompt,
              jobId: row.jobId,
              files: row.files,
            }));
            expect(got).toEqual(await expected(ledger, ids));
          } finally {
            await ledger.close();
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('finds the paid items not asked for, in id order; with them, the net costs add up to the spend', async () => {
    const dir = tempDir('mediabatch-exports-');
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(item, { maxLength: 6 }),
        fc.array(fc.boolean(), { maxLength: 6 }),
        async (items, kept) => {
          run += 1;
          const ledger = await open(join(dir, `${run}.sqlite`));
          try {
            await write(ledger, items);
            // The manifest now names some of the items, and one the ledger has never seen.
            const ids = [...items.map((_, i) => `i${i}`).filter((_, i) => kept[i] ?? false), 'new'];
            const attempts = await ledger.listAttempts();
            const paid = new Set(
              attempts.filter((a) => a.amountMicros > 0 || a.filesSaved).map((a) => a.itemId),
            );
            const removed = await ledger.paidItemsNotIn(ids);
            expect(removed).toEqual([...paid].filter((id) => !ids.includes(id)).sort());
            const rows = [
              ...(await all(ledger.itemExports(ids))),
              ...(await all(ledger.itemExports(removed))),
            ];
            const net = rows.reduce((sum, row) => sum + row.netMicros, 0);
            const totals = await ledger.moneyTotals();
            expect(net).toBe(totals.chargedMicros - totals.refundedMicros);
            // An item that saved files shows them, whether the manifest still names it or not.
            const saved = new Set(attempts.filter((a) => a.filesSaved).map((a) => a.itemId));
            for (const id of saved)
              expect(rows.find((row) => row.itemId === id)?.files.length).toBeGreaterThan(0);
          } finally {
            await ledger.close();
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('reads the input sent, less its prompt, and the variables, as JSON text', async () => {
    const ledger = await open(join(tempDir('mediabatch-exports-'), 'l.sqlite'));
    await ledger.prepareAttempt({
      itemId: 'a',
      seq: 1,
      idempotencyKey: 'k',
      requestBody: JSON.stringify({ input: { seconds: 2, prompt: 'p', style: 'noir' }, model: 'm' }),
      requestHash: 'h',
      reservedMicros: 0,
      vars: '{"x":"1"}',
    });
    expect(await all(ledger.itemExports(['a']))).toEqual([
      expect.objectContaining({
        prompt: 'p',
        input: '{"seconds":2,"style":"noir"}',
        model: 'm',
        vars: '{"x":"1"}',
      }),
    ]);
    expect(await all(ledger.itemExports([]))).toEqual([]);
    await ledger.close();
  });
});
