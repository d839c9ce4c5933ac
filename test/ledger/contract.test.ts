import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Ledger } from '../../src/ledger/ledger.js';
import { type LedgerLocation, openLedger, postgresLocation } from '../../src/ledger/open-ledger.js';
import { body, job, newAttempt, T0 } from '../support/ledger-fixtures.js';
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
      for (const ledger of open.splice(0)) ledger.close();
      await server?.stop();
    });
    beforeEach(async () => {
      for (const ledger of open.splice(0)) ledger.close();
      root = tempDir('mediabatch-contract-');
      location =
        name === 'sqlite'
          ? { kind: 'sqlite', path: join(root, '.mediabatch', 'ledger.db'), shown: 'ledger.db' }
          : postgresLocation(await server!.createDatabase('contract'), {});
    });

    function ledgerAt(manifestDir = root, batch = 'b'): Ledger {
      const ledger = openLedger(location, batch, join(manifestDir, 'm.yaml'), { now: () => new Date(T0) });
      open.push(ledger);
      return ledger;
    }

    it('puts, updates and renames items', () => {
      const ledger = ledgerAt();
      expect(ledger.kind).toBe(name);
      ledger.putItems([
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
      ledger.putItems([{ itemId: 'b', requestHash: 'hb2', state: 'pending' }]);
      ledger.setItemState('b', { state: 'done' });
      expect(ledger.listItems()).toEqual([
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
      const attempt = ledger.prepareAttempt(newAttempt('a', 1));
      ledger.recordFilesSaved(attempt.id, [
        { idx: 0, path: join(root, 'out', 'a.mp4'), bytes: 3, sha256: 's' },
      ]);
      ledger.renameItem('a', 'c', [
        { attemptId: attempt.id, idx: 0, from: join(root, 'out', 'a.mp4'), to: join(root, 'out', 'c.mp4') },
      ]);
      expect(ledger.listItems().map((item) => item.itemId)).toEqual(['b', 'c']);
      expect(ledger.getAttempt(attempt.id).itemId).toBe('c');
      expect([...ledger.itemFilePaths()]).toEqual([['c', join(root, 'out', 'c.mp4')]]);
      expect(() => ledger.renameItem('c', 'b', [])).toThrow(/already knows b/);
      expect(() => ledger.renameItem('zz', 'yy', [])).toThrow(/no such item/);
    });

    it('prepares, accepts, rejects, follows, loses and imports attempts', () => {
      const ledger = ledgerAt();
      ledger.putItems(
        ['a', 'b', 'c'].map((itemId) => ({ itemId, requestHash: '', state: 'pending' as const })),
      );
      expect(ledger.hasAttempts()).toBe(false);
      const [a, b] = ledger.prepareAttempts([
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
      expect(ledger.getAttempt(a!.id)).toEqual(a);
      expect(ledger.hasAttempts()).toBe(true);
      expect(ledger.listItems().find((item) => item.itemId === 'a')).toMatchObject({
        state: 'in_flight',
        requestHash: 'h-a',
      });
      expect(ledger.moneyTotals()).toEqual({ chargedMicros: 0, refundedMicros: 0, reservedMicros: 1200 });

      const accepted = ledger.recordAccepted(a!.id, 202, job('j1', { amountMicros: 400 }));
      expect(accepted).toMatchObject({
        state: 'accepted',
        reservedMicros: 0,
        httpStatus: 202,
        jobId: 'j1',
        answeredAt: T0,
      });
      const rejected = ledger.recordRejected(b!.id, 422, 'bad', 'no');
      expect(rejected).toMatchObject({
        state: 'rejected',
        httpStatus: 422,
        httpCode: 'bad',
        errorCode: 'bad',
        errorMessage: 'no',
      });
      expect(ledger.moneyTotals()).toEqual({ chargedMicros: 400, refundedMicros: 0, reservedMicros: 0 });

      const done = ledger.recordJob(
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
      expect(ledger.unsavedSucceeded()).toEqual([
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
      const lost = ledger.recordJobLost(a!.id, 'gone');
      expect(lost).toMatchObject({
        jobStatus: 'lost',
        errorCode: 'job_not_found',
        errorMessage: 'gone',
        amountMicros: 400,
      });
      expect(ledger.listItems().find((item) => item.itemId === 'a')?.state).toBe('pending');

      const imported = ledger.recordImportedJob({
        itemId: 'c',
        seq: 1,
        requestBody: body('c'),
        requestHash: 'hc',
        job: job('j2', { status: 'running', amountMicros: 50 }),
      });
      expect(imported).toMatchObject({
        state: 'accepted',
        idempotencyKey: 'imported:j2',
        jobId: 'j2',
        jobStatus: 'running',
      });
      expect(ledger.listAttempts().map((each) => each.id)).toEqual([a!.id, b!.id, imported.id]);
      expect(ledger.attemptRequest(imported.id)).toEqual({ requestBody: body('c'), requestHash: 'hc' });
      expect(ledger.moneyTotals()).toEqual({ chargedMicros: 450, refundedMicros: 100, reservedMicros: 0 });

      // A job whose output import found on disk keeps what its sidecar recorded of the attempt.
      const found = ledger.recordImportedJob({
        itemId: 'c',
        seq: 2,
        requestBody: body('c'),
        requestHash: 'hc',
        job: job('j3', { status: 'succeeded', amountMicros: 0 }),
        take: 3,
        createdAt: '2026-01-02T03:04:05.000Z',
        vars: '{"x":1}',
      });
      expect(found).toMatchObject({ take: 3, createdAt: '2026-01-02T03:04:05.000Z', vars: '{"x":1}' });
      expect(imported.take).toBe(1);
    });

    it('records saved and moved files, and reads them back absolute', () => {
      const ledger = ledgerAt();
      ledger.putItems([{ itemId: 'a', requestHash: '', state: 'pending' }]);
      const first = ledger.prepareAttempt(newAttempt('a', 1));
      ledger.recordAccepted(first.id, 202, job('j1', { status: 'succeeded', amountMicros: 10 }));
      expect(ledger.savedAt(first.id)).toBeNull();
      const inside = join(root, 'out', 'a.mp4');
      const outside = '/elsewhere/a.png';
      ledger.recordFilesSaved(first.id, [
        { idx: 1, path: outside, bytes: 5, sha256: 's1', mtimeMs: 1234.7 },
        { idx: 0, path: inside, bytes: 7, sha256: 's0' },
      ]);
      expect(ledger.savedAt(first.id)).toBe(T0);
      expect(ledger.getAttempt(first.id).filesSaved).toBe(true);
      expect(ledger.listFiles()).toEqual([
        { attemptId: first.id, idx: 0, path: inside, bytes: 7, sha256: 's0', savedAt: T0, mtimeMs: null },
        { attemptId: first.id, idx: 1, path: outside, bytes: 5, sha256: 's1', savedAt: T0, mtimeMs: 1234 },
      ]);
      expect(ledger.savedFileTotals()).toEqual({ bytes: 12, outputs: 1 });
      expect(ledger.wroteFile(inside)).toBe(true);
      expect(ledger.wroteFile(join(root, 'out', 'other.mp4'))).toBe(false);
      const moved = join(root, 'out', 'a-take1.mp4');
      ledger.recordFileMoved(first.id, 0, moved);
      expect(ledger.wroteFile(inside)).toBe(false);
      expect(ledger.wroteFile(moved)).toBe(true);
      expect([...ledger.itemFilePaths()]).toEqual([
        ['a', moved],
        ['a', outside],
      ]);
    });

    it('records a reused take: no job, no charge, its files saved and its item done, and finds takes with their requests', () => {
      const ledger = ledgerAt();
      ledger.putItems([
        { itemId: 'a', requestHash: 'ha', state: 'pending' },
        { itemId: 'b', requestHash: 'hb', state: 'pending' },
      ]);
      const first = ledger.prepareAttempt(newAttempt('a', 1));
      ledger.recordAccepted(first.id, 202, job('j1', { status: 'succeeded', amountMicros: 250_000 }));
      const source = join(root, 'out', 'a.mp4');
      ledger.recordFilesSaved(first.id, [{ idx: 0, path: source, bytes: 7, sha256: 's0' }]);
      const [saved] = ledger.reusableTakes();
      expect(saved).toMatchObject({
        itemId: 'a',
        attemptId: first.id,
        take: 1,
        jobId: 'j1',
        requestBody: first.requestBody,
      });
      const copy = join(root, 'out', 'b.mp4');
      const reused = ledger.recordReusedTake({
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
      expect(ledger.listItems().find((item) => item.itemId === 'b')).toMatchObject({
        state: 'done',
        requestHash: 'hb2',
      });
      // Money is counted once: the copy charged nothing.
      expect(ledger.moneyTotals().chargedMicros).toBe(250_000);
      expect(ledger.wroteFile(copy)).toBe(true);
      expect(ledger.reusableTakes().map((take) => [take.itemId, take.jobId, take.files[0]!.path])).toEqual([
        ['a', 'j1', source],
        ['b', null, copy],
      ]);
    });

    it('binds its service once, and keeps the first', () => {
      const ledger = ledgerAt();
      expect(ledger.service()).toBeNull();
      expect(ledger.bindService('https://one.example')).toEqual({
        identity: 'https://one.example',
        boundAt: T0,
      });
      expect(ledger.bindService('https://two.example')).toEqual({
        identity: 'https://one.example',
        boundAt: T0,
      });
      expect(ledger.service()).toEqual({ identity: 'https://one.example', boundAt: T0 });
    });

    it('records runs and events, and names the last run', () => {
      const ledger = ledgerAt();
      expect(ledger.lastRun()).toBeNull();
      const first = ledger.startRun(11);
      ledger.appendEvent(null, null, 'note', { a: 1 });
      ledger.appendEvent('a', null, 'bare');
      ledger.endRun(first, 0);
      ledger.startRun(22);
      expect(ledger.lastRun()).toEqual({ pid: 22, startedAt: T0 });
    });

    it('commits atomically: all of a block or none of it', () => {
      const ledger = ledgerAt();
      expect(() =>
        ledger.atomically(() => {
          ledger.putItems([{ itemId: 'a', requestHash: '', state: 'pending' }]);
          throw new Error('stop');
        }),
      ).toThrow('stop');
      expect(ledger.listItems()).toEqual([]);
      ledger.groupCommits(50);
      ledger.atomically(() => ledger.putItems([{ itemId: 'a', requestHash: '', state: 'pending' }]));
      ledger.flush();
      expect(ledger.listItems()).toHaveLength(1);
    });

    it('gives one row per item in the views', () => {
      const ledger = ledgerAt();
      ledger.putItems(
        ['a', 'b', 'c'].map((itemId) => ({ itemId, requestHash: '', state: 'pending' as const })),
      );
      // a: two takes saved; b: one charged attempt, unsaved; c: nothing; d: attempts only.
      const a1 = ledger.prepareAttempt(newAttempt('a', 1));
      ledger.recordAccepted(
        a1.id,
        202,
        job('ja1', { status: 'succeeded', amountMicros: 100, completedAt: 't1' }),
      );
      ledger.recordFilesSaved(a1.id, [
        { idx: 0, path: join(root, 'a1.mp4'), bytes: 1, sha256: 'x', mtimeMs: 5 },
      ]);
      const a2 = ledger.prepareAttempt(newAttempt('a', 2, { take: 2 }));
      ledger.recordAccepted(
        a2.id,
        202,
        job('ja2', { status: 'succeeded', amountMicros: 200, refundedMicros: 50 }),
      );
      ledger.recordFilesSaved(a2.id, [
        { idx: 1, path: 's3://bucket/a2-1.mp4', bytes: 2, sha256: 'y' },
        { idx: 0, path: join(root, 'a2-0.mp4'), bytes: 3, sha256: 'z' },
      ]);
      const b1 = ledger.prepareAttempt(newAttempt('b', 1));
      ledger.recordAccepted(
        b1.id,
        202,
        job('jb1', { status: 'succeeded', amountMicros: 300, expiresAt: 'e' }),
      );
      const d1 = ledger.prepareAttempt(newAttempt('d', 1));

      const summaries = [...ledger.itemSummaries()];
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

      const entries = [...ledger.itemEntries()];
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

      const exports = [...ledger.itemExports(['c', 'a', 'zz', 'b'])];
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
      expect(ledger.paidItemsNotIn(['b'])).toEqual(['a']);
      expect(ledger.paidItemsNotIn([])).toEqual(['a', 'b']);

      expect(ledger.priceSamples()).toEqual([
        {
          id: b1.id,
          amountMicros: 300,
          samples: 3,
          sumMicros: 600,
          requestBody: '{"model":"m1","input":{"seconds":5,"definition":null}}',
        },
      ]);
      expect([...ledger.savedFileFacts()]).toEqual([
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
      expect(ledger.unsavedSucceeded().map((each) => each.id)).toEqual([b1.id]);
    });

    it('sets, changes and clears keepers, all of them or none, and renames them with their item', () => {
      const ledger = ledgerAt();
      expect(ledger.keepers()).toEqual([]);
      ledger.setKeepers([
        { itemId: 'b', kept: { itemId: 'b.v2', take: 1 } },
        { itemId: 'a', kept: { itemId: 'a', take: 2 } },
      ]);
      expect(ledger.keepers()).toEqual([
        { itemId: 'a', keptItemId: 'a', take: 2, chosenAt: T0 },
        { itemId: 'b', keptItemId: 'b.v2', take: 1, chosenAt: T0 },
      ]);
      ledger.setKeepers([
        { itemId: 'a', kept: null },
        { itemId: 'b', kept: { itemId: 'b.v3', take: 2 } },
        { itemId: 'never-kept', kept: null },
      ]);
      expect(ledger.keepers()).toEqual([{ itemId: 'b', keptItemId: 'b.v3', take: 2, chosenAt: T0 }]);
      expect(() =>
        ledger.atomically(() => {
          ledger.setKeepers([{ itemId: 'c', kept: { itemId: 'c', take: 1 } }]);
          throw new Error('stop');
        }),
      ).toThrow('stop');
      expect(ledger.keepers().map((keeper) => keeper.itemId)).toEqual(['b']);
      ledger.putItems([
        { itemId: 'b', requestHash: 'h1', state: 'done' },
        { itemId: 'b.v3', requestHash: 'h3', state: 'done' },
      ]);
      ledger.renameItem('b', 'bee', []);
      ledger.renameItem('b.v3', 'bee.v3', []);
      expect(ledger.keepers()).toEqual([{ itemId: 'bee', keptItemId: 'bee.v3', take: 2, chosenAt: T0 }]);
    });

    it('says whether any attempt made a take after the first', () => {
      const ledger = ledgerAt();
      expect(ledger.hasLaterTakes()).toBe(false);
      ledger.putItems([{ itemId: 'a', requestHash: 'h-a', state: 'pending' }]);
      ledger.prepareAttempt(newAttempt('a', 1));
      expect(ledger.hasLaterTakes()).toBe(false);
      ledger.prepareAttempt(newAttempt('a', 2, { take: 2 }));
      expect(ledger.hasLaterTakes()).toBe(true);
    });

    it('reads its saved files under the folder the manifest is in now', () => {
      const ledger = ledgerAt();
      const a = ledger.prepareAttempt(newAttempt('a', 1));
      ledger.recordFilesSaved(a.id, [{ idx: 0, path: join(root, 'out', 'a.mp4'), bytes: 1, sha256: 's' }]);
      ledger.close();
      const elsewhere = tempDir('mediabatch-contract-moved-');
      const moved = ledgerAt(elsewhere);
      expect(moved.listFiles()[0]!.path).toBe(join(elsewhere, 'out', 'a.mp4'));
      expect([...moved.savedFileFacts()][0]!.path).toBe(join(elsewhere, 'out', 'a.mp4'));
      expect(moved.wroteFile(join(elsewhere, 'out', 'a.mp4'))).toBe(true);
    });
  });
});
