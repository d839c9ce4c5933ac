import { randomBytes, randomUUID } from 'node:crypto';
import { join, relative } from 'node:path';
import Database from 'better-sqlite3';
import { openLedger } from '../../src/ledger/open-ledger.js';
import { loadManifest, type Manifest } from '../../src/manifest/index.js';
import { buildRequestBody, requestHash } from '../../src/runner/request.js';
import { benchDir, sizeOnDisk } from './fixtures.js';
import { cpuMs, expectExit, rssMb, runCli } from './spawn-cli.js';

/**
 * Scenario 4: `plan` and `status` over a 100,000-item JSONL manifest whose ledger says every item
 * is done. The ledger is created and migrated by the real Ledger class, then filled with direct
 * SQL in one transaction, row for row what a run writes per item: the item (done), one accepted
 * attempt with its exact request body, one saved file and the four events a run appends
 * (attempt_prepared, job_accepted, files_saved, item_done).
 */
export const BIG_ITEMS = 100_000;
const NAME = 'bench-large';
const VIDEO_BYTES = 2235;

export interface BigLedger {
  items: number;
  dir: string;
  manifestFile: string;
  ledgerPath: string;
  ledgerBytes: number;
  buildMs: number;
}

export async function buildBigLedger(items = BIG_ITEMS): Promise<BigLedger> {
  const started = performance.now();
  const lines: string[] = [];
  for (let i = 1; i <= items; i += 1) {
    const id = `shot-${String(i).padStart(6, '0')}`;
    lines.push(JSON.stringify({ id, prompt: `Catalogue clip ${i}: a paper lantern drifting at dusk` }));
  }
  const dir = benchDir('large', {
    'batch.yaml': `version: 1\nname: ${NAME}\ninput: {seconds: 2, definition: 480p}\nitems_from: items.jsonl\n`,
    'items.jsonl': `${lines.join('\n')}\n`,
  });
  const manifestFile = join(dir, 'batch.yaml');
  const loaded = loadManifest(manifestFile);
  if (!loaded.ok) throw new Error(`bench manifest invalid: ${JSON.stringify(loaded.problems[0])}`);
  const ledgerPath = join(dir, '.mediabatch', `${NAME}.sqlite`);
  const ledger = await openLedger(
    { kind: 'sqlite', path: ledgerPath, shown: ledgerPath },
    NAME,
    manifestFile,
  );
  const batchId = ledger.batchId;
  await ledger.close();
  fill(ledgerPath, batchId, loaded.manifest);
  return {
    items,
    dir,
    manifestFile,
    ledgerPath,
    ledgerBytes: sizeOnDisk(ledgerPath) + sizeOnDisk(`${ledgerPath}-wal`) + sizeOnDisk(`${ledgerPath}-shm`),
    buildMs: performance.now() - started,
  };
}

function fill(ledgerPath: string, batchId: number, manifest: Manifest): void {
  const db = new Database(ledgerPath);
  db.pragma('synchronous = OFF');
  const t0 = Date.now() - 3_600_000;
  const iso = (offsetMs: number) => new Date(t0 + offsetMs).toISOString();
  const item = db.prepare(
    `INSERT INTO items (batch_id, item_id, request_hash, state, retries_used, error_code, error_message, updated_at)
     VALUES (?, ?, ?, 'done', 0, NULL, NULL, ?)`,
  );
  const attempt = db.prepare(
    `INSERT INTO attempts (batch_id, item_id, seq, idempotency_key, request_body, request_hash, reserved_micros, state,
       http_status, job_id, job_status, amount_micros, refunded_micros, expires_at, files_saved, created_at,
       answered_at, completed_at)
     VALUES (?, ?, 1, ?, ?, ?, 0, 'accepted', 202, ?, 'succeeded', 40000, 0, ?, 1, ?, ?, ?)`,
  );
  const file = db.prepare(
    'INSERT INTO files (attempt_id, idx, path, bytes, sha256, saved_at) VALUES (?, 0, ?, ?, ?, ?)',
  );
  const event = db.prepare(
    'INSERT INTO events (at, batch_id, item_id, attempt_id, kind, detail) VALUES (?, ?, ?, ?, ?, ?)',
  );
  db.transaction(() => {
    manifest.items.forEach((entry, index) => {
      const created = iso(index * 30);
      const completed = iso(index * 30 + 4000);
      const saved = iso(index * 30 + 4100);
      const jobId = `job_${randomBytes(12).toString('hex')}`;
      const hash = requestHash(entry);
      const body = buildRequestBody(manifest.name, entry, 1, null);
      const info = attempt.run(
        batchId,
        entry.id,
        `mb_${randomUUID()}`,
        body,
        hash,
        jobId,
        new Date(Date.parse(completed) + 48 * 3_600_000).toISOString(),
        created,
        created,
        completed,
      );
      const attemptId = Number(info.lastInsertRowid);
      item.run(batchId, entry.id, hash, saved);
      const path = join(manifest.outputDir, `${entry.id}.mp4`);
      file.run(attemptId, path, VIDEO_BYTES, randomBytes(32).toString('hex'), saved);
      event.run(created, batchId, entry.id, attemptId, 'attempt_prepared', '{"seq":1,"reserved":0}');
      event.run(
        created,
        batchId,
        entry.id,
        attemptId,
        'job_accepted',
        JSON.stringify({ job: jobId, status: 'queued', amount: 40000 }),
      );
      event.run(saved, batchId, entry.id, attemptId, 'files_saved', '{"count":1}');
      event.run(saved, batchId, entry.id, null, 'item_done', null);
    });
    db.prepare(
      'INSERT INTO runs (batch_id, pid, started_at, ended_at, exit_code) VALUES (?, ?, ?, ?, 0)',
    ).run(batchId, process.pid, iso(0), iso(manifest.items.length * 30 + 5000));
  })();
  db.close();
}

export type BigCommand =
  | 'status'
  | 'status --json'
  | 'plan'
  | 'plan --json'
  | 'export'
  | 'export --format csv';
export const BIG_COMMANDS: readonly BigCommand[] = ['status', 'status --json', 'plan', 'plan --json'];
/** Scenario 9, on the same ledger: `export` must stream, at most 2 s and 200 MB for 100,000 items. */
export const EXPORT_COMMANDS: readonly BigCommand[] = ['export', 'export --format csv'];

export interface BigSample {
  wallMs: number;
  /** The child's own user + system CPU time: wall time also holds waiting for a busy machine. */
  cpuMs: number;
  peakRssMb: number;
  stdoutBytes: number;
}

/** One `mediabatch plan|status` over the big ledger; checks that it saw every item done. */
export async function bigCommand(
  big: BigLedger,
  command: BigCommand,
  /** Another build's dist/cli/main.js, a reference (default: this tree's). */
  cli?: string,
): Promise<BigSample> {
  const [name, ...flags] = command.split(' ') as [string, ...string[]];
  const json = flags.includes('--json');
  const which = cli === undefined ? {} : { cli };
  if (name === 'export') return exportCommand(big, flags, which);
  // A million items' JSON is more than a string holds: its ends are kept, where the totals are.
  const ends = json && big.items > BIG_ITEMS ? 1 << 20 : undefined;
  const run = await runCli(
    [name, relative(big.dir, big.manifestFile), '--ledger', big.ledgerPath, ...flags],
    {
      cwd: big.dir,
      discardStdout: !json,
      timeoutMs: 1_800_000,
      ...(ends ? { keepEnds: ends } : {}),
      ...which,
    },
  );
  expectExit(run, 0, `mediabatch ${command}`);
  if (json) {
    // The ledger records a saved file per item that the fixture never writes: status counts the items
    // done, plan sees their files missing and would fetch them again for free (refetch).
    const totals = (ends ? totalsIn(`${run.stdout}\n${run.stdoutTail}`) : JSON.parse(run.stdout).totals) as {
      done: number;
      refetch?: number;
    };
    const settled = totals.done + (totals.refetch ?? 0);
    if (settled !== big.items) throw new Error(`${command}: ${settled} items done or to fetch again`);
  }
  return {
    wallMs: run.wallMs,
    cpuMs: cpuMs(run.stats),
    peakRssMb: rssMb(run.stats),
    stdoutBytes: run.stdoutBytes,
  };
}

/** The document's `totals` member, found in the text kept of it (a member of the top level, its own line). */
function totalsIn(text: string): unknown {
  const start = text.indexOf('\n  "totals": {');
  const end = text.indexOf('\n  }', start);
  if (start < 0 || end < 0) throw new Error('no totals in the document kept');
  return JSON.parse(text.slice(start + '\n  "totals": '.length, end + '\n  }'.length));
}

/** One `mediabatch export` over the big ledger to stdout; checks one done record per item. */
async function exportCommand(
  big: BigLedger,
  flags: readonly string[],
  which: { cli?: string },
): Promise<BigSample> {
  const csv = flags.includes('csv');
  // Counted as they come: a million records are more than a string holds.
  let lines = 0;
  let done = 0;
  const onLine = (line: string) => {
    if (line === '') return;
    lines += 1;
    if (csv ? line.includes(',done,') : line.includes('"state":"done"')) done += 1;
  };
  const run = await runCli(
    ['export', relative(big.dir, big.manifestFile), '--ledger', big.ledgerPath, ...flags],
    { cwd: big.dir, timeoutMs: 900_000, discardStdout: true, onLine, ...which },
  );
  expectExit(run, 0, `mediabatch export ${flags.join(' ')}`);
  if (lines !== big.items + (csv ? 1 : 0) || done !== big.items)
    throw new Error(`export ${flags.join(' ')}: ${lines} lines, ${done} done records`);
  return {
    wallMs: run.wallMs,
    cpuMs: cpuMs(run.stats),
    peakRssMb: rssMb(run.stats),
    stdoutBytes: run.stdoutBytes,
  };
}
