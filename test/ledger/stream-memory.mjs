// The streamed reads of status, plan and export over a large batch: time and peak RSS of each, in a
// process of its own (docs/performance.md: a million items under 300 MB). Run on the sources:
//
//   node --import tsx test/ledger/stream-memory.mjs sqlite 1000000 [FILE]
//   node --import tsx test/ledger/stream-memory.mjs postgres 1000000 postgres://user:pw@host:port/db
//
// The batch is written straight into the tables (one attempt per item, nine in ten saved with one
// file) of a new file (kept when named) or an empty database, then each read runs in a child
// process that opens the ledger read-only, as the commands do. `... FILE READ` runs one read
// on a ledger already written. With BUILT=1 (after `npm run build`), the children run the built
// ledger under plain node, as the CLI does: tsx alone adds some 50 MB to every figure.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';

const built = process.env.BUILT === '1';
const { openLedger, postgresLocation } = await import(
  built ? '../../dist/ledger/open-ledger.js' : '../../src/ledger/open-ledger.ts'
);

const READS = (
  process.env.READS ?? 'itemSummaries,itemEntries,itemExports,savedFileFacts,itemFilePaths,paidItemsNotIn'
).split(',');
const [kind, count, where, read] = process.argv.slice(2);

const locationOf = (at) => (kind === 'sqlite' ? { kind, path: at, shown: at } : postgresLocation(at, {}));
const ROWS = (n) => `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${n})`;

/** Items i000001..., each with one accepted attempt; nine in ten saved, with one file. */
async function fill(at, n) {
  const ledger = await openLedger(locationOf(at), 'big', '/big/batch.yaml');
  const batch = ledger.batchId;
  await ledger.close();
  const id = (i) =>
    kind === 'sqlite' ? `'i' || substr('000000' || ${i}, -7)` : `'i' || lpad(${i}::text, 7, '0')`;
  const series =
    kind === 'sqlite' ? `${ROWS(n)} SELECT i FROM s` : `SELECT i FROM generate_series(1, ${n}) AS s(i)`;
  const statements = [
    `INSERT INTO items (batch_id, item_id, request_hash, state, retries_used, updated_at)
       SELECT ${batch}, ${id('i')}, 'h', 'done', 0, 't' FROM (${series}) q`,
    `INSERT INTO attempts (batch_id, item_id, seq, idempotency_key, request_body, request_hash, state, job_id,
       job_status, amount_micros, files_saved, created_at, take)
       SELECT ${batch}, ${id('i')}, 1, 'k' || i, '{"model":"m1","input":{"prompt":"a prompt of some length ' || i || '","seconds":5}}',
         'h', 'accepted', 'job' || i, 'succeeded', 400000, CASE WHEN i % 10 = 0 THEN 0 ELSE 1 END, 't', 1
       FROM (${series}) q`,
    `INSERT INTO files (attempt_id, idx, path, bytes, sha256, saved_at, mtime_ms)
       SELECT id, 0, 'out/big/' || item_id || '.mp4', 1000000, 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 't', 1
       FROM attempts WHERE batch_id = ${batch} AND files_saved = 1`,
  ];
  if (kind === 'sqlite') {
    const db = new Database(at);
    db.transaction(() => {
      for (const statement of statements) db.exec(statement);
    })();
    db.close();
  } else {
    const client = new pg.Client({ connectionString: at });
    await client.connect();
    for (const statement of statements) await client.query(statement);
    await client.query('ANALYZE');
    await client.end();
  }
}

/** One read, whole, in this process: its rows, time and the process's peak RSS (and heap's, sampled). */
async function measure(at, name, n) {
  const started = Date.now();
  let heapPeak = 0;
  const sampler = setInterval(() => {
    heapPeak = Math.max(heapPeak, process.memoryUsage().heapTotal);
  }, 50);
  const ledger = await openLedger(locationOf(at), 'big', '/big/batch.yaml', { readonly: true });
  const ids =
    name === 'itemExports' || name === 'paidItemsNotIn'
      ? Array.from({ length: n }, (_, i) => `i${String(i + 1).padStart(7, '0')}`)
      : null;
  let rows = 0;
  // As export asks: the items paid for that the manifest (all of them here) no longer names.
  if (name === 'paidItemsNotIn') rows = (await ledger.paidItemsNotIn(ids)).length;
  else for await (const _ of name === 'itemExports' ? ledger.itemExports(ids) : ledger[name]()) rows += 1;
  await ledger.close();
  clearInterval(sampler);
  const { heapUsed, external } = process.memoryUsage();
  const mb = (bytes) => Math.round(bytes / 1024 / 1024);
  const result = {
    read: name,
    rows,
    ms: Date.now() - started,
    maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    heapMb: mb(heapUsed),
    heapPeakMb: mb(heapPeak),
    externalMb: mb(external),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

if (read === 'none') await fill(where, Number(count));
else if (read) await measure(where, read, Number(count));
else {
  const n = Number(count);
  const dir = kind === 'sqlite' && !where ? mkdtempSync(join(tmpdir(), 'mediabatch-big-')) : null;
  const at = dir ? join(dir, 'big.sqlite') : where;
  const filled = Date.now();
  await fill(at, n);
  process.stdout.write(`${kind}: ${n} items written in ${Date.now() - filled} ms\n`);
  for (const name of READS) {
    const loader = built ? [] : ['--import', 'tsx'];
    const child = spawnSync(process.execPath, [...loader, import.meta.filename, kind, String(n), at, name], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    process.stdout.write(child.stdout);
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
}
