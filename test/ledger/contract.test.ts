import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { entriesOfView } from '../../src/documents/gallery/entries.js';
import type { Ledger } from '../../src/ledger/ledger.js';
import { type LedgerLocation, openLedger, postgresLocation } from '../../src/ledger/open-ledger.js';
import { all, body, job, newAttempt, T0 } from '../support/ledger-fixtures.js';
import {
  type PostgresTestServer,
  skipPostgresTests,
  startPostgresServer,
} from '../support/postgres-server.js';
import { tempDir } from '../support/temp.js';

/**
 * The Ledger contract (src/ledger/ledger.ts), the same tests against both implementations: a
 * SqliteLedger in a temporary folder and a PostgresLedger on a fresh database. What PostgreSQL
 * adds (admission, leases, many batches and machines) is in contract-shared.test.ts; the two
 * driven by the same random steps are compared in contract-property.test.ts.
 */

interface Backend {
  name: 'sqlite' | 'postgres';
  skip: boolean;
}

const backends: Backend[] = [
  { name: 'sqlite', skip: false },
  { name: 'postgres', skip: skipPostgresTests },
];

describe.each(backends)('the Ledger contract: $name', ({ name, skip }) => {
  describe.skipIf(skip)(name, () => {
    let server: PostgresTestServer | null = null;
    let root: string;
    let location: LedgerLocation;
    const open: Ledger[] = [];

    beforeAll(async () => {
      if (name === 'postgres') server = await startPostgresServer();
    }, 60_000);
    afterAll(async () => {
      for (const ledger of open.splice(0)) await ledger.close();
      await server?.stop();
    });
    beforeEach(async () => {
      for (const ledger of open.splice(0)) await ledger.close();
      root = tempDir('mediabatch-contract-');
      location =
        name === 'sqlite'
          ? { kind: 'sqlite', path: join(root, '.mediabatch', 'ledger.db'), shown: 'ledger.db' }
          : postgresLocation(await server!.createDatabase('contract'), {});
    });

    async function ledgerAt(manifestDir = root, batch = 'b'): Promise<Ledger> {
      const ledger = await openLedger(location, batch, join(manifestDir, 'm.yaml'), {
        now: () => new Date(T0),
      });
      open.push(ledger);
      return ledger;
    }

    it('puts, updates and renames items', async () => {
      const ledger = await ledgerAt();
      expect(ledger.severalRunners).toBe(name === 'postgres');
      await ledger.putItems([
        { itemId: 'b', requestHash: 'hb', state: 'pending' },
        {
          itemId: 'a',
          requestHash: 'ha',
          state: 'failed',
          errorCode: 'e',
          errorMessage: 'm',
          retriesUsed: 2,
        },
      ]);
      await ledger.putItems([{ itemId: 'b', requestHash: 'hb2', state: 'pending' }]);
      await ledger.setItemState('b', { state: 'done' });
      expect(await ledger.listItems()).toEqual([
        {
          itemId: 'a',
          requestHash: 'ha',
          state: 'failed',
          retriesUsed: 2,
          errorCode: 'e',
          errorMessage: 'm',
          updatedAt: T0,
        },
        {
          itemId: 'b',
          requestHash: 'hb2',
          state: 'done',
          retriesUsed: 0,
          errorCode: null,
          errorMessage: null,
          updatedAt: T0,
        },
      ]);
      const attempt = await ledger.prepareAttempt(newAttempt('a', 1));
      await ledger.recordFilesSaved(attempt.id, [
        { idx: 0, path: join(root, 'out', 'a.mp4'), bytes: 3, sha256: 's' },
      ]);
      await ledger.renameItem('a', 'c', [
        { attemptId: attempt.id, idx: 0, from: join(root, 'out', 'a.mp4'), to: join(root, 'out', 'c.mp4') },
      ]);
      expect((await ledger.listItems()).map((item) => item.itemId)).toEqual(['b', 'c']);
      expect((await ledger.getAttempt(attempt.id)).itemId).toBe('c');
      expect(await all(ledger.itemFilePaths())).toEqual([['c', join(root, 'out', 'c.mp4')]]);
      await expect(ledger.renameItem('c', 'b', [])).rejects.toThrow(/already knows b/);
      await expect(ledger.renameItem('zz', 'yy', [])).rejects.toThrow(/no such item/);
    });

    it('prepares, accepts, rejects, follows, loses and imports attempts', async () => {
      const ledger = await ledgerAt();
      await ledger.putItems(
        ['a', 'b', 'c'].map((itemId) => ({ itemId, requestHash: '', state: 'pending' as const })),
      );
      expect(await ledger.hasAttempts()).toBe(false);
      const [a, b] = await ledger.prepareAttempts([
        newAttempt('a', 1, { reserved: 500 }),
        newAttempt('b', 1, { reserved: 700 }),
      ]);
      expect(a).toMatchObject({
        itemId: 'a',
        seq: 1,
        state: 'prepared',
        reservedMicros: 500,
        take: 1,
        createdAt: T0,
      });
      expect(await ledger.getAttempt(a!.id)).toEqual(a);
      expect(await ledger.hasAttempts()).toBe(true);
      expect((await ledger.listItems()).find((item) => item.itemId === 'a')).toMatchObject({
        state: 'in_flight',
        requestHash: 'h-a',
      });
      expect(await ledger.moneyTotals()).toEqual({
        chargedMicros: 0,
        refundedMicros: 0,
        reservedMicros: 1200,
      });

      const accepted = await ledger.recordAccepted(a!.id, 202, job('j1', { amountMicros: 400 }));
      expect(accepted).toMatchObject({
        state: 'accepted',
        reservedMicros: 0,
        httpStatus: 202,
        jobId: 'j1',
        answeredAt: T0,
      });
      const rejected = await ledger.recordRejected(b!.id, 422, 'bad', 'no');
      expect(rejected).toMatchObject({
        state: 'rejected',
        httpStatus: 422,
        httpCode: 'bad',
        errorCode: 'bad',
        errorMessage: 'no',
      });
      expect(await ledger.moneyTotals()).toEqual({
        chargedMicros: 400,
        refundedMicros: 0,
        reservedMicros: 0,
      });

      const done = await ledger.recordJob(
        a!.id,
        job('j1', {
          status: 'succeeded',
          amountMicros: 400,
          refundedMicros: 100,
          expiresAt: 'x',
          completedAt: 'c',
        }),
      );
      expect(done).toMatchObject({
        jobStatus: 'succeeded',
        refundedMicros: 100,
        expiresAt: 'x',
        completedAt: 'c',
      });
      expect(await ledger.unsavedSucceeded()).toEqual([
        {
          ...done,
          requestBody: '',
          idempotencyKey: '',
          requestHash: '',
          errorMessage: '',
          createdAt: '',
          answeredAt: '',
          completedAt: '',
          vars: null,
        },
      ]);
      const lost = await ledger.recordJobLost(a!.id, 'gone');
      expect(lost).toMatchObject({
        jobStatus: 'lost',
        errorCode: 'job_not_found',
        errorMessage: 'gone',
        amountMicros: 400,
      });
      expect((await ledger.listItems()).find((item) => item.itemId === 'a')?.state).toBe('pending');

      const [imported] = await ledger.recordImportedJobs(
        [
          {
            itemId: 'c',
            seq: 1,
            requestBody: body('c'),
            requestHash: 'hc',
            job: job('j2', { status: 'running', amountMicros: 50 }),
          },
        ],
        [{ itemId: 'c', requestHash: 'hc', state: 'in_flight' }],
      );
      expect(imported).toMatchObject({
        state: 'accepted',
        idempotencyKey: 'imported:j2',
        jobId: 'j2',
        jobStatus: 'running',
      });
      expect((await ledger.listAttempts()).map((each) => each.id)).toEqual([a!.id, b!.id, imported!.id]);
      // Narrowed to the items named (an adoption's read), in the same order; none named, none read.
      expect((await ledger.listAttempts(['c'])).map((each) => each.id)).toEqual([imported!.id]);
      expect((await ledger.listAttempts(['zz'])).length).toBe(0);
      expect(await ledger.listAttempts([])).toEqual([]);
      expect((await ledger.listItems(['c', 'zz'])).map((item) => item.itemId)).toEqual(['c']);
      expect(await ledger.listItems([])).toEqual([]);
      // The items come with the jobs, in the same step.
      expect((await ledger.listItems()).find((item) => item.itemId === 'c')).toMatchObject({
        state: 'in_flight',
      });
      expect(await ledger.attemptRequest(imported!.id)).toEqual({
        requestBody: body('c'),
        requestHash: 'hc',
      });
      expect(await ledger.moneyTotals()).toEqual({
        chargedMicros: 450,
        refundedMicros: 100,
        reservedMicros: 0,
      });

      // A job whose output import found on disk keeps what its sidecar recorded of the attempt.
      const [found] = await ledger.recordImportedJobs(
        [
          {
            itemId: 'c',
            seq: 2,
            requestBody: body('c'),
            requestHash: 'hc',
            job: job('j3', { status: 'succeeded', amountMicros: 0 }),
            take: 3,
            createdAt: '2026-01-02T03:04:05.000Z',
            vars: '{"x":1}',
          },
        ],
        [],
      );
      expect(found).toMatchObject({ take: 3, createdAt: '2026-01-02T03:04:05.000Z', vars: '{"x":1}' });
      expect(imported!.take).toBe(1);
    });

    it('records saved and moved files, and reads them back absolute', async () => {
      const ledger = await ledgerAt();
      await ledger.putItems([{ itemId: 'a', requestHash: '', state: 'pending' }]);
      const first = await ledger.prepareAttempt(newAttempt('a', 1));
      await ledger.recordAccepted(first.id, 202, job('j1', { status: 'succeeded', amountMicros: 10 }));
      expect(await ledger.savedAt(first.id)).toBeNull();
      const inside = join(root, 'out', 'a.mp4');
      const outside = '/elsewhere/a.png';
      await ledger.recordFilesSaved(first.id, [
        { idx: 1, path: outside, bytes: 5, sha256: 's1', mtimeMs: 1234.7 },
        { idx: 0, path: inside, bytes: 7, sha256: 's0' },
      ]);
      expect(await ledger.savedAt(first.id)).toBe(T0);
      expect((await ledger.getAttempt(first.id)).filesSaved).toBe(true);
      expect(await ledger.listFiles()).toEqual([
        { attemptId: first.id, idx: 0, path: inside, bytes: 7, sha256: 's0', savedAt: T0, mtimeMs: null },
        { attemptId: first.id, idx: 1, path: outside, bytes: 5, sha256: 's1', savedAt: T0, mtimeMs: 1234 },
      ]);
      expect(await ledger.listFiles([first.id])).toEqual(await ledger.listFiles());
      expect(await ledger.listFiles([first.id + 1000])).toEqual([]);
      expect(await ledger.listFiles([])).toEqual([]);
      expect(await ledger.savedFileTotals()).toEqual({ bytes: 12, outputs: 1 });
      expect(await ledger.wroteFile(inside)).toBe(true);
      expect(await ledger.wroteFile(join(root, 'out', 'other.mp4'))).toBe(false);
      const moved = join(root, 'out', 'a-take1.mp4');
      await ledger.recordFileMoved(first.id, 0, moved);
      expect(await ledger.wroteFile(inside)).toBe(false);
      expect(await ledger.wroteFile(moved)).toBe(true);
      expect(await all(ledger.itemFilePaths())).toEqual([
        ['a', moved],
        ['a', outside],
      ]);
    });

    it('reads the checks of saved takes, all of them or only those of the attempts named', async () => {
      const ledger = await ledgerAt();
      await ledger.putItems(
        ['a', 'b'].map((itemId) => ({ itemId, requestHash: '', state: 'pending' as const })),
      );
      const saved = [];
      for (const [n, itemId] of ['a', 'b'].entries()) {
        const attempt = await ledger.prepareAttempt(newAttempt(itemId, 1));
        await ledger.recordAccepted(attempt.id, 202, job(`j${n}`, { status: 'succeeded', amountMicros: 10 }));
        const file = { idx: 0, path: join(root, 'out', `${itemId}.mp4`), bytes: 7, sha256: `s${n}` };
        const outcome = itemId === 'a' ? 'passed' : 'failed';
        const check = {
          outcome,
          reason: itemId === 'a' ? null : 'too short',
          video: null,
          score: null,
          checks: null,
        } as const;
        await ledger.recordCheckedFiles(attempt.id, [file], check);
        saved.push({ attemptId: attempt.id, outcome });
      }
      const [a, b] = saved;
      expect((await ledger.takeChecks()).map(({ attemptId, outcome }) => ({ attemptId, outcome }))).toEqual(
        saved,
      );
      expect(await ledger.takeChecks([b!.attemptId])).toMatchObject([
        { ...b, reason: 'too short', checkedAt: T0 },
      ]);
      expect(await ledger.takeChecks([a!.attemptId, b!.attemptId])).toEqual(await ledger.takeChecks());
      expect(await ledger.takeChecks([b!.attemptId + 1000])).toEqual([]);
      expect(await ledger.takeChecks([])).toEqual([]);
      expect(await ledger.takeCheckOf(a!.attemptId)).toMatchObject({ ...a, reason: null });
    });

    it('records a reused take: no job, no charge, its files saved and its item done, pointing at its result, and finds takes with their requests', async () => {
      const ledger = await ledgerAt();
      await ledger.putItems([
        { itemId: 'a', requestHash: 'ha', state: 'pending' },
        { itemId: 'b', requestHash: 'hb', state: 'pending' },
      ]);
      const first = await ledger.prepareAttempt(newAttempt('a', 1));
      await ledger.recordAccepted(first.id, 202, job('j1', { status: 'succeeded', amountMicros: 250_000 }));
      const source = join(root, 'out', 'a.mp4');
      await ledger.recordFilesSaved(first.id, [{ idx: 0, path: source, bytes: 7, sha256: 's0' }]);
      const [saved] = await ledger.reusableTakes();
      expect(saved).toMatchObject({
        itemId: 'a',
        attemptId: first.id,
        take: 1,
        jobId: 'j1',
        requestBody: first.requestBody,
      });
      const copy = join(root, 'out', 'b.mp4');
      const reused = await ledger.recordReusedTake({
        itemId: 'b',
        seq: 1,
        take: 1,
        requestBody: body('copied'),
        requestHash: 'hb2',
        vars: null,
        from: saved!,
        files: [{ idx: 0, path: copy, bytes: 7, sha256: 's0', mtimeMs: 99 }],
      });
      expect(reused).toMatchObject({
        itemId: 'b',
        state: 'accepted',
        jobId: null,
        jobStatus: 'succeeded',
        amountMicros: 0,
        filesSaved: true,
        take: 1,
        requestHash: 'hb2',
      });
      expect((await ledger.listItems()).find((item) => item.itemId === 'b')).toMatchObject({
        state: 'done',
        requestHash: 'hb2',
      });
      // Money is counted once: the copy charged nothing.
      expect((await ledger.moneyTotals()).chargedMicros).toBe(250_000);
      expect(await ledger.wroteFile(copy)).toBe(true);
      expect(
        (await ledger.reusableTakes()).map((take) => [take.itemId, take.jobId, take.files[0]!.path]),
      ).toEqual([
        ['a', 'j1', source],
        // The copy's take names the job that made its bytes (docs/results.md, "The record of a result").
        ['b', 'j1', copy],
      ]);
      // It points at its result and at the take it copied, and the ledger finds both from it.
      expect(reused).toMatchObject({ madeByJob: 'j1', copiedFrom: first.idempotencyKey });
      const pointed = await ledger.resultOfCopy(reused);
      expect(pointed?.result).toMatchObject({ id: first.id, jobId: 'j1', requestBody: first.requestBody });
      expect(pointed?.source).toEqual({ itemId: 'a', take: 1 });
      expect(await ledger.resultOfCopy(first)).toBeNull();
    });

    it('records a take to fetch: a copy of its result with no files yet, its item in flight, and saves its files later', async () => {
      const ledger = await ledgerAt();
      await ledger.putItems([{ itemId: 'a', requestHash: 'ha', state: 'pending' }]);
      const first = await ledger.prepareAttempt(newAttempt('a', 1));
      const expiresAt = '2030-01-02T00:00:00.000Z';
      await ledger.recordAccepted(
        first.id,
        202,
        job('j1', { status: 'succeeded', amountMicros: 250_000, expiresAt }),
      );
      await ledger.recordFilesSaved(first.id, [
        { idx: 0, path: join(root, 'out', 'a.mp4'), bytes: 7, sha256: 's0' },
      ]);
      const [lost] = await ledger.reusableTakes();
      const fetched = await ledger.recordTakeToFetch({
        itemId: 'a',
        seq: 2,
        take: 2,
        requestBody: first.requestBody,
        requestHash: 'ha',
        vars: null,
        from: lost!,
      });
      expect(fetched).toMatchObject({
        itemId: 'a',
        seq: 2,
        take: 2,
        state: 'accepted',
        jobId: null,
        jobStatus: 'succeeded',
        amountMicros: 0,
        filesSaved: false,
        expiresAt,
        madeByJob: 'j1',
        copiedFrom: first.idempotencyKey,
      });
      expect((await ledger.listItems())[0]).toMatchObject({ state: 'in_flight', requestHash: 'ha' });
      expect((await ledger.resultOfCopy(fetched))?.source).toEqual({ itemId: 'a', take: 1 });
      // Nothing is paid for it, and until its files are saved it is no take to reuse.
      expect((await ledger.moneyTotals()).chargedMicros).toBe(250_000);
      expect((await ledger.reusableTakes()).map((take) => take.attemptId)).toEqual([first.id]);
      const path = join(root, 'out', 'a.take2.mp4');
      await ledger.recordFilesSaved(fetched.id, [{ idx: 0, path, bytes: 7, sha256: 's0' }], {
        itemId: 'a',
        update: { state: 'done' },
      });
      expect((await ledger.reusableTakes()).map((take) => [take.attemptId, take.jobId])).toEqual([
        [first.id, 'j1'],
        [fetched.id, 'j1'],
      ]);
    });

    it('binds its service once, and keeps the first', async () => {
      const ledger = await ledgerAt();
      expect(await ledger.service()).toBeNull();
      expect(await ledger.bindService('https://one.example')).toEqual({
        identity: 'https://one.example',
        boundAt: T0,
      });
      expect(await ledger.bindService('https://two.example')).toEqual({
        identity: 'https://one.example',
        boundAt: T0,
      });
      expect(await ledger.service()).toEqual({ identity: 'https://one.example', boundAt: T0 });
    });

    it('records runs and events, and names the last run', async () => {
      const ledger = await ledgerAt();
      expect(await ledger.lastRun()).toBeNull();
      const first = await ledger.startRun(11);
      await ledger.appendEvent(null, null, 'note', { a: 1 });
      await ledger.appendEvent('a', null, 'bare');
      await ledger.endRun(first, 0);
      await ledger.startRun(22);
      expect(await ledger.lastRun()).toEqual({ pid: 22, startedAt: T0 });
    });

    it('runs each step whole or not at all, and its steps in the order called', async () => {
      const ledger = await ledgerAt();
      // The second job's key is the first's: the step fails, and neither job nor item is written.
      const twice = { itemId: 'a', seq: 1, requestBody: '{}', requestHash: 'h', job: job('j1') };
      await expect(
        ledger.recordImportedJobs(
          [twice, { ...twice, seq: 2 }],
          [{ itemId: 'a', requestHash: 'h', state: 'done' }],
        ),
      ).rejects.toThrow();
      expect(await ledger.listItems()).toEqual([]);
      expect(await ledger.listAttempts()).toEqual([]);
      // Called without waiting: each read sees every write called before it.
      ledger.groupCommits(50);
      const [, items, , attempts] = await Promise.all([
        ledger.putItems([{ itemId: 'a', requestHash: '', state: 'pending' }]),
        ledger.listItems(),
        ledger.prepareAttempt(newAttempt('a', 1)),
        ledger.listAttempts(),
        ledger.flush(),
      ]);
      expect(items).toHaveLength(1);
      expect(attempts.map((attempt) => attempt.itemId)).toEqual(['a']);
    });

    it('gives one row per item in the views', async () => {
      const ledger = await ledgerAt();
      await ledger.putItems(
        ['a', 'b', 'c'].map((itemId) => ({ itemId, requestHash: '', state: 'pending' as const })),
      );
      // a: two takes saved; b: one charged attempt, unsaved; c: nothing; d: attempts only.
      const a1 = await ledger.prepareAttempt(newAttempt('a', 1));
      await ledger.recordAccepted(
        a1.id,
        202,
        job('ja1', { status: 'succeeded', amountMicros: 100, completedAt: 't1' }),
      );
      await ledger.recordFilesSaved(a1.id, [
        { idx: 0, path: join(root, 'a1.mp4'), bytes: 1, sha256: 'x', mtimeMs: 5 },
      ]);
      const a2 = await ledger.prepareAttempt(newAttempt('a', 2, { take: 2 }));
      await ledger.recordAccepted(
        a2.id,
        202,
        job('ja2', { status: 'succeeded', amountMicros: 200, refundedMicros: 50 }),
      );
      await ledger.recordFilesSaved(a2.id, [
        { idx: 1, path: 's3://bucket/a2-1.mp4', bytes: 2, sha256: 'y' },
        { idx: 0, path: join(root, 'a2-0.mp4'), bytes: 3, sha256: 'z' },
      ]);
      const b1 = await ledger.prepareAttempt(newAttempt('b', 1));
      await ledger.recordAccepted(
        b1.id,
        202,
        job('jb1', { status: 'succeeded', amountMicros: 300, expiresAt: 'e' }),
      );
      const d1 = await ledger.prepareAttempt(newAttempt('d', 1));

      const summaries = await all(ledger.itemSummaries());
      expect(summaries).toEqual([
        {
          itemId: 'a',
          state: 'in_flight',
          errorCode: null,
          errorMessage: null,
          attempts: 2,
          netMicros: 250,
          lastJobId: 'ja2',
          savedPaths: JSON.stringify([join(root, 'a2-0.mp4'), 's3://bucket/a2-1.mp4']),
          takes: JSON.stringify([
            { take: 2, job_id: 'ja2', net: 150, files: [join(root, 'a2-0.mp4'), 's3://bucket/a2-1.mp4'] },
            { take: 1, job_id: 'ja1', net: 100, files: [join(root, 'a1.mp4')] },
          ]),
        },
        expect.objectContaining({
          itemId: 'b',
          attempts: 1,
          netMicros: 300,
          lastJobId: 'jb1',
          savedPaths: null,
          takes: null,
        }),
        expect.objectContaining({ itemId: 'd', state: null, attempts: 1, netMicros: 0, lastJobId: null }),
        expect.objectContaining({
          itemId: 'c',
          state: 'pending',
          attempts: 0,
          netMicros: 0,
          savedPaths: null,
        }),
      ]);

      const entries = await all(ledger.itemEntries());
      expect(
        entries.map((entry) => [entry.itemId, entry.record?.state ?? null, entry.attempt?.id ?? null]),
      ).toEqual([
        ['a', 'in_flight', a2.id],
        ['b', 'in_flight', b1.id],
        ['c', 'pending', null],
        ['d', null, d1.id],
      ]);
      expect(entries[0]!.attempt).toMatchObject({
        seq: 2,
        state: 'accepted',
        jobId: 'ja2',
        filesSaved: true,
        requestHash: 'h-a',
        requestBody: '',
      });

      // The gallery's read: the asked ids in order, then what else the ledger knows (d), as the
      // whole ledger read into memory gives it; no request body.
      const histories = await all(ledger.itemHistories(['c', 'a', 'zz']));
      expect(histories).toEqual(
        entriesOfView(
          {
            items: await ledger.listItems(),
            attempts: await ledger.listAttempts(),
            files: await ledger.listFiles(),
          },
          ['c', 'a', 'zz'],
        ),
      );
      expect(histories.map((each) => each.itemId)).toEqual(['c', 'a', 'zz', 'b', 'd']);
      expect(histories[1]!.attempts.map((each) => [each.seq, each.files])).toEqual([
        [1, [join(root, 'a1.mp4')]],
        [2, [join(root, 'a2-0.mp4'), 's3://bucket/a2-1.mp4']],
      ]);
      expect(JSON.stringify(histories)).not.toContain('"seconds"');
      expect(await ledger.filesAt(join(root, 'a2-0.mp4'))).toEqual([
        expect.objectContaining({ attemptId: a2.id, idx: 0, path: join(root, 'a2-0.mp4'), sha256: 'z' }),
      ]);
      expect(await ledger.filesAt('s3://bucket/a2-1.mp4')).toEqual([expect.objectContaining({ idx: 1 })]);
      expect(await ledger.filesAt(join(root, 'a2-1.mp4'))).toEqual([]);

      const exports = await all(ledger.itemExports(['c', 'a', 'zz', 'b']));
      expect(exports.map((each) => each.itemId)).toEqual(['c', 'a', 'zz', 'b']);
      expect(exports[1]).toMatchObject({
        attempts: 2,
        netMicros: 250,
        prompt: 'a 2',
        input: '{"seconds":5}',
        model: 'm1',
        jobId: 'ja2',
        files: [
          { idx: 0, path: join(root, 'a2-0.mp4'), sha256: 'z', bytes: 3 },
          { idx: 1, path: 's3://bucket/a2-1.mp4', sha256: 'y', bytes: 2 },
        ],
      });
      expect(exports[2]).toMatchObject({ state: null, attempts: 0, prompt: null, files: [] });
      expect(await ledger.paidItemsNotIn(['b'])).toEqual(['a']);
      expect(await ledger.paidItemsNotIn([])).toEqual(['a', 'b']);

      expect(await ledger.priceSamples()).toEqual([
        {
          id: b1.id,
          amountMicros: 300,
          samples: 3,
          sumMicros: 600,
          requestBody: '{"model":"m1","input":{"seconds":5,"definition":null}}',
        },
      ]);
      expect(await all(ledger.savedFileFacts())).toEqual([
        {
          itemId: 'a',
          path: join(root, 'a2-0.mp4'),
          bytes: 3,
          sha256: 'z',
          mtimeMs: null,
          savedAt: T0,
          jobId: 'ja2',
          expiresAt: null,
        },
        {
          itemId: 'a',
          path: 's3://bucket/a2-1.mp4',
          bytes: 2,
          sha256: 'y',
          mtimeMs: null,
          savedAt: T0,
          jobId: 'ja2',
          expiresAt: null,
        },
      ]);
      expect((await ledger.unsavedSucceeded()).map((each) => each.id)).toEqual([b1.id]);

      // A streamed manifest's one walk reads these a page of its ids at a time: the rows the whole
      // walks give of those ids, whatever the page (an id the ledger does not know has none).
      const facts = await all(ledger.savedFileFacts());
      for (const page of [['a', 'b', 'c', 'd'], ['d', 'zz', 'a'], ['c'], ['zz'], []]) {
        const asked = <T extends { itemId: string }>(rows: T[]) =>
          new Map(rows.filter((row) => page.includes(row.itemId)).map((row) => [row.itemId, row]));
        expect(await ledger.itemEntriesOf(page)).toEqual(asked(entries));
        expect(await ledger.itemSummariesOf(page)).toEqual(asked(summaries));
        expect(await ledger.savedFileFactsOf(page)).toEqual(
          facts.filter((fact) => page.includes(fact.itemId)),
        );
      }
    });

    it('reads back the jobs moderation rejected, and only those, in id order', async () => {
      const ledger = await ledgerAt();
      await ledger.putItems(
        ['a', 'b', 'c'].map((itemId) => ({ itemId, requestHash: '', state: 'pending' as const })),
      );
      const [a1, b1, c1, a2] = await ledger.prepareAttempts([
        newAttempt('a', 1),
        newAttempt('b', 1),
        newAttempt('c', 1),
        newAttempt('a', 2),
      ]);
      const rejected = { status: 'failed' as const, errorCode: 'content_rejected', errorMessage: 'no' };
      await ledger.recordAccepted(
        a1!.id,
        202,
        job('ja1', { ...rejected, amountMicros: 5, refundedMicros: 5 }),
      );
      await ledger.recordAccepted(b1!.id, 202, job('jb1', { status: 'failed', errorCode: 'model_busy' }));
      await ledger.recordAccepted(c1!.id, 202, job('jc1'));
      await ledger.recordJob(c1!.id, job('jc1', rejected));
      await ledger.recordAccepted(a2!.id, 202, job('ja2', { status: 'succeeded' }));
      expect(
        (await ledger.rejectedAttempts()).map((each) => [
          each.itemId,
          each.jobId,
          each.requestBody,
          each.errorMessage,
        ]),
      ).toEqual([
        ['a', 'ja1', body('a 1'), 'no'],
        ['c', 'jc1', body('c 1'), 'no'],
      ]);
    });

    it('sets, changes and clears keepers, all of them or none, and renames them with their item', async () => {
      const ledger = await ledgerAt();
      expect(await ledger.keepers()).toEqual([]);
      await ledger.setKeepers([
        { itemId: 'b', kept: { itemId: 'b.v2', take: 1 } },
        { itemId: 'a', kept: { itemId: 'a', take: 2 } },
      ]);
      expect(await ledger.keepers()).toEqual([
        { itemId: 'a', keptItemId: 'a', take: 2, chosenAt: T0 },
        { itemId: 'b', keptItemId: 'b.v2', take: 1, chosenAt: T0 },
      ]);
      await ledger.setKeepers([
        { itemId: 'a', kept: null },
        { itemId: 'b', kept: { itemId: 'b.v3', take: 2 } },
        { itemId: 'never-kept', kept: null },
      ]);
      expect(await ledger.keepers()).toEqual([{ itemId: 'b', keptItemId: 'b.v3', take: 2, chosenAt: T0 }]);
      await ledger.putItems([
        { itemId: 'b', requestHash: 'h1', state: 'done' },
        { itemId: 'b.v3', requestHash: 'h3', state: 'done' },
      ]);
      await ledger.renameItem('b', 'bee', []);
      await ledger.renameItem('b.v3', 'bee.v3', []);
      expect(await ledger.keepers()).toEqual([
        { itemId: 'bee', keptItemId: 'bee.v3', take: 2, chosenAt: T0 },
      ]);
    });

    it('says whether any attempt made a take after the first', async () => {
      const ledger = await ledgerAt();
      expect(await ledger.hasLaterTakes()).toBe(false);
      await ledger.putItems([{ itemId: 'a', requestHash: 'h-a', state: 'pending' }]);
      await ledger.prepareAttempt(newAttempt('a', 1));
      expect(await ledger.hasLaterTakes()).toBe(false);
      await ledger.prepareAttempt(newAttempt('a', 2, { take: 2 }));
      expect(await ledger.hasLaterTakes()).toBe(true);
    });

    it('reads its saved files under the folder the manifest is in now', async () => {
      const ledger = await ledgerAt();
      const a = await ledger.prepareAttempt(newAttempt('a', 1));
      await ledger.recordFilesSaved(a.id, [
        { idx: 0, path: join(root, 'out', 'a.mp4'), bytes: 1, sha256: 's' },
      ]);
      await ledger.close();
      const elsewhere = tempDir('mediabatch-contract-moved-');
      const moved = await ledgerAt(elsewhere);
      expect((await moved.listFiles())[0]!.path).toBe(join(elsewhere, 'out', 'a.mp4'));
      expect((await all(moved.savedFileFacts()))[0]!.path).toBe(join(elsewhere, 'out', 'a.mp4'));
      expect(await moved.wroteFile(join(elsewhere, 'out', 'a.mp4'))).toBe(true);
    });
  });
});
