// Scenario 14's child (gallery-refresh-bench.ts): one gallery refresh of a big batch, timed in
// the process that makes it, as a run makes it when it ends.
//
// usage: node --expose-gc gallery-refresh-child.mjs <dist folder> <manifest> <ledger> <mode>
//   mode `door`: writeGallery() from the package root, which reads the ledger through its door
//     (ledger.ts): the code as it ships, and the only call the code before this scenario had too;
//   mode `read`: the same page, with the ledger read the gallery asks for (galleryEntries, see
//     src/batch/gallery-source.ts) written here in SQL over the same SQLite file, until the
//     ledger has it: what the read is worth.
// Prints one JSON line: the refresh's wall and CPU time, the peak RSS before it (Node, modules,
// the manifest) and after it, and the page's size.
import { statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';

const [dist, manifestFile, ledgerPath, mode] = process.argv.slice(2);
const load = (path) => import(pathToFileURL(join(dist, path)).href);
const rssMb = () => process.resourceUsage().maxRSS / 1024;
const cpuMs = () => {
  const usage = process.resourceUsage();
  return (usage.userCPUTime + usage.systemCPUTime) / 1000;
};

/** The refresh with the ledger's door given galleryEntries, read here. */
async function withRead(manifest) {
  const { batchOf } = await load('public/options.js');
  const { openForReading } = await load('batch/ledger-read.js');
  const { writeBatchGallery } = await load('batch/gallery.js');
  const batch = batchOf(manifest, { ledger: ledgerPath });
  const { ledger, note } = await openForReading(batch);
  const db = new Database(ledgerPath, { readonly: true, fileMustExist: true });
  // As itemExports walks (src/ledger/item-exports.ts): each page is read about once.
  db.pragma('cache_size = -2000');
  const root = manifest.file.replace(/[/\\][^/\\]*$/, '');
  db.function('batch_path', { deterministic: true }, (path) =>
    path === null || isAbsolute(path) || /^[a-z][a-z0-9+.-]*:\/\//i.test(path) ? path : join(root, path),
  );
  try {
    const galleryEntries = (ids) => entries(db, ledger.batchId, ids);
    const request = { to: '', urlLifetimeSeconds: null, force: false };
    return await writeBatchGallery(batch, request, () => undefined, {
      ledger: { ...ledger, galleryEntries },
      note,
    });
  } finally {
    db.close();
    await ledger.close();
  }
}

// The walk itemExports makes (src/ledger/item-exports.ts): the ids drive it, each item's attempts
// come by seq through the (batch_id, item_id, seq) index and their files by the files' key.
const WALK = `SELECT m.key, i.state, i.error_code, i.error_message,
  a.id, a.seq, a.take, a.idempotency_key, a.state, a.http_status, a.job_id, a.job_status,
  a.amount_micros, a.refunded_micros, a.error_code, a.error_message, a.files_saved, a.created_at,
  a.completed_at, batch_path(f.path)
FROM json_each(@ids) m
LEFT JOIN items i ON i.batch_id = @batchId AND i.item_id = m.value
LEFT JOIN attempts a ON a.batch_id = @batchId AND a.item_id = m.value
LEFT JOIN files f ON f.attempt_id = a.id`;
const OTHERS = `SELECT item_id FROM items WHERE batch_id = @batchId
UNION SELECT item_id FROM attempts WHERE batch_id = @batchId
EXCEPT SELECT value FROM json_each(@ids) ORDER BY 1`;

async function* entries(db, batchId, ids) {
  yield* walk(db, batchId, ids);
  const others = db
    .prepare(OTHERS)
    .pluck()
    .all({ batchId, ids: JSON.stringify(ids) });
  yield* walk(db, batchId, others);
}

function* walk(db, batchId, ids) {
  const rows = db
    .prepare(WALK)
    .raw()
    .iterate({ batchId, ids: JSON.stringify(ids) });
  let entry = null;
  let attempt = null;
  for (const row of rows) {
    if (entry === null || entry.index !== row[0]) {
      if (entry !== null) yield entry.value;
      entry = { index: row[0], value: entryOf(ids[row[0]], row) };
      attempt = null;
    }
    if (row[4] === null) continue;
    if (attempt === null || attempt.id !== row[4]) {
      attempt = attemptOf(ids[row[0]], row);
      entry.value.attempts.push(attempt);
    }
    if (row[19] !== null) attempt.files.push(row[19]);
  }
  if (entry !== null) yield entry.value;
}

const entryOf = (itemId, row) => ({
  itemId,
  state: row[1],
  errorCode: row[2],
  errorMessage: row[3],
  attempts: [],
});

const attemptOf = (itemId, row) => ({
  id: row[4],
  itemId,
  seq: row[5],
  take: row[6] ?? 1,
  idempotencyKey: row[7],
  state: row[8],
  httpStatus: row[9],
  jobId: row[10],
  jobStatus: row[11],
  amountMicros: row[12],
  refundedMicros: row[13],
  errorCode: row[14],
  errorMessage: row[15],
  filesSaved: row[16] === 1,
  createdAt: row[17],
  completedAt: row[18],
  files: [],
});

// Last, once every declaration above is made.
const { loadManifest, writeGallery } = await load('index.js');
const manifest = loadManifest(manifestFile);
// A run refreshes its page long after it loaded the manifest: the loading's garbage is gone by
// then, and is collected here too (node --expose-gc), so that it does not count as the refresh's.
globalThis.gc?.();
const before = { rssMb: rssMb(), cpuMs: cpuMs(), at: performance.now() };
const written =
  mode === 'read' ? await withRead(manifest) : await writeGallery(manifest, { ledger: ledgerPath });
const result = {
  mode,
  refreshMs: performance.now() - before.at,
  refreshCpuMs: cpuMs() - before.cpuMs,
  rssBeforeMb: before.rssMb,
  peakRssMb: rssMb(),
  items: written.items,
  pageBytes: statSync(written.written).size,
};
process.stdout.write(`${JSON.stringify(result)}\n`);
