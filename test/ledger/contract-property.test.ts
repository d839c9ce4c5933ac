import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/ledger/ledger.js';
import { openLedger, postgresLocation } from '../../src/ledger/open-ledger.js';
import { all, body, job } from '../support/ledger-fixtures.js';
import {
  type PostgresTestServer,
  skipPostgresTests,
  startPostgresServer,
} from '../support/postgres-server.js';
import { tempDir } from '../support/temp.js';

/**
 * The same random steps applied to a SQLite ledger and a PostgreSQL one must leave every read and
 * every view equal. Attempt ids may differ (PostgreSQL's sequences skip), so ids are compared by
 * the order the steps made them in; times are the test's own clock in both.
 */

const IDS = ['a', 'b', 'c', 'é', 'B'];
const STATES = ['pending', 'done', 'failed'] as const;

type Step =
  | { kind: 'put'; ids: string[]; state: (typeof STATES)[number] }
  | { kind: 'state'; id: string; state: (typeof STATES)[number] }
  | { kind: 'prepare'; id: string; take: number; model: string | null; reserved: number }
  | { kind: 'accept'; ref: number; status: string; amount: number; refund: number; expires: boolean }
  | { kind: 'reject'; ref: number }
  | { kind: 'lost'; ref: number }
  | { kind: 'import'; id: string; amount: number }
  | { kind: 'save'; ref: number; idxs: number[]; where: 'in' | 'out' | 's3' }
  | { kind: 'move'; ref: number }
  | { kind: 'rename'; from: string; to: string }
  | { kind: 'bind'; identity: string }
  | { kind: 'run' };

const id = fc.constantFrom(...IDS);
const ref = fc.nat(20);
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('put' as const),
    ids: fc.array(id, { maxLength: 4 }),
    state: fc.constantFrom(...STATES),
  }),
  fc.record({ kind: fc.constant('state' as const), id, state: fc.constantFrom(...STATES) }),
  fc.record({
    kind: fc.constant('prepare' as const),
    id,
    take: fc.integer({ min: 1, max: 3 }),
    model: fc.option(fc.constantFrom('m1', 'm2'), { nil: null }),
    reserved: fc.nat(1000),
  }),
  fc.record({
    kind: fc.constant('accept' as const),
    ref,
    status: fc.constantFrom('queued', 'running', 'succeeded', 'failed'),
    amount: fc.nat(1000),
    refund: fc.nat(1000),
    expires: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('reject' as const), ref }),
  fc.record({ kind: fc.constant('lost' as const), ref }),
  fc.record({ kind: fc.constant('import' as const), id, amount: fc.nat(1000) }),
  fc.record({
    kind: fc.constant('save' as const),
    ref,
    idxs: fc.uniqueArray(fc.nat(2), { maxLength: 3 }),
    where: fc.constantFrom('in' as const, 'out' as const, 's3' as const),
  }),
  fc.record({ kind: fc.constant('move' as const), ref }),
  fc.record({ kind: fc.constant('rename' as const), from: id, to: id }),
  fc.record({ kind: fc.constant('bind' as const), identity: fc.constantFrom('s1', 's2') }),
  fc.record({ kind: fc.constant('run' as const) }),
);

/** One ledger driven by the steps: its attempts' ids in the order made, and the steps' outcomes. */
class Driven {
  readonly refs: number[] = [];
  readonly outcomes: string[] = [];
  readonly #seqs = new Map<string, number>();
  /** Each attempt's item, as the steps made it. */
  readonly #items = new Map<number, string>();
  #n = 0;

  constructor(
    readonly ledger: Ledger,
    readonly root: string,
  ) {}

  async apply(s: Step): Promise<void> {
    this.#n += 1;
    try {
      await this.#apply(s);
      this.outcomes.push('ok');
    } catch {
      // Both refuse the same steps; each database words a broken constraint its own way.
      this.outcomes.push('threw');
    }
  }

  #ref(n: number): number {
    if (this.refs.length === 0) throw new Error('no attempt');
    return this.refs[n % this.refs.length]!;
  }

  #nextSeq(itemId: string): number {
    const seq = (this.#seqs.get(itemId) ?? 0) + 1;
    this.#seqs.set(itemId, seq);
    return seq;
  }

  async #apply(s: Step): Promise<void> {
    const l = this.ledger;
    const n = this.#n;
    switch (s.kind) {
      case 'put':
        await l.putItems(
          s.ids.map((itemId) => ({ itemId, requestHash: `h${n}`, state: s.state, errorCode: `e${n}` })),
        );
        return;
      case 'state':
        await l.setItemState(s.id, { state: s.state, errorCode: s.state === 'failed' ? 'x' : null });
        return;
      case 'prepare': {
        const seq = this.#nextSeq(s.id);
        const extra = s.model === null ? {} : { definition: s.model === 'm1' ? 'hd' : 720 };
        const requestBody =
          s.model === null ? '{"input":{"prompt":"x"}}' : body(`${s.id}${seq}`, extra).replace('m1', s.model);
        const made = await l.prepareAttempt({
          itemId: s.id,
          seq,
          idempotencyKey: `k${n}`,
          requestBody,
          requestHash: `h${n}`,
          reservedMicros: s.reserved,
          take: s.take,
          vars: s.take === 2 ? '{"v":1}' : null,
        });
        this.refs.push(made.id);
        this.#items.set(made.id, s.id);
        return;
      }
      case 'accept':
        await l.recordAccepted(
          this.#ref(s.ref),
          202,
          job(`j${s.ref}`, {
            status: s.status,
            amountMicros: s.amount,
            refundedMicros: Math.min(s.refund, s.amount),
            expiresAt: s.expires ? `x${n}` : null,
            completedAt: s.status === 'succeeded' ? `c${n}` : null,
          }),
        );
        return;
      case 'reject':
        await l.recordRejected(this.#ref(s.ref), 422, 'bad', 'no');
        return;
      case 'lost':
        await l.recordJobLost(this.#ref(s.ref), 'gone');
        return;
      case 'import': {
        const imported = {
          itemId: s.id,
          seq: this.#nextSeq(s.id),
          requestBody: body(`imp${n}`),
          requestHash: 'hi',
          job: job(`imp${n}`, { status: 'succeeded', amountMicros: s.amount, expiresAt: 'e' }),
        };
        const [made] = await l.recordImportedJobs(
          [imported],
          [{ itemId: s.id, requestHash: 'hi', state: 'done' }],
        );
        this.refs.push(made!.id);
        this.#items.set(made!.id, s.id);
        return;
      }
      case 'save': {
        const place = (idx: number) =>
          s.where === 'in'
            ? join(this.root, 'out', `${n}-${idx}.mp4`)
            : s.where === 'out'
              ? `/elsewhere/${n}-${idx}`
              : `s3://b/${n}-${idx}`;
        const attemptId = this.#ref(s.ref);
        // Every other save settles its item in the same step, as a download does.
        const itemId = this.#items.get(attemptId);
        const item = n % 2 === 0 && itemId ? { itemId, update: { state: 'done' as const } } : undefined;
        await l.recordFilesSaved(
          attemptId,
          s.idxs.map((idx) => ({
            idx,
            path: place(idx),
            bytes: idx + n,
            sha256: `s${n}`,
            mtimeMs: idx === 1 ? n : null,
          })),
          item,
        );
        return;
      }
      case 'move':
        await l.recordFileMoved(this.#ref(s.ref), 0, join(this.root, 'moved', `${n}.mp4`));
        return;
      case 'rename': {
        const attempts = new Map((await l.listAttempts()).map((each) => [each.id, each.itemId]));
        const moves = (await l.listFiles())
          .filter((file) => attempts.get(file.attemptId) === s.from)
          .map((file) => ({
            attemptId: file.attemptId,
            idx: file.idx,
            from: file.path,
            to: `${file.path}.r${n}`,
          }));
        await l.renameItem(s.from, s.to, moves);
        return;
      }
      case 'bind':
        await l.bindService(s.identity);
        return;
      case 'run':
        await l.endRun(await l.startRun(n), 0);
        return;
    }
  }

  /** Every read of the Ledger, attempt ids replaced by the order they were made in. */
  async reads(): Promise<unknown> {
    const l = this.ledger;
    const order = new Map(this.refs.map((made, i) => [made, i]));
    const norm = (made: number | undefined) => (made === undefined ? undefined : order.get(made));
    const attempt = <T extends { id: number } | undefined>(a: T) =>
      a === undefined ? a : { ...a, id: norm(a.id) };
    const ids = [...IDS, 'zz'];
    return {
      outcomes: this.outcomes,
      items: await l.listItems(),
      attempts: (await l.listAttempts()).map(attempt),
      requests: await Promise.all(this.refs.map((made) => l.attemptRequest(made))),
      hasAttempts: await l.hasAttempts(),
      files: (await l.listFiles()).map((file) => ({ ...file, attemptId: norm(file.attemptId) })),
      totals: await l.savedFileTotals(),
      summaries: await all(l.itemSummaries()),
      entries: (await all(l.itemEntries())).map((entry) => ({ ...entry, attempt: attempt(entry.attempt) })),
      exports: await all(l.itemExports(ids)),
      exportsOfSome: await all(l.itemExports(['b', 'b', 'zz'])),
      histories: (await all(l.itemHistories(['b', 'zz', 'b']))).map((each) => ({
        ...each,
        attempts: each.attempts.map(attempt),
      })),
      paid: [await l.paidItemsNotIn([]), await l.paidItemsNotIn(['a', 'c'])],
      // The interface gives the kinds in no set order.
      prices: (await l.priceSamples())
        .map(attempt)
        .sort((x, y) => x.requestBody.localeCompare(y.requestBody)),
      unsaved: (await l.unsavedSucceeded()).map(attempt),
      unrefunded: (await l.unrefundedFailures()).map(attempt),
      rejected: (await l.rejectedAttempts()).map(attempt),
      facts: await all(l.savedFileFacts()),
      savedAt: await Promise.all(this.refs.map((made) => l.savedAt(made))),
      paths: await all(l.itemFilePaths()),
      wrote: await Promise.all((await l.listFiles()).map((file) => l.wroteFile(file.path))),
      at: await Promise.all(
        (await l.listFiles()).map(async (file) =>
          (await l.filesAt(file.path)).map((each) => ({ ...each, attemptId: norm(each.attemptId) })),
        ),
      ),
      service: await l.service(),
      money: await l.moneyTotals(),
      lastRun: await l.lastRun(),
    };
  }
}

describe.skipIf(skipPostgresTests)('SQLite and PostgreSQL ledgers under the same random steps', () => {
  let server: PostgresTestServer;
  let url: string;

  beforeAll(async () => {
    server = await startPostgresServer();
    url = await server.createDatabase('property');
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('give equal reads and views after every sequence', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), async (steps) => {
        run += 1;
        const root = tempDir('mediabatch-property-');
        const manifest = join(root, 'm.yaml');
        const now = () => new Date('2026-01-02T03:04:05.000Z');
        const sqlite = await openLedger(
          { kind: 'sqlite', path: join(root, 'l.db'), shown: 'l.db' },
          'b',
          manifest,
          { now },
        );
        // Each run a new batch of the one database: the others' rows must not show.
        const pg = await openLedger(postgresLocation(url, {}), `batch${run}`, manifest, { now });
        try {
          const [one, two] = [new Driven(sqlite, root), new Driven(pg, root)];
          for (const s of steps) {
            await one.apply(s);
            await two.apply(s);
          }
          expect(await two.reads()).toEqual(await one.reads());
        } finally {
          await sqlite.close();
          await pg.close();
        }
      }),
      { numRuns: 40 },
    );
  }, 240_000);
});
