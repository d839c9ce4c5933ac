import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import Database from 'better-sqlite3';
import { OWNER_MARKER } from '../../../src/downloads/output-owner.js';
import type { SandboxHandle, SandboxRecords } from '../../../src/sandbox/index.js';
import type { E2eProject } from '../../support/e2e.js';

export interface CheckTarget {
  sandbox: SandboxHandle;
  p: E2eProject;
  name: string;
  budgetMicros: number;
}

interface AttemptRow {
  id: number;
  item_id: string;
  seq: number;
  idempotency_key: string;
  state: 'prepared' | 'accepted' | 'rejected';
  reserved_micros: number;
  job_id: string | null;
  amount_micros: number;
  refunded_micros: number;
}

interface LedgerView {
  integrity: string;
  items: Array<{ item_id: string; state: string }>;
  attempts: AttemptRow[];
  files: Array<{ attempt_id: number; path: string; bytes: number; sha256: string }>;
}

/** Reads the ledger with plain SQL, independently of the Ledger class under test. */
function readLedger(path: string): LedgerView | null {
  if (!existsSync(path)) return null;
  const db = new Database(path, { readonly: true });
  try {
    const integrity = db.pragma('integrity_check', { simple: true }) as string;
    // A run killed before its first migration committed leaves an empty (but valid) database.
    if (!db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'files'").get())
      return { integrity, items: [], attempts: [], files: [] };
    return {
      integrity,
      items: db.prepare('SELECT item_id, state FROM items').all() as LedgerView['items'],
      attempts: db
        .prepare(
          `SELECT id, item_id, seq, idempotency_key, state, reserved_micros, job_id, amount_micros, refunded_micros
             FROM attempts ORDER BY id`,
        )
        .all() as AttemptRow[],
      files: db.prepare('SELECT attempt_id, path, bytes, sha256 FROM files').all() as LedgerView['files'],
    };
  } finally {
    db.close();
  }
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

export const FINAL_STATES = new Set(['done', 'failed', 'budget_exceeded', 'expired']);

/**
 * Checks every promise that must hold at any instant, even right after a SIGKILL. `final` adds what
 * must hold once a run finished with nothing unanswered. Returns the number of checks that passed;
 * throws with every violation found.
 */
export function checkInvariants(target: CheckTarget, final: boolean): number {
  const { sandbox, p, name, budgetMicros } = target;
  const failures: string[] = [];
  let passed = 0;
  const check = (ok: boolean, message: () => string) => {
    if (ok) passed += 1;
    else failures.push(message());
  };

  const records: SandboxRecords = sandbox.records();
  const jobs = records.jobs.filter((job) => job.metadata['mediabatch.manifest'] === name);
  const ledger = readLedger(p.ledger);
  const conflicts = records.requests.filter((request) => request.status === 409);
  check(conflicts.length === 0, () => `the service answered 409 to ${conflicts.length} request(s)`);

  // Never two net-charged jobs for an item.
  const netJobs = new Map<string, string[]>();
  for (const job of jobs) {
    if (job.amountMicros - job.refundedMicros <= 0) continue;
    const item = String(job.metadata['mediabatch.item']);
    netJobs.set(item, [...(netJobs.get(item) ?? []), job.id]);
  }
  for (const [item, ids] of netJobs) check(ids.length <= 1, () => `${item} has net-charged jobs ${ids}`);

  const sandboxNet = jobs.reduce((sum, job) => sum + job.amountMicros - job.refundedMicros, 0);
  check(sandboxNet <= budgetMicros, () => `the service charged ${sandboxNet} net, budget ${budgetMicros}`);
  if (!ledger) {
    check(jobs.length === 0, () => `${jobs.length} job(s) exist but the ledger does not`);
    if (failures.length > 0) throw new Error(failures.join('\n'));
    return passed;
  }
  check(ledger.integrity === 'ok', () => `PRAGMA integrity_check: ${ledger.integrity}`);

  let ledgerSpent = 0;
  let ledgerReserved = 0;
  let ledgerCharged = 0;
  let ledgerRefunded = 0;
  for (const attempt of ledger.attempts) {
    ledgerCharged += attempt.amount_micros;
    ledgerRefunded += attempt.refunded_micros;
    if (attempt.state === 'accepted') ledgerSpent += attempt.amount_micros - attempt.refunded_micros;
    if (attempt.state === 'prepared') ledgerReserved += attempt.reserved_micros;
  }
  check(
    ledgerSpent + ledgerReserved <= budgetMicros,
    () => `ledger spent ${ledgerSpent} + reserved ${ledgerReserved} passes the budget ${budgetMicros}`,
  );
  check(
    sandboxNet <= ledgerSpent + ledgerReserved,
    () =>
      `the service charged ${sandboxNet} net, more than the ledger knows (${ledgerSpent} + ${ledgerReserved})`,
  );

  // Every job traces back to an attempt committed before its POST, under the same key.
  const byKey = new Map(ledger.attempts.map((attempt) => [attempt.idempotency_key, attempt]));
  for (const job of jobs) {
    const attempt = byKey.get(job.idempotencyKey);
    check(attempt !== undefined, () => `job ${job.id} has a key the ledger never committed`);
    if (!attempt) continue;
    check(
      attempt.item_id === job.metadata['mediabatch.item'] &&
        String(attempt.seq) === job.metadata['mediabatch.attempt'],
      () => `job ${job.id} metadata does not match attempt ${attempt.id}`,
    );
    check(
      attempt.state === 'prepared' || (attempt.state === 'accepted' && attempt.job_id === job.id),
      () => `job ${job.id} belongs to attempt ${attempt.id} recorded as ${attempt.state} ${attempt.job_id}`,
    );
  }

  // Saved files are whole, and are the bytes the service served for that attempt's job.
  const attemptsById = new Map(ledger.attempts.map((attempt) => [attempt.id, attempt]));
  const jobsById = new Map(jobs.map((job) => [job.id, job]));
  for (const file of ledger.files) {
    const path = isAbsolute(file.path) ? file.path : join(p.dir, file.path);
    const bytes = existsSync(path) ? readFileSync(path) : null;
    check(bytes !== null && sha256(bytes) === file.sha256, () => `${file.path} is missing or altered`);
    const job = jobsById.get(attemptsById.get(file.attempt_id)?.job_id ?? '');
    check(job?.files[0]?.sha256 === file.sha256, () => `${file.path} is not what ${job?.id} served`);
  }

  // A done item has exactly one net-charged job, the one its files came from.
  for (const item of ledger.items) {
    if (item.state !== 'done') continue;
    const ids = netJobs.get(item.item_id) ?? [];
    check(ids.length === 1, () => `done item ${item.item_id} has ${ids.length} net-charged jobs`);
    const attempt = ledger.attempts.find((candidate) => candidate.job_id === ids[0]);
    const files = ledger.files.filter((file) => file.attempt_id === attempt?.id);
    check(files.length > 0, () => `done item ${item.item_id} has no saved file of job ${ids[0]}`);
  }

  if (final) {
    const sandboxCharged = jobs.reduce((sum, job) => sum + job.amountMicros, 0);
    const sandboxRefunded = jobs.reduce((sum, job) => sum + job.refundedMicros, 0);
    check(
      ledgerCharged === sandboxCharged && ledgerRefunded === sandboxRefunded,
      () =>
        `ledger charged/refunded ${ledgerCharged}/${ledgerRefunded}, service ${sandboxCharged}/${sandboxRefunded}`,
    );
    const open = ledger.attempts.filter((attempt) => attempt.state === 'prepared');
    check(open.length === 0, () => `${open.length} attempt(s) still unanswered`);
    const unsettled = ledger.items.filter((item) => !FINAL_STATES.has(item.state));
    check(unsettled.length === 0, () => `items not final: ${unsettled.map((item) => item.item_id)}`);
    const running = jobs.filter((job) => job.status === 'queued' || job.status === 'running');
    check(running.length === 0, () => `${running.length} job(s) still unfinished at the service`);
    // The folder's owner marker is bookkeeping, claimed by the first run and never an output; the
    // gallery page (index.html) is what a run writes as it ends, from the ledger.
    const names = existsSync(p.outDir)
      ? readdirSync(p.outDir).filter((f) => f !== OWNER_MARKER && f !== 'index.html')
      : [];
    const temps = names.filter((f) => f.endsWith('.mbtmp'));
    check(temps.length === 0, () => `temporary files left: ${temps}`);
    // Every file on disk is the output of a done item's one paid job.
    const done = new Set(ledger.items.filter((item) => item.state === 'done').map((item) => item.item_id));
    // Each provenance sidecar describes the very file beside it.
    for (const name of names.filter((f) => f.endsWith('.json'))) {
      const sidecar = JSON.parse(readFileSync(join(p.outDir, name), 'utf8')) as { file: { sha256: string } };
      const video = join(p.outDir, name.replace(/\.json$/, '.mp4'));
      check(
        existsSync(video) && sidecar.file.sha256 === sha256(readFileSync(video)),
        () => `${name} does not describe the file beside it`,
      );
    }
    for (const name of names.filter((f) => !f.endsWith('.mbtmp') && !f.endsWith('.json'))) {
      const itemId = name.replace(/\.[^.]+$/, '');
      const job = jobsById.get(netJobs.get(itemId)?.[0] ?? '');
      const bytes = readFileSync(join(p.outDir, name));
      check(
        done.has(itemId) && job?.files[0]?.sha256 === sha256(bytes),
        () => `${name} on disk is not the saved output of a done item`,
      );
    }
  }
  if (failures.length > 0) throw new Error(failures.join('\n'));
  return passed;
}
