import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { acquireLedgerLock, SCHEMA_VERSION } from '../../src/ledger/index.js';
import type { KyselyLedger } from '../../src/ledger/kysely-ledger.js';
import { openLedger } from '../../src/ledger/open-ledger.js';
import { tempDir } from '../support/temp.js';

const here = import.meta.dirname;
const tempLedger = () => join(tempDir('mediabatch-ledger-'), 'nested', 'batch.sqlite');

/** The ledger file `path` for the batch `demo`, as a run (or, read-only, a report) opens it. */
const openAt = (path: string, options: { readonly?: boolean } = {}) =>
  openLedger({ kind: 'sqlite', path, shown: path }, 'demo', '/m.yaml', options) as Promise<KyselyLedger>;

/** A helper script run by Node on the sources themselves (tsx), so that no build is needed. */
function startChild(script: string, arg: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(here, script), arg], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const firstLine = new Promise<string>((resolveLine) => {
    child.stdout.once('data', (chunk: Buffer) => resolveLine(chunk.toString().trim()));
  });
  const exited = new Promise<void>((resolveExit) => child.on('exit', () => resolveExit()));
  return { child, firstLine, exited };
}

describe('ledger file', () => {
  it('is created 0600 in WAL mode with synchronous=FULL and the current schema version', async () => {
    const path = tempLedger();
    const ledger = await openAt(path);
    await ledger.putItems([{ itemId: 'a', requestHash: 'h', state: 'pending' }]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(`${path}-wal`).mode & 0o777).toBe(0o600);
    await ledger.close();
    const db = new Database(path);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
    const reopened = await openAt(path);
    expect(await reopened.settings()).toEqual({ journalMode: 'wal', synchronous: 2 });
    expect(await reopened.integrityCheck()).toBe('ok');
    await reopened.close();
  });

  it('migrates an existing ledger idempotently and keeps its rows', async () => {
    const path = tempLedger();
    const first = await openAt(path);
    await first.putItems([{ itemId: 'a', requestHash: 'h', state: 'done' }]);
    await first.close();
    const second = await openAt(path);
    expect(await second.listItems()).toMatchObject([{ itemId: 'a', state: 'done' }]);
    await second.close();
  });

  it('refuses a ledger written by a newer mediabatch', async () => {
    const path = tempLedger();
    await (await openAt(path)).close();
    const db = new Database(path);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    await expect(openAt(path)).rejects.toThrow(/newer than this mediabatch/);
  });

  it('a lost job keeps its charge, puts its item back to pending, and is recorded as an event', async () => {
    const path = tempLedger();
    const ledger = await openAt(path);
    await ledger.putItems([{ itemId: 'a', requestHash: 'h', state: 'pending' }]);
    const prepared = await ledger.prepareAttempt({
      itemId: 'a',
      seq: 1,
      idempotencyKey: 'k1',
      requestBody: '{}',
      requestHash: 'h',
      reservedMicros: 500_000,
    });
    await ledger.recordAccepted(prepared.id, 202, {
      jobId: 'job_1',
      status: 'running',
      amountMicros: 400_000,
      refundedMicros: 0,
      errorCode: null,
      errorMessage: null,
      expiresAt: null,
      completedAt: null,
    });
    const lost = await ledger.recordJobLost(prepared.id, 'gone');
    expect(lost).toMatchObject({ jobStatus: 'lost', amountMicros: 400_000, errorCode: 'job_not_found' });
    expect(await ledger.listItems()).toMatchObject([{ itemId: 'a', state: 'pending', errorCode: null }]);
    expect(await ledger.moneyTotals()).toEqual({
      chargedMicros: 400_000,
      refundedMicros: 0,
      reservedMicros: 0,
    });
    await ledger.close();
    const db = new Database(path, { readonly: true });
    const event = db.prepare("SELECT detail FROM events WHERE kind = 'job_lost'").get() as { detail: string };
    db.close();
    expect(JSON.parse(event.detail)).toEqual({ job: 'job_1', amount: 400_000, refunded: 0 });
  });

  it('keeps the event log append-only', async () => {
    const path = tempLedger();
    const ledger = await openAt(path);
    await ledger.appendEvent(null, null, 'test', { a: 1 });
    await ledger.close();
    const db = new Database(path);
    expect(() => db.prepare('DELETE FROM events').run()).toThrow(/append-only/);
    expect(() => db.prepare("UPDATE events SET kind = 'x'").run()).toThrow(/append-only/);
    db.close();
  });

  it('returns from prepareAttempts exactly the rows it wrote, as getAttempt reads them', async () => {
    const ledger = await openAt(tempLedger());
    await ledger.putItems([
      { itemId: 'a', requestHash: 'h', state: 'pending' },
      { itemId: 'b', requestHash: 'h', state: 'pending' },
    ]);
    const prepared = await ledger.prepareAttempts([
      {
        itemId: 'a',
        seq: 1,
        idempotencyKey: 'k1',
        requestBody: '{"a":1}',
        requestHash: 'h',
        reservedMicros: 5,
      },
      {
        itemId: 'b',
        seq: 2,
        idempotencyKey: 'k2',
        requestBody: '{}',
        requestHash: 'h2',
        reservedMicros: 0,
        take: 3,
      },
    ]);
    expect(prepared).toEqual(await Promise.all(prepared.map((attempt) => ledger.getAttempt(attempt.id))));
    await ledger.close();
  });

  it('keeps money exact: totals are integer sums of micro-dollars', async () => {
    const ledger = await openAt(tempLedger());
    await ledger.putItems([{ itemId: 'a', requestHash: 'h', state: 'pending' }]);
    const a = await ledger.prepareAttempt({
      itemId: 'a',
      seq: 1,
      idempotencyKey: 'k1',
      requestBody: '{}',
      requestHash: 'h',
      reservedMicros: 700_001,
    });
    expect(await ledger.moneyTotals()).toEqual({
      chargedMicros: 0,
      refundedMicros: 0,
      reservedMicros: 700_001,
    });
    const snapshot = {
      jobId: 'job_1',
      status: 'failed',
      amountMicros: 100_001,
      refundedMicros: 100_001,
      errorCode: 'x',
      errorMessage: 'y',
      expiresAt: null,
      completedAt: null,
    };
    await ledger.recordAccepted(a.id, 202, snapshot);
    expect(await ledger.moneyTotals()).toEqual({
      chargedMicros: 100_001,
      refundedMicros: 100_001,
      reservedMicros: 0,
    });
    await ledger.close();
  });
});

describe('run lock', () => {
  it('lets one process hold the ledger and frees it the moment that process dies', async () => {
    const path = tempLedger();
    await (await openAt(path)).close();
    const holder = startChild('lock-holder.mjs', path);
    expect(await holder.firstLine).toBe('held');
    expect(acquireLedgerLock(path)).toBeNull();
    holder.child.kill('SIGKILL');
    await holder.exited;
    const lock = acquireLedgerLock(path);
    expect(lock).not.toBeNull();
    lock!.release();
  });

  it('does not block readers of the ledger while held', async () => {
    const path = tempLedger();
    await (await openAt(path)).close();
    const lock = acquireLedgerLock(path)!;
    const reader = await openAt(path, { readonly: true });
    expect(await reader.listItems()).toEqual([]);
    await reader.close();
    lock.release();
  });
});

describe('crash consistency', () => {
  it('survives SIGKILL mid-write: integrity ok, and every attempt is whole (never half-recorded)', async () => {
    const path = tempLedger();
    for (const delayMs of [30, 120, 260]) {
      const writer = startChild('ledger-writer.mjs', path);
      expect(await writer.firstLine).toBe('writing');
      await new Promise((r) => setTimeout(r, delayMs));
      writer.child.kill('SIGKILL');
      await writer.exited;
      const db = new Database(path);
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      const rows = db
        .prepare('SELECT state, job_id, reserved_micros, amount_micros FROM attempts')
        .all() as Array<{
        state: string;
        job_id: string | null;
        reserved_micros: number;
        amount_micros: number;
      }>;
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        // prepared rows keep their reservation; accepted rows have the job and the charge, never half of it.
        if (row.state === 'prepared')
          expect(row).toMatchObject({ job_id: null, reserved_micros: 1000, amount_micros: 0 });
        else expect(row).toMatchObject({ state: 'accepted', reserved_micros: 0, amount_micros: 1000 });
        expect(row.job_id === null).toBe(row.state === 'prepared');
      }
      const prepared = rows.filter((row) => row.state === 'prepared').length;
      expect(prepared).toBeLessThanOrEqual(1);
      db.close();
      // The next writer starts over with fresh keys on the same file.
      const wipe = new Database(path);
      wipe.exec('DELETE FROM files; DELETE FROM attempts;');
      wipe.close();
    }
  });
});
