import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { statusDocument } from '../../../src/batch/ledger/status-document.js';
import { filesUnder } from '../../../src/batch/output/output-files.js';
import { buildPlanReport } from '../../../src/batch/plan/plan-report.js';
import { cliWords } from '../../../src/cli/words.js';
import { planSummaryChunks, planTextChunks } from '../../../src/commands/plan/render-plan.js';
import { type RejectedRecord, rejectedRecordsOf } from '../../../src/documents/rejected-records.js';
import { statusTextChunks } from '../../../src/documents/render-text.js';
import { buildStatusReport } from '../../../src/documents/status-report.js';
import type { LedgerView } from '../../../src/documents/status-view.js';
import { statusSummaryChunks } from '../../../src/documents/summary-text.js';
import { strangerReason } from '../../../src/downloads/files-on-disk.js';
import { openLedger } from '../../../src/ledger/open-ledger.js';
import { loadManifest, type Manifest } from '../../../src/manifest/index.js';
import { buildRequestBody, requestHash } from '../../../src/runner/request.js';
import { variantsOfItems } from '../../../src/runner/request-key.js';
import { runCli } from '../../support/cli.js';
import { finished, LedgerBuilder, ledgerPath, project } from './fixtures.js';

/**
 * Past a thousand items `status` and `plan` read their rows from SQLite one at a time and write
 * the document in several chunks. What the built CLI prints must be, byte for byte, the document
 * built from the whole ledger in memory.
 */

const ITEMS = 2_500;
const id = (n: number) => `clip-${String(n).padStart(4, '0')}`;
const line = (n: number) => JSON.stringify({ id: id(n), prompt: `clip ${n}` });
const jsonl = (count: number) => `${Array.from({ length: count }, (_, n) => line(n)).join('\n')}\n`;
const YAML = 'version: 1\nname: big\ninput: {seconds: 6, definition: 720p}\nitems_from: all.jsonl\n';

/** An item of a later take with its file saved, as run --redo leaves it. */
async function redo(b: LedgerBuilder, n: number): Promise<void> {
  const item = b.item(id(n));
  const attempt = await b.ledger.prepareAttempt({
    itemId: id(n),
    seq: 2,
    idempotencyKey: `mb_take2_${n}`,
    requestBody: buildRequestBody('big', item, 2, null),
    requestHash: requestHash(item),
    reservedMicros: 0,
    take: 2,
  });
  await b.job(attempt, '0.45', 'succeeded', finished(48));
  const path = join(b.manifest.outputDir, `${id(n)}.take2.mp4`);
  // On disk as recorded (status and plan look at every saved file).
  writeFileSync(path, 'x');
  await b.ledger.recordFilesSaved(attempt.id, [{ idx: 0, path, bytes: 1, sha256: 'x' }]);
  await b.ledger.setItemState(id(n), { state: 'done' });
}

/** Done, failed, running, interrupted and new items, takes, three removed items, a stray file. */
async function bigProject(): Promise<{ dir: string; manifest: Manifest; path: string }> {
  const { dir, manifest: earlier } = project(YAML, { 'all.jsonl': jsonl(ITEMS + 3) });
  const b = await LedgerBuilder.open(dir, earlier);
  // Steps share transactions (a write-ahead step still commits at once): thousands of syncs fewer.
  b.ledger.groupCommits(60_000);
  for (let n = 0; n < ITEMS + 3; n += 1) {
    if (n % 50 === 0) await b.failed(id(n), '0.40', 'content_rejected', `clip ${n} was refused`);
    else if (n % 50 === 25) await b.failed(id(n), '0.40', 'retries_exhausted', `clip ${n} kept failing`);
    else if (n % 40 === 1) {
      await b.put(id(n), 'pending');
      await b.job(await b.prepare(id(n)), '0.40', 'running');
    } else if (n % 50 === 2) await b.put(id(n), 'pending');
    else if (n < 2_300 || n >= ITEMS) await b.done(id(n), '0.40');
  }
  for (const n of [3, 103, 203]) await redo(b, n);
  await b.ledger.flush();
  await b.close();
  writeFileSync(join(dir, 'all.jsonl'), jsonl(ITEMS));
  writeFileSync(join(earlier.outputDir, 'stranger.mp4'), 'not ours');
  const current = loadManifest(join(dir, 'batch.yaml'));
  if (!current.ok) throw new Error('the shortened manifest is invalid');
  return { dir, manifest: current.manifest, path: ledgerPath(dir, earlier) };
}

describe('status and plan over 2,500 items', () => {
  let big: Awaited<ReturnType<typeof bigProject>>;
  let view: LedgerView;
  let previousBodies: Map<number, string>;
  let rejected: RejectedRecord[];
  beforeAll(async () => {
    big = await bigProject();
    const location = { kind: 'sqlite', path: big.path, shown: big.path } as const;
    const ledger = await openLedger(location, big.manifest.name, big.manifest.file, { readonly: true });
    view = {
      items: await ledger.listItems(),
      attempts: await ledger.listAttempts(),
      files: await ledger.listFiles(),
    };
    previousBodies = new Map(view.attempts.map((attempt) => [attempt.id, attempt.requestBody]));
    // Every 50th item failed content_rejected: status lists those requests (docs/checks.md).
    rejected = rejectedRecordsOf(await ledger.rejectedAttempts(), variantsOfItems(big.manifest.items));
    await ledger.close();
  });
  const note = () => ({ path: big.path, exists: true, service: null });
  const cli = async (args: string[]) => {
    const result = await runCli([...args.slice(0, 1), 'batch.yaml', ...args.slice(1)], { cwd: big.dir });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    return result.stdout;
  };

  it('status prints the whole-ledger document, as JSON and as text', async () => {
    // The CLI looked at every saved file (a stat each), and found them as saved.
    // No item asks for variants, so none lacks a keeper (docs/gallery.md, "Keepers").
    const report = {
      ...buildStatusReport(big.manifest, view, Date.now()),
      file_check: 'stat' as const,
      without_keeper: [],
      keepers_outside_manifest: [],
      rejected,
    };
    expect(rejected.length).toBeGreaterThan(0);
    expect(report.items.filter((item) => item.takes).length).toBe(3);
    // The CLI's JSON is the document without where the ledger is (the text says that).
    const { ledger: _where, ...document } = statusDocument(report, note());
    expect(await cli(['status', '--json'])).toBe(`${JSON.stringify(document, null, 2)}\n`);
    expect(await cli(['status', '--full'])).toBe(cliWords([...statusTextChunks(report, note())].join('')));
    // Above 1,000 items the text is the summary (docs/commands.md, "Summaries").
    const summary = await cli(['status']);
    expect(summary).toBe(cliWords([...statusSummaryChunks(report, note())].join('')));
    expect(summary.split('\n').length).toBeLessThan(40);
    expect(summary).toContain(`${ITEMS} items summarised`);
  });

  it('plan prints the whole-ledger document, as JSON and as text', async () => {
    const doc = {
      ...buildPlanReport(big.manifest, view, null, Date.now(), {
        outputFiles: filesUnder(big.manifest.outputDir, big.manifest.file),
        previousBody: (attempt) => previousBodies.get(attempt.id),
        strayWhy: (path) => strangerReason(path, big.manifest.name),
      }),
      file_check: 'stat' as const,
      without_keeper: [],
      keepers_outside_manifest: [],
    };
    expect(doc.removed).toHaveLength(3);
    expect(doc.stray_files).toEqual(['out/big/stranger.mp4']);
    expect(doc.totals).toMatchObject({ new: 233, retry: 50, in_flight: 63, failed: 50 });
    expect(await cli(['plan', '--json'])).toBe(`${JSON.stringify(doc, null, 2)}\n`);
    expect(await cli(['plan', '--full'])).toBe(cliWords([...planTextChunks(doc, note())].join('')));
    const summary = await cli(['plan']);
    expect(summary).toBe(cliWords([...planSummaryChunks(doc, note())].join('')));
    expect(summary.split('\n').length).toBeLessThan(40);
    expect(summary).toMatch(/ {2}new: 233, e\.g\. clip-\d{4} /);
  });
});
