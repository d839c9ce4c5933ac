import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SqliteLedger as Ledger } from '../../src/ledger/sqlite-ledger.js';
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

/** Writes the drawn items through the ledger's own API; attempts of all items interleave. */
function write(ledger: Ledger, items: DrawnItem[]): void {
  ledger.putItems(
    items.flatMap((drawn, i) =>
      drawn.known
        ? [{ itemId: `i${i}`, requestHash: 'h', state: 'failed' as const, errorCode: `e${i}` }]
        : [],
    ),
  );
  const rounds = Math.max(0, ...items.map((drawn) => drawn.attempts.length));
  for (let round = 1; round <= rounds; round += 1) {
    items.forEach((drawn, i) => {
      const a = drawn.attempts[round - 1];
      if (!a) return;
      const seq = drawn.countDown ? 10 - round : round;
      const body = { input: { prompt: `p${i}.${seq}`, n: seq }, model: `m${seq}` };
      const prepared = ledger.prepareAttempt({
        itemId: `i${i}`,
        seq,
        idempotencyKey: `k${i}.${seq}`,
        requestBody: JSON.stringify(body),
        requestHash: 'h',
        reservedMicros: 0,
      });
      if (a.accepted) {
        ledger.recordAccepted(prepared.id, 202, {
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
        ledger.recordFilesSaved(prepared.id, files);
      }
    });
  }
}

/** What export must say of each id, worked out from the ledger's plain listings. */
function expected(ledger: Ledger, ids: string[]) {
  const items = ledger.listItems();
  const attempts = ledger.listAttempts();
  const files = ledger.listFiles();
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
  it('gives each id, in the order asked, its count, net cost and standing attempt', () => {
    const dir = tempDir('mediabatch-exports-');
    let run = 0;
    fc.assert(
      fc.property(fc.array(item, { maxLength: 6 }), fc.integer({ min: 0, max: 3 }), (items, unknown) => {
        run += 1;
        const ledger = Ledger.open(join(dir, `${run}.sqlite`), 'demo', '/m.yaml');
        try {
          write(ledger, items);
          // Asked in reverse, with ids the ledger has never seen mixed in.
          const ids = [
            ...items.map((_, i) => `i${i}`),
            ...Array.from({ length: unknown }, (_, i) => `x${i}`),
          ];
          ids.reverse();
          const got = [...ledger.itemExports(ids)].map((row) => ({
            itemId: row.itemId,
            state: row.state,
            errorCode: row.errorCode,
            attempts: row.attempts,
            netMicros: row.netMicros,
            prompt: row.prompt,
            jobId: row.jobId,
            files: row.files,
          }));
          expect(got).toEqual(expected(ledger, ids));
        } finally {
          ledger.close();
        }
      }),
      { numRuns: 60 },
    );
  });

  it('finds the paid items not asked for, in id order; with them, the net costs add up to the spend', () => {
    const dir = tempDir('mediabatch-exports-');
    let run = 0;
    fc.assert(
      fc.property(
        fc.array(item, { maxLength: 6 }),
        fc.array(fc.boolean(), { maxLength: 6 }),
        (items, kept) => {
          run += 1;
          const ledger = Ledger.open(join(dir, `${run}.sqlite`), 'demo', '/m.yaml');
          try {
            write(ledger, items);
            // The manifest now names some of the items, and one the ledger has never seen.
            const ids = [...items.map((_, i) => `i${i}`).filter((_, i) => kept[i] ?? false), 'new'];
            const paid = new Set(
              ledger
                .listAttempts()
                .filter((a) => a.amountMicros > 0 || a.filesSaved)
                .map((a) => a.itemId),
            );
            const removed = ledger.paidItemsNotIn(ids);
            expect(removed).toEqual([...paid].filter((id) => !ids.includes(id)).sort());
            const rows = [...ledger.itemExports(ids), ...ledger.itemExports(removed)];
            const net = rows.reduce((sum, row) => sum + row.netMicros, 0);
            const totals = ledger.moneyTotals();
            expect(net).toBe(totals.chargedMicros - totals.refundedMicros);
            // An item that saved files shows them, whether the manifest still names it or not.
            const saved = new Set(
              ledger
                .listAttempts()
                .filter((a) => a.filesSaved)
                .map((a) => a.itemId),
            );
            for (const id of saved)
              expect(rows.find((row) => row.itemId === id)?.files.length).toBeGreaterThan(0);
          } finally {
            ledger.close();
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('reads the input sent, less its prompt, and the variables, as JSON text', () => {
    const ledger = Ledger.open(join(tempDir('mediabatch-exports-'), 'l.sqlite'), 'demo', '/m.yaml');
    ledger.prepareAttempt({
      itemId: 'a',
      seq: 1,
      idempotencyKey: 'k',
      requestBody: JSON.stringify({ input: { seconds: 2, prompt: 'p', style: 'noir' }, model: 'm' }),
      requestHash: 'h',
      reservedMicros: 0,
      vars: '{"x":"1"}',
    });
    expect([...ledger.itemExports(['a'])]).toEqual([
      expect.objectContaining({
        prompt: 'p',
        input: '{"seconds":2,"style":"noir"}',
        model: 'm',
        vars: '{"x":"1"}',
      }),
    ]);
    expect([...ledger.itemExports([])]).toEqual([]);
    ledger.close();
  });
});
