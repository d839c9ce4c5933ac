import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { AttemptRecord, ItemRecord } from '../../src/ledger/records.js';
import { holdsPaidResult, pairRenames, renamedFilePath } from '../../src/runner/renames.js';

const record = (over: Partial<ItemRecord> = {}): ItemRecord => ({
  itemId: 'e2',
  requestHash: 'h1',
  state: 'done',
  retriesUsed: 0,
  errorCode: null,
  errorMessage: null,
  updatedAt: '',
  ...over,
});

const attempt = (over: Partial<AttemptRecord> = {}): AttemptRecord => ({
  id: 1,
  itemId: 'e2',
  seq: 1,
  idempotencyKey: 'k',
  requestBody: '{}',
  requestHash: 'h1',
  reservedMicros: 0,
  state: 'accepted',
  httpStatus: 202,
  httpCode: null,
  jobId: 'job_1',
  jobStatus: 'succeeded',
  amountMicros: 1,
  refundedMicros: 0,
  errorCode: null,
  errorMessage: null,
  expiresAt: null,
  filesSaved: true,
  createdAt: '',
  answeredAt: '',
  completedAt: '',
  ...over,
});

describe('pairRenames', () => {
  it('pairs a removed and a new item of the same request, and nothing else', () => {
    const pairs = pairRenames(
      [
        { id: 'e2', hash: 'h1', order: 5 },
        { id: 'gone', hash: 'h9', order: 6 },
      ],
      [
        { id: 'harbor-wide', hash: 'h1' },
        { id: 'fresh', hash: 'h2' },
      ],
    );
    expect(pairs).toEqual([{ from: 'e2', to: 'harbor-wide' }]);
  });

  it('pairs ambiguous ones in order: new in manifest order take removed in the order they were paid', () => {
    const pairs = pairRenames(
      [
        { id: 'z-late', hash: 'h', order: 9 },
        { id: 'a-early', hash: 'h', order: 2 },
        { id: 'm-middle', hash: 'h', order: 4 },
      ],
      [
        { id: 'second', hash: 'h' },
        { id: 'first', hash: 'h' },
      ],
    );
    expect(pairs).toEqual([
      { from: 'a-early', to: 'second' },
      { from: 'm-middle', to: 'first' },
    ]);
  });

  it('leaves extra new items new when fewer were removed', () => {
    expect(
      pairRenames(
        [{ id: 'old', hash: 'h', order: 1 }],
        [
          { id: 'one', hash: 'h' },
          { id: 'two', hash: 'h' },
        ],
      ),
    ).toEqual([{ from: 'old', to: 'one' }]);
  });

  const hash = fc.constantFrom('h1', 'h2', 'h3');
  const removed = fc.uniqueArray(
    fc.record({ id: fc.stringMatching(/^r[a-z0-9]{0,4}$/), hash, order: fc.integer({ min: 1, max: 50 }) }),
    { selector: (each) => each.id, maxLength: 12 },
  );
  const added = fc.uniqueArray(fc.record({ id: fc.stringMatching(/^n[a-z0-9]{0,4}$/), hash }), {
    selector: (each) => each.id,
    maxLength: 12,
  });

  it('is one to one, pairs only equal hashes, and pairs as many as each hash allows', () => {
    fc.assert(
      fc.property(removed, added, (gone, fresh) => {
        const pairs = pairRenames(gone, fresh);
        const from = pairs.map((pair) => pair.from);
        const to = pairs.map((pair) => pair.to);
        expect(new Set(from).size).toBe(from.length);
        expect(new Set(to).size).toBe(to.length);
        const hashOf = new Map([...gone, ...fresh].map((each) => [each.id, each.hash]));
        for (const pair of pairs) expect(hashOf.get(pair.from)).toBe(hashOf.get(pair.to));
        for (const h of ['h1', 'h2', 'h3']) {
          const most = Math.min(
            gone.filter((each) => each.hash === h).length,
            fresh.filter((each) => each.hash === h).length,
          );
          expect(pairs.filter((pair) => hashOf.get(pair.to) === h)).toHaveLength(most);
        }
      }),
    );
  });

  it('does not depend on the order the removed items are given in', () => {
    fc.assert(
      fc.property(removed, added, fc.integer(), (gone, fresh, seed) => {
        const shuffled = [...gone].sort((a, b) => ((a.id.length * seed) % 7) - ((b.id.length * seed) % 7));
        expect(pairRenames(shuffled, fresh)).toEqual(pairRenames(gone, fresh));
      }),
    );
  });
});

describe('holdsPaidResult', () => {
  it('a done item with saved files, or a job still going, holds a paid result', () => {
    expect(holdsPaidResult(record(), attempt())).toBe(true);
    for (const jobStatus of ['queued', 'running', 'succeeded'])
      expect(holdsPaidResult(record({ state: 'in_flight' }), attempt({ filesSaved: false, jobStatus }))).toBe(
        true,
      );
  });

  it('a failed, lost, refused or unanswered one does not, nor one answering an older request', () => {
    expect(holdsPaidResult(record(), undefined)).toBe(false);
    expect(holdsPaidResult(record(), attempt({ filesSaved: false, jobStatus: 'failed' }))).toBe(false);
    expect(holdsPaidResult(record(), attempt({ filesSaved: false, jobStatus: 'lost' }))).toBe(false);
    expect(holdsPaidResult(record(), attempt({ state: 'rejected', filesSaved: false }))).toBe(false);
    expect(holdsPaidResult(record(), attempt({ state: 'prepared', filesSaved: false }))).toBe(false);
    expect(holdsPaidResult(record({ requestHash: 'h2' }), attempt())).toBe(false);
  });
});

describe('renamedFilePath', () => {
  it('keeps the file at the same place relative to the new name', () => {
    expect(renamedFilePath({ path: '/o/e2.mp4', idx: 0 }, 1, 1, '/o/harbor-wide')).toBe('/o/harbor-wide.mp4');
    expect(renamedFilePath({ path: '/o/e2-2.mp4', idx: 1 }, 2, 1, '/o/new')).toBe('/o/new-2.mp4');
    expect(renamedFilePath({ path: '/o/e2.take1.mp4', idx: 0 }, 1, 1, '/o/new')).toBe('/o/new.take1.mp4');
    expect(renamedFilePath({ path: '/o/e2-1.take3.mp4', idx: 0 }, 2, 3, '/o/a/new')).toBe(
      '/o/a/new-1.take3.mp4',
    );
    expect(renamedFilePath({ path: 's3://b/p/e2.mp4', idx: 0 }, 1, 2, 's3://b/p/new')).toBe(
      's3://b/p/new.mp4',
    );
  });

  it('an id ending in digits is not read as a file number', () => {
    expect(renamedFilePath({ path: '/o/clip-2.mp4', idx: 0 }, 1, 1, '/o/new')).toBe('/o/new.mp4');
  });

  it('a path that does not end the way its item saved it stays where it is', () => {
    expect(renamedFilePath({ path: '/o/e2.mp4', idx: 1 }, 2, 1, '/o/new')).toBeNull();
  });
});
