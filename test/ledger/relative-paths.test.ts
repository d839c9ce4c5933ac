import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../src/ledger/index.js';
import { openLedger } from '../../src/ledger/open-ledger.js';
import { all } from '../support/ledger-fixtures.js';
import { tempDir } from '../support/temp.js';

/*
 * Saved files' paths are stored relative to the batch root, the manifest's folder, and read back
 * absolute against wherever the manifest is now (src/ledger/batch-paths.ts).
 */

const job = (jobId: string) => ({
  jobId,
  status: 'succeeded',
  amountMicros: 40_000,
  refundedMicros: 0,
  errorCode: null,
  errorMessage: null,
  expiresAt: null,
  completedAt: null,
});

/** A ledger at `root/.mediabatch/b.sqlite` for the manifest `root/b.yaml`. */
const openAt = (root: string, options: { readonly?: boolean } = {}) => {
  const path = join(root, '.mediabatch', 'b.sqlite');
  return openLedger({ kind: 'sqlite', path, shown: path }, 'b', join(root, 'b.yaml'), options);
};

const rawPaths = (ledgerPath: string) => {
  const db = new Database(ledgerPath, { readonly: true });
  try {
    return (
      db.prepare('SELECT path FROM files ORDER BY attempt_id, idx').all() as Array<{ path: string }>
    ).map((r) => r.path);
  } finally {
    db.close();
  }
};

describe('saved-file paths in the ledger', () => {
  it('are stored relative to the manifest folder, and read absolute from where the project is now', async () => {
    const first = join(tempDir('mediabatch-paths-'), 'project');
    const ledger = await openAt(first);
    await ledger.putItems([{ itemId: 'a', requestHash: 'h', state: 'pending' }]);
    const attempt = await ledger.prepareAttempt({
      itemId: 'a',
      seq: 1,
      idempotencyKey: 'k',
      requestBody: '{}',
      requestHash: 'h',
      reservedMicros: 0,
    });
    await ledger.recordAccepted(attempt.id, 202, job('job_a'));
    const files = [
      join(first, 'out', 'b', 'a-1.mp4'),
      '/elsewhere/absolute-output-dir/a-2.mp4',
      's3://bucket/prefix/a-3.mp4',
    ];
    await ledger.recordFilesSaved(
      attempt.id,
      files.map((path, idx) => ({ idx, path, bytes: 1, sha256: 's' })),
    );
    await ledger.recordFileMoved(attempt.id, 0, join(first, 'out', 'b', 'a-1.take1.mp4'));
    await ledger.close();
    // Inside the folder: relative. An absolute output.dir does not move with the project, a bucket never.
    expect(rawPaths(join(first, '.mediabatch', 'b.sqlite'))).toEqual([
      join('out', 'b', 'a-1.take1.mp4'),
      files[1],
      files[2],
    ]);

    const moved = join(tempDir('mediabatch-paths-'), 'renamed');
    mkdirSync(join(moved, '.mediabatch'), { recursive: true });
    copyFileSync(join(first, '.mediabatch', 'b.sqlite'), join(moved, '.mediabatch', 'b.sqlite'));
    const expected = [join(moved, 'out', 'b', 'a-1.take1.mp4'), files[1], files[2]];
    for (const readonly of [true, false]) {
      const reopened = await openAt(moved, { readonly });
      expect((await reopened.listFiles()).map((file) => file.path)).toEqual(expected);
      expect(await all(reopened.itemFilePaths())).toEqual(expected.map((path) => ['a', path]));
      expect(JSON.parse((await all(reopened.itemSummaries()))[0]!.savedPaths!)).toEqual(expected);
      expect((await all(reopened.itemExports(['a'])))[0]!.files.map((file) => file.path)).toEqual(expected);
      expect(await reopened.wroteFile(expected[0]!)).toBe(true);
      expect(await reopened.wroteFile(join(first, 'out', 'b', 'a-1.take1.mp4'))).toBe(false);
      await reopened.close();
    }
  });
});

describe('migrating a ledger written with absolute paths (test/ledger/fixtures/v4-project)', () => {
  // Made by mediabatch before this migration (schema 4), as the fixture's README says: r1 redone
  // (r1.take1.mp4 moved aside, a file_moved event), r2 once, under /tmp/relpaths-fixture/out/proj.
  const fixture = join(import.meta.dirname, 'fixtures', 'v4-project', 'ledger.sqlite');
  const names = ['r1.take1.mp4', 'r2.mp4', 'r1.mp4'];

  /** The fixture's ledger in a project folder elsewhere: the project has moved since. */
  function movedFixture(): { root: string; path: string } {
    const root = join(tempDir('mediabatch-v4-'), 'moved');
    mkdirSync(join(root, '.mediabatch'), { recursive: true });
    const path = join(root, '.mediabatch', 'r.sqlite');
    copyFileSync(fixture, path);
    return { root, path };
  }

  it('makes each path relative to the folder the manifest was in, and reads them in the new place', async () => {
    const { root, path } = movedFixture();
    const ledger = await openLedger({ kind: 'sqlite', path, shown: path }, 'r', join(root, 'r.yaml'));
    expect((await ledger.listFiles()).map((file) => file.path)).toEqual(
      names.map((name) => join(root, 'out', 'r', name)),
    );
    await ledger.close();
    const db = new Database(path, { readonly: true });
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      const rows = db.prepare('SELECT path FROM files ORDER BY attempt_id').all() as Array<{ path: string }>;
      expect(rows.map((row) => row.path)).toEqual(names.map((name) => join('out', 'r', name)));
      expect(db.prepare('SELECT manifest_path FROM batches').pluck().get()).toBe(join(root, 'r.yaml'));
      // The event log is append-only: the old event keeps the path it was written with.
      const moved = db.prepare("SELECT detail FROM events WHERE kind = 'file_moved'").pluck().get() as string;
      expect(JSON.parse(moved).path).toBe('/tmp/relpaths-fixture/out/proj/out/r/r1.take1.mp4');
    } finally {
      db.close();
    }
  });

  it('is read the same way, unmigrated, by a read-only look (plan, status)', async () => {
    const { root, path } = movedFixture();
    const ledger = await openLedger({ kind: 'sqlite', path, shown: path }, 'r', join(root, 'r.yaml'), {
      readonly: true,
    });
    expect((await ledger.listFiles()).map((file) => file.path)).toEqual(
      names.map((name) => join(root, 'out', 'r', name)),
    );
    await ledger.close();
    expect(rawPaths(path)[0]).toMatch(/^\/tmp\/relpaths-fixture\/out\/proj\/out\/r\//);
  });
});
