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

  it('breaks a tie in when removed items were paid by their ids, whatever order they are given in', () => {
    const a = { id: 'a', hash: 'h', order: 3 };
    const b = { id: 'b', hash: 'h', order: 3 };
    const c = { id: 'c', hash: 'h', order: 3 };
    const z = { id: 'z', hash: 'h', order: 1 };
    const tied = [b, a, c, z];
    const fresh = [
      { id: 'n1', hash: 'h' },
      { id: 'n2', hash: 'h' },
      { id: 'n3', hash: 'h' },
      { id: 'n4', hash: 'h' },
    ];
    const expected = [
      { from: 'z', to: 'n1' },
      { from: 'a', to: 'n2' },
      { from: 'b', to: 'n3' },
      { from: 'c', to: 'n4' },
    ];
    for (const given of [tied, [...tied].reverse(), [c, b, z, a], [a, b, c, z]])
      expect(pairRenames(given, fresh)).toEqual(expected);
    // With fewer new items, the ones left removed are the last paid, the larger id on a tie.
    expect(pairRenames([...tied].reverse(), fresh.slice(0, 2))).toEqual(expected.slice(0, 2));
  });

  it('pairs a new id listed twice only once, leaving the other removed item removed', () => {
    const gone = [
      { id: 'old1', hash: 'h', order: 1 },
      { id: 'old2', hash: 'h', order: 2 },
      { id: 'old3', hash: 'k', order: 3 },
    ];
    expect(
      pairRenames(gone, [
        { id: 'twice', hash: 'h' },
        { id: 'twice', hash: 'h' },
        { id: 'twice', hash: 'k' },
      ]),
    ).toEqual([{ from: 'old1', to: 'twice' }]);
    // An id is taken only once it is paired: a first listing with nothing to take leaves it free.
    expect(
      pairRenames(gone, [
        { id: 'twice', hash: 'none' },
        { id: 'twice', hash: 'k' },
        { id: 'other', hash: 'h' },
      ]),
    ).toEqual([
      { from: 'old3', to: 'twice' },
      { from: 'old1', to: 'other' },
    ]);
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

  it('with its files not saved, only a job queued, running or succeeded holds one: each status on its own', () => {
    const holds = (jobStatus: string | null) =>
      holdsPaidResult(record({ state: 'in_flight' }), attempt({ filesSaved: false, jobStatus }));
    expect(['queued', 'running', 'succeeded'].filter(holds)).toEqual(['queued', 'running', 'succeeded']);
    for (const jobStatus of ['failed', 'canceled', 'lost', 'expired', '', 'QUEUED', null])
      expect(holds(jobStatus)).toBe(false);
    // Saved files hold the result whatever the status says.
    expect(holdsPaidResult(record(), attempt({ filesSaved: true, jobStatus: null }))).toBe(true);
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

  it('takes the extension from the file name only: dots in folder names, no extension, a hidden name', () => {
    expect(renamedFilePath({ path: '/out.v2/e2', idx: 0 }, 1, 1, '/out.v2/new')).toBe('/out.v2/new');
    expect(renamedFilePath({ path: '/out.v2/e2.mp4', idx: 0 }, 1, 1, '/out.v2/new')).toBe('/out.v2/new.mp4');
    expect(renamedFilePath({ path: '/o/e2', idx: 0 }, 1, 1, '/o/new')).toBe('/o/new');
    expect(renamedFilePath({ path: 'e2', idx: 0 }, 1, 1, 'new')).toBe('new');
    expect(renamedFilePath({ path: '/o.d/e2-2', idx: 1 }, 2, 1, '/o.d/new')).toBe('/o.d/new-2');
    // An id may hold dots; the extension is what follows the last one.
    expect(renamedFilePath({ path: '/o/shot.v2.mp4', idx: 0 }, 1, 1, '/o/new')).toBe('/o/new.mp4');
    // A name that starts with its only dot is all stem, as path.extname has it.
    expect(renamedFilePath({ path: '/o/.e2', idx: 0 }, 1, 1, '/o/.new')).toBe('/o/.new');
    expect(renamedFilePath({ path: '.e2', idx: 0 }, 1, 1, '.new')).toBe('.new');
  });

  it('reads Windows separators as folder ends, mixed with slashes too', () => {
    expect(renamedFilePath({ path: 'C:\\out.v2\\e2', idx: 0 }, 1, 1, 'C:\\out.v2\\new')).toBe(
      'C:\\out.v2\\new',
    );
    expect(renamedFilePath({ path: 'C:\\o\\e2-1.take2.mp4', idx: 0 }, 3, 2, 'C:\\o\\new')).toBe(
      'C:\\o\\new-1.take2.mp4',
    );
    expect(renamedFilePath({ path: 'C:/o.d\\e2', idx: 0 }, 1, 1, 'C:/o.d\\new')).toBe('C:/o.d\\new');
    expect(renamedFilePath({ path: 'C:\\o.d/e2', idx: 0 }, 1, 1, 'C:\\o.d/new')).toBe('C:\\o.d/new');
  });

  it("a suffix with no name before it is not the item's file: an empty stem stays where it is", () => {
    expect(renamedFilePath({ path: '/o/-2.mp4', idx: 1 }, 2, 1, '/o/new')).toBeNull();
    expect(renamedFilePath({ path: '/o/.take1.mp4', idx: 0 }, 1, 1, '/o/new')).toBe('/o/new.mp4');
    expect(renamedFilePath({ path: '/o/-1.take1.mp4', idx: 0 }, 2, 1, '/o/new')).toBeNull();
    expect(renamedFilePath({ path: 'C:\\o\\-2.mp4', idx: 1 }, 2, 1, 'C:\\o\\new')).toBeNull();
    expect(renamedFilePath({ path: 'C:\\o\\-1.take1.mp4', idx: 0 }, 2, 1, 'C:\\o\\new')).toBeNull();
    expect(renamedFilePath({ path: '-2.mp4', idx: 1 }, 2, 1, 'new')).toBeNull();
    expect(renamedFilePath({ path: '', idx: 0 }, 1, 1, 'new')).toBeNull();
    // A stem of one character is a name.
    expect(renamedFilePath({ path: '/o/x-2.mp4', idx: 1 }, 2, 1, '/o/new')).toBe('/o/new-2.mp4');
    expect(renamedFilePath({ path: 'C:\\o\\x-2.mp4', idx: 1 }, 2, 1, 'C:\\o\\new')).toBe('C:\\o\\new-2.mp4');
  });

  it('a path that does not end the way its item saved it stays where it is', () => {
    expect(renamedFilePath({ path: '/o/e2.mp4', idx: 1 }, 2, 1, '/o/new')).toBeNull();
  });
});
