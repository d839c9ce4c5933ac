import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/ledger/dialect/postgres.js';
import type { Ledger } from '../../src/ledger/ledger.js';
import { openLedger, postgresLocation } from '../../src/ledger/open-ledger.js';
import { all, job, newAttempt } from '../support/ledger-fixtures.js';
import { skipPostgresTests, usePostgresServer } from '../support/postgres-server.js';
import { tempDir } from '../support/temp.js';

/**
 * What only the shared (PostgreSQL) ledger does, beyond the contract both keep (contract.test.ts):
 * admission against the batch's slots and budget, leases between runners, many batches and
 * machines in one database, and a password that never shows.
 */

const LEASE_MS = 300;

/** A promise and what opens it (Promise.withResolvers is not in Node 20). */
function gate(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(skipPostgresTests)('the shared PostgreSQL ledger', () => {
  const postgres = usePostgresServer();
  let url: string;
  let root: string;
  const open: Ledger[] = [];

  afterAll(async () => {
    for (const ledger of open.splice(0)) await ledger.close();
  });
  beforeEach(async () => {
    for (const ledger of open.splice(0)) await ledger.close();
    url = await postgres.server.createDatabase('shared');
    root = tempDir('mediabatch-shared-');
  });

  async function ledgerOf(fields: { runnerId?: string; batch?: string; dir?: string } = {}): Promise<Ledger> {
    const ledger = await openLedger(
      postgresLocation(url, {}),
      fields.batch ?? 'b',
      join(fields.dir ?? root, 'm.yaml'),
      {
        ...(fields.runnerId ? { runnerId: fields.runnerId } : {}),
        leaseMs: LEASE_MS,
        reconnectWithinMs: 1000,
      },
    );
    open.push(ledger);
    return ledger;
  }

  async function items(ledger: Ledger, ...ids: string[]): Promise<void> {
    await ledger.putItems(ids.map((itemId) => ({ itemId, requestHash: '', state: 'pending' as const })));
  }

  it('admits in order only the attempts that fit the free slots', async () => {
    const ledger = await ledgerOf({ runnerId: 'r1' });
    await items(ledger, 'a', 'b', 'c', 'd', 'e');
    // One slot held by an accepted running job, one by an unanswered POST.
    const [a, b] = await ledger.prepareAttempts([newAttempt('a', 1), newAttempt('b', 1)]);
    await ledger.recordAccepted(a!.id, 202, job('ja', { status: 'running' }));
    expect(b!.state).toBe('prepared');
    const { admitted, noRoom, batchInUse } = await ledger.claims!.prepare(
      [newAttempt('c', 1), newAttempt('d', 1), newAttempt('e', 1)],
      {
        slotLimit: 4,
        budgetMicros: null,
      },
    );
    expect(admitted.map((each) => each.itemId)).toEqual(['c', 'd']);
    expect(noRoom).toEqual(['e']);
    expect(batchInUse).toBe(4);
    expect(await ledger.claims!.slotsInUse()).toBe(4);
    // A finished job frees its slot; a queued one holds it. Another runner's admission counts them all.
    await ledger.recordJob(a!.id, job('ja', { status: 'succeeded' }));
    const other = await ledgerOf({ runnerId: 'r2' });
    const again = await other.claims!.prepare([newAttempt('e', 1)], { slotLimit: 4, budgetMicros: null });
    expect(again.admitted).toHaveLength(1);
    expect(again.batchInUse).toBe(4);
    expect(await ledger.claims!.slotsInUse()).toBe(4);
    expect(await ledger.listAttempts()).toHaveLength(5);
  });

  it('gathers statistics on a fresh database once a run’s first attempts are admitted', async () => {
    const db = await openPostgres({ connectionString: url }, { reconnectWithinMs: 1000 });
    const rowsKnown = async () =>
      (
        await db.read(
          sql<{
            tuples: number;
          }>`SELECT reltuples AS tuples FROM pg_class WHERE oid = to_regclass('attempts')`.compile(db.q),
        )
      )[0]!.tuples;
    try {
      const ledger = await ledgerOf({ runnerId: 'r1' });
      await items(ledger, 'a', 'b', 'c');
      // Never analysed: the plans each connection keeps would read the batch's every attempt.
      expect(await rowsKnown()).toBe(-1);
      const { admitted } = await ledger.claims!.prepare([newAttempt('a', 1), newAttempt('b', 1)], {
        slotLimit: 4,
        budgetMicros: null,
      });
      expect(admitted).toHaveLength(2);
      expect(await rowsKnown()).toBe(2);
    } finally {
      await db.close();
    }
  });

  it('admits only the attempts whose reservation fits what is left of the budget', async () => {
    const ledger = await ledgerOf({ runnerId: 'r1' });
    await items(ledger, 'a', 'b', 'c', 'd', 'e');
    const [a] = await ledger.prepareAttempts([newAttempt('a', 1, { reserved: 100 })]);
    // charged 300, refunded 100: 200 spent; b's reservation of 150 waits: 350 committed of 1000.
    await ledger.recordAccepted(
      a!.id,
      202,
      job('ja', { status: 'succeeded', amountMicros: 300, refundedMicros: 100 }),
    );
    await ledger.prepareAttempts([newAttempt('b', 1, { reserved: 150 })]);
    const { admitted, noRoom } = await ledger.claims!.prepare(
      [
        newAttempt('c', 1, { reserved: 600 }),
        newAttempt('d', 1, { reserved: 100 }),
        newAttempt('e', 1, { reserved: 50 }),
      ],
      { slotLimit: 10, budgetMicros: 1000 },
    );
    // c (950) fits; d would make 1050; e makes 1000, exactly the budget.
    expect(admitted.map((each) => each.itemId)).toEqual(['c', 'e']);
    expect(noRoom).toEqual(['d']);
    expect(await ledger.moneyTotals()).toEqual({
      chargedMicros: 300,
      refundedMicros: 100,
      reservedMicros: 800,
    });
  });

  it('keeps an item claimed by one runner from another until its lease runs out', async () => {
    const one = await ledgerOf({ runnerId: 'r1' });
    const two = await ledgerOf({ runnerId: 'r2' });
    await items(one, 'a', 'b', 'c');
    expect(await one.claims!.claim(['a', 'b'])).toEqual(new Set(['a', 'b']));
    expect(await two.claims!.claim(['a', 'b', 'c'])).toEqual(new Set(['c']));
    expect(await two.claims!.heldElsewhere()).toEqual(new Set(['a', 'b']));
    expect(await one.claims!.heldElsewhere()).toEqual(new Set(['c']));
    const roomy = { slotLimit: 10, budgetMicros: null };
    const first = await two.claims!.prepare([newAttempt('a', 1), newAttempt('c', 1)], roomy);
    expect([first.admitted.map((each) => each.itemId), first.elsewhere]).toEqual([['c'], ['a']]);
    expect((await two.claims!.prepare([newAttempt('b', 1)], roomy)).elsewhere).toEqual(['b']);

    // r1 stops renewing: after its lease r2 adopts b, and r1's renewal reports it lost.
    await sleep(LEASE_MS + 150);
    expect(await two.claims!.heldElsewhere()).toEqual(new Set());
    expect(
      (await two.claims!.prepare([newAttempt('b', 1)], roomy)).admitted.map((each) => each.itemId),
    ).toEqual(['b']);
    expect(await one.claims!.renew()).toEqual(['b']);
    // a was not taken meanwhile: r1's renewal keeps it.
    expect(await two.claims!.heldElsewhere()).toEqual(new Set(['a']));

    await one.claims!.release();
    expect(await two.claims!.heldElsewhere()).toEqual(new Set());
    expect(await two.claims!.claim(['a'])).toEqual(new Set(['a']));
    // c's lease ran out too while r2 did not renew; a renewal takes back what no one took.
    expect(await two.claims!.renew()).toEqual([]);
    expect(await one.claims!.heldElsewhere()).toEqual(new Set(['a', 'b', 'c']));
    await two.claims!.release(['a']);
    expect(await one.claims!.heldElsewhere()).toEqual(new Set(['b', 'c']));
  });

  it('leases the items a runner would offer next, or says another runner works them', async () => {
    const one = await ledgerOf({ runnerId: 'r1' });
    const two = await ledgerOf({ runnerId: 'r2' });
    await items(one, 'a', 'b', 'c', 'd', 'e');
    const roomy = { slotLimit: 10, budgetMicros: null };
    await one.claims!.prepare([newAttempt('a', 1), newAttempt('b', 1)], roomy);
    // r1 lets b go: no lease holds it, but an attempt newer than r2 knew does.
    await one.claims!.release(['b']);
    const ahead = [
      { itemId: 'a', seq: 0 },
      { itemId: 'b', seq: 0 },
      { itemId: 'c', seq: 0 },
    ];
    const looked = await two.claims!.prepare([newAttempt('d', 1)], { ...roomy, ahead });
    expect([looked.admitted.map((each) => each.itemId), looked.takenAhead]).toEqual([['d'], ['a', 'b']]);
    // c is r2's now: r1's claims and offers pass it by until r2 lets it go.
    expect(await one.claims!.claim(['c'])).toEqual(new Set());
    expect(await one.claims!.heldElsewhere()).toEqual(new Set(['c', 'd']));
    // Knowing b's attempt, r2 may work it; d is its own lease; a stays r1's.
    const again = await two.claims!.prepare([newAttempt('e', 1)], {
      ...roomy,
      ahead: [
        { itemId: 'a', seq: 1 },
        { itemId: 'b', seq: 1 },
        { itemId: 'd', seq: 1 },
      ],
    });
    expect(again.takenAhead).toEqual(['a']);
    const leased = await two.claims!.prepare([newAttempt('c', 1)], roomy);
    expect([leased.admitted.map((each) => each.itemId), leased.takenAhead]).toEqual([['c'], []]);
    await two.claims!.release();
    expect(await one.claims!.heldElsewhere()).toEqual(new Set());
  });

  it('answers an admission run twice (a lost COMMIT that went through) with the attempts it wrote once', async () => {
    const ledger = await ledgerOf({ runnerId: 'r1' });
    await items(ledger, 'a', 'b');
    const roomy = { slotLimit: 10, budgetMicros: 1000 };
    const wanted = [newAttempt('a', 1, { reserved: 400 }), newAttempt('b', 1, { reserved: 400 })];
    const first = await ledger.claims!.prepare(wanted, roomy);
    const again = await ledger.claims!.prepare(wanted, roomy);
    expect(again).toEqual(first);
    expect(await ledger.listAttempts()).toHaveLength(2);
    expect((await ledger.moneyTotals()).reservedMicros).toBe(800);
    expect(await ledger.prepareAttempts([wanted[0]!])).toEqual([first.admitted[0]]);
  });

  it('refuses an attempt of an item another runner sent a newer attempt of, lease or not', async () => {
    const one = await ledgerOf({ runnerId: 'r1' });
    const two = await ledgerOf({ runnerId: 'r2' });
    await items(one, 'x');
    const roomy = { slotLimit: 10, budgetMicros: null };
    expect((await one.claims!.prepare([newAttempt('x', 1)], roomy)).admitted).toHaveLength(1);
    await one.claims!.release();
    // r2 read the ledger before r1's attempt: its attempt 1 of x would pay for x a second time.
    expect(await two.claims!.prepare([newAttempt('x', 1)], roomy)).toMatchObject({
      admitted: [],
      elsewhere: ['x'],
    });
    expect((await two.claims!.prepare([newAttempt('x', 2)], roomy)).admitted).toHaveLength(1);
  });

  it('finds the same batch from another machine, its files under that machine’s folder', async () => {
    const here = await ledgerOf();
    await items(here, 'a');
    const a = await here.prepareAttempt(newAttempt('a', 1));
    await here.recordFilesSaved(a.id, [{ idx: 0, path: join(root, 'out', 'a.mp4'), bytes: 1, sha256: 's' }]);
    const elsewhere = tempDir('mediabatch-shared-other-');
    const there = await ledgerOf({ dir: elsewhere });
    expect(there.batchId).toBe(here.batchId);
    expect((await there.listFiles())[0]!.path).toBe(join(elsewhere, 'out', 'a.mp4'));
    expect((await all(there.itemSummaries()))[0]!.savedPaths).toBe(
      JSON.stringify([join(elsewhere, 'out', 'a.mp4')]),
    );
    // The first machine still reads its own folder.
    expect((await here.listFiles())[0]!.path).toBe(join(root, 'out', 'a.mp4'));
  });

  it('keeps two batches of one database apart', async () => {
    const first = await ledgerOf({ batch: 'one' });
    const second = await ledgerOf({ batch: 'two' });
    expect(first.batchId).not.toBe(second.batchId);
    await items(first, 'a');
    const a = await first.prepareAttempt(newAttempt('a', 1));
    await first.recordAccepted(
      a.id,
      202,
      job('ja', { status: 'succeeded', amountMicros: 5, expiresAt: 'e' }),
    );
    await first.bindService('https://one.example');
    await first.startRun(1);
    expect(await second.listItems()).toEqual([]);
    expect(await second.listAttempts()).toEqual([]);
    expect(await second.hasAttempts()).toBe(false);
    expect(await second.moneyTotals()).toEqual({ chargedMicros: 0, refundedMicros: 0, reservedMicros: 0 });
    expect(await all(second.itemSummaries())).toEqual([]);
    expect(await second.paidItemsNotIn([])).toEqual([]);
    expect(await second.unsavedSucceeded()).toEqual([]);
    expect(await second.service()).toBeNull();
    expect(await second.lastRun()).toBeNull();
    // The same item id and job id in the other batch are its own.
    await items(second, 'a');
    const other = await second.prepareAttempt(newAttempt('a', 1));
    await second.recordAccepted(other.id, 202, job('ja'));
    expect(await first.listAttempts()).toHaveLength(1);
  });

  it('never shows the password: not in its path, not in a failed open', async () => {
    const password = new URL(url).password;
    expect(password.length).toBeGreaterThan(3);
    const ledger = await ledgerOf();
    expect(ledger.path).not.toContain(password);
    const wrong = new URL(url);
    wrong.password = 'not-the-password-x';
    let message = '';
    try {
      await (
        await openLedger(postgresLocation(wrong.href, {}), 'b', join(root, 'm.yaml'), {
          reconnectWithinMs: 1000,
        })
      ).close();
    } catch (error) {
      message = `${String(error)} ${(error as Error).stack ?? ''} ${JSON.stringify(error)}`;
    }
    expect(message).toMatch(/password authentication failed/);
    expect(message).not.toContain('not-the-password-x');
    expect(message).not.toContain(password);
  });

  it('runs again a step the database rolled back for a deadlock with another runner’s step', async () => {
    const [one, two] = [
      await openPostgres({ connectionString: url }, { reconnectWithinMs: 1000 }),
      await openPostgres({ connectionString: url }, { reconnectWithinMs: 1000 }),
    ];
    try {
      await one.batch([
        sql`CREATE TABLE rows_locked (id integer PRIMARY KEY, touched integer NOT NULL)`.compile(one.q),
        sql`INSERT INTO rows_locked VALUES (1, 0), (2, 0)`.compile(one.q),
      ]);
      const touch = (id: number) =>
        sql`UPDATE rows_locked SET touched = touched + 1 WHERE id = ${id}`.compile(one.q);
      // Each step locks one row, waits until the other has locked the other row, then asks for it:
      // the database ends one of them (40P01). Run again, the gates are open and it goes through.
      const oneLocked = gate();
      const twoLocked = gate();
      const crossing = (db: typeof one, first: number, mine: typeof oneLocked, theirs: typeof oneLocked) =>
        db.transaction(async (tx) => {
          await tx.run([touch(first)]);
          mine.resolve();
          await theirs.promise;
          await tx.run([touch(3 - first)], true);
          return first;
        });
      expect(
        await Promise.all([crossing(one, 1, oneLocked, twoLocked), crossing(two, 2, twoLocked, oneLocked)]),
      ).toEqual([1, 2]);
      const rows = await one.read(
        sql<{ id: number; touched: number }>`SELECT id, touched FROM rows_locked ORDER BY id`.compile(one.q),
      );
      expect(rows).toEqual([
        { id: 1, touched: 2 },
        { id: 2, touched: 2 },
      ]);
    } finally {
      await one.close();
      await two.close();
    }
  });
});
