import { spawn } from 'node:child_process';
import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { acquireLedgerLock, SCHEMA_VERSION } from '../../src/ledger/index.js';
import { SqliteLedger as Ledger } from '../../src/ledger/sqlite-ledger.js';
import { tempDir } from '../support/temp.js';

const here = import.meta.dirname;
const tempLedger = () => join(tempDir('mediabatch-ledger-'), 'nested', 'batch.sqlite');

function startChild(script: string, arg: string) {
  const child = spawn(process.execPath, [resolve(here, script), arg], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const firstLine = new Promise<string>((resolveLine) => {
    child.stdout.once('data', (chunk: Buffer) => resolveLine(chunk.toString().trim()));
  });
  const exited = new Promise<void>((resolveExit) => child.on('exit', () => resolveExit()));
  return { child, firstLine, exited };
}

describe('ledger file', () => {
  it('is created 0600 in WAL mode with synchronous=FULL and the current schema version', () => {
    const path = tempLedger();
    const ledger = Ledger.open(path, 'demo', '/m.yaml');
    ledger.putItems([{ itemId: 'a', requestHash: 'h', state: 'pending' }]);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(`${path}-wal`).mode & 0o777).toBe(0o600);
    ledger.close();
    const db = new Database(path);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
    const reopened = Ledger.open(path, 'demo', '/m.yaml');
    expect(reopened.settings()).toEqual({ journalMode: 'wal', synchronous: 2 });
    expect(reopened.integrityCheck()).toBe('ok');
    reopened.close();
  });

  it('migrates an existing ledger idempotently and keeps its rows', () => {
    const path = tempLedger();
    const first = Ledger.open(path, 'demo', '/m.yaml');
    first.putItems([{ itemId: 'a', requestHash: 'h', state: 'done' }]);
    first.close();
    const second = Ledger.open(path, 'demo', '/m.yaml');
    expect(second.listItems()).toMatchObject([{ itemId: 'a', state: 'done' }]);
    second.close();
  });

  it('refuses a ledger written by a newer mediabatch', () => {
    const path = tempLedger();
    Ledger.open(path, 'demo', '/m.yaml').close();
    const db = new Database(path);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => Ledger.open(path, 'demo', '/m.yaml')).toThrow(/newer than this mediabatch/);
  });

  it('a lost job keeps its charge, puts its item back to pending, and is recorded as an event', () => {
    const path = tempLedger();
    const ledger = Ledger.open(path, 'demo', '/m.yaml');
    ledger.putItems([{ itemId: 'a', requestHash: 'h', state: 'pending' }]);
    const prepared = ledger.prepareAttempt({
      itemId: 'a',
      seq: 1,
      idempotencyKey: 'k1',
      requestBody: '{}',
      requestHash: 'h',
      reservedMicros: 500_000,
    });
    ledger.recordAccepted(prepared.id, 202, {
      jobId: 'job_1',
      status: 'running',
      amountMicros: 400_000,
      refundedMicros: 0,
      errorCode: null,
      errorMessage: null,
      expiresAt: null,
      completedAt: null,
    });
    const lost = ledger.recordJobLost(prepared.id, 'gone');
    expect(lost).toMatchObject({ jobStatus: 'lost', amountMicros: 400_000, errorCode: 'job_not_found' });
    expect(ledger.listItems()).toMatchObject([{ itemId: 'a', state: 'pending', errorCode: null }]);
    expect(ledger.moneyTotals()).toEqual({ chargedMicros: 400_000, refundedMicros: 0, reservedMicros: 0 });
    ledger.close();
    const db = new Database(path, { readonly: true });
    const event = db.prepare("SELECT detail FROM events WHERE kind = 'job_lost'").get() as { detail: string };
    db.close();
    expect(JSON.parse(event.detail)).toEqual({ job: 'job_1', amount: 400_000, refunded: 0 });
  });

  it('keeps the event log append-only', () => {
    const path = tempLedger();
    const ledger = Ledger.open(path, 'demo', '/m.yaml');
    ledger.appendEvent(null, null, 'test', { a: 1 });
    ledger.close();
    const db = new Database(path);
    expect(() => db.prepare('DELETE FROM events').run()).toThrow(/append-only/);
    expect(() => db.prepare("UPDATE events SET kind = 'x'").run()).toThrow(/append-only/);
    db.close();
  });

  it('returns from prepareAttempts exactly the rows it wrote, as getAttempt reads them', () => {
    const ledger = Ledger.open(tempLedger(), 'demo', '/m.yaml');
    ledger.putItems([
      { itemId: 'a', requestHash: 'h', state: 'pending' },
      { itemId: 'b', requestHash: 'h', state: 'pending' },
    ]);
    const prepared = ledger.prepareAttempts([
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
    expect(prepared).toEqual(prepared.map((attempt) => ledger.getAttempt(attempt.id)));
    ledger.close();
  });

  it('keeps money exact: totals are integer sums of micro-dollars', () => {
    const ledger = Ledger.open(tempLedger(), 'demo', '/m.yaml');
    ledger.putItems([{ itemId: 'a', requestHash: 'h', state: 'pending' }]);
    const a = ledger.prepareAttempt({
      itemId: 'a',
      seq: 1,
      idempotencyKey: 'k1',
      requestBody: '{}',
      requestHash: 'h',
      reservedMicros: 700_001,
    });
    expect(ledger.moneyTotals()).toEqual({ chargedMicros: 0, refundedMicros: 0, reservedMicros: 700_001 });
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
    ledger.recordAccepted(a.id, 202, snapshot);
    expect(ledger.moneyTotals()).toEqual({
      chargedMicros: 100_001,
      refundedMicros: 100_001,
      reservedMicros: 0,
    });
    ledger.close();
  });
});

describe('run lock', () => {
  it('lets one process hold the ledger and frees it the moment that process dies', async () => {
    const path = tempLedger();
    Ledger.open(path, 'demo', '/m.yaml').close();
    const holder = startChild('lock-holder.mjs', path);
    expect(await holder.firstLine).toBe('held');
    expect(acquireLedgerLock(path)).toBeNull();
    holder.child.kill('SIGKILL');
    await holder.exited;
    const lock = acquireLedgerLock(path);
    expect(lock).not.toBeNull();
    lock!.release();
  });

  it('does not block readers of the ledger while held', () => {
    const path = tempLedger();
    Ledger.open(path, 'demo', '/m.yaml').close();
    const lock = acquireLedgerLock(path)!;
    const reader = Ledger.open(path, 'demo', '/m.yaml', { readonly: true });
    expect(reader.listItems()).toEqual([]);
    reader.close();
    lock.release();
  });
});

describe('crash consistency', () => {
  it('survives SIGKILL mid-write: integrity ok, and every attempt is whole (never half-recorded)', async () => {
    const path = tempLedger();
    for (const delayMs of [30, 120, 260]) {
      const writer = startChild('ledger-writer.mjs', path);
      expect(await writer.firstLine).toBe('ready');
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
