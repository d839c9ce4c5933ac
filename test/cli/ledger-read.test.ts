import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { planSource, statusSource } from '../../src/batch/ledger-read.js';
import { moneyTotalsOf } from '../../src/ledger/money-totals.js';
import { SqliteLedger as Ledger } from '../../src/ledger/sqlite-ledger.js';
import { loadManifest, type Manifest } from '../../src/manifest/index.js';
import { parseUsdStrict } from '../../src/money.js';
import { pricesSeen, priceTable } from '../../src/report/cost-estimate.js';
import { buildPlan, buildPlanReport } from '../../src/report/plan-report.js';
import {
  buildStatus,
  buildStatusReport,
  type LedgerView,
  summarizeView,
  unsavedOf,
} from '../../src/report/status-report.js';
import { buildRequestBody, requestHash } from '../../src/runner/request.js';
import { finished, LedgerBuilder, ledgerPath, project } from '../e2e/commands/fixtures.js';

/**
 * `status` and `plan` read one SQLite row per item (item-summaries.ts, item-entries.ts); `run`'s
 * tests and `report` build the same documents from the whole ledger in memory. Both must agree on
 * a ledger with every kind of history: retries, refunds, takes, unanswered and rejected attempts,
 * attempts without an item row, and items the manifest no longer lists.
 */

const MANIFEST = `version: 1
name: views
input: {seconds: 6, definition: 720p}
budget_usd: "9.00"
items:
  - {id: plain, prompt: done once}
  - {id: retried, prompt: failed then done}
  - {id: partly-refunded, prompt: refunded in part}
  - {id: redone, prompt: three takes}
  - {id: two-files, prompt: a video and a still}
  - {id: waiting, prompt: sent without an answer}
  - {id: running, prompt: still running}
  - {id: unsaved, prompt: finished not saved}
  - {id: refused, prompt: refused with 409}
  - {id: edited, prompt: changed since}
  - {id: rejected-content, prompt: final failure}
  - {id: lapsed, prompt: outputs deleted}
  - {id: over-budget, prompt: did not fit}
  - {id: fresh, prompt: never sent}
  - {id: no-row, prompt: attempt without item row}
  - {id: longer, prompt: twelve seconds, input: {seconds: 12}}
`;

const NOW = Date.now();

/** A whole-view report as the streamed one says it: its files were looked at, by size and time. */
const stated = <T extends object>(report: T): T => ({ ...report, file_check: 'stat' });

function savedFile(builder: LedgerBuilder, attemptId: number, names: string[]): void {
  // On disk as recorded: status and plan look at every saved file (a stat each).
  mkdirSync(builder.manifest.outputDir, { recursive: true });
  for (const name of names) writeFileSync(join(builder.manifest.outputDir, name), name);
  await builder.ledger.recordFilesSaved(
    attemptId,
    names.map((name, idx) => ({
      idx,
      path: join(builder.manifest.outputDir, name),
      bytes: name.length,
      sha256: createHash('sha256').update(name).digest('hex'),
    })),
  );
}

/** An attempt of a later take, as run --redo prepares it. */
function takeAttempt(builder: LedgerBuilder, id: string, seq: number, take: number, amountUsd: string) {
  const item = builder.item(id);
  const attempt = await builder.ledger.prepareAttempt({
    itemId: id,
    seq,
    idempotencyKey: `mb_take_${id}_${seq}`,
    requestBody: buildRequestBody(builder.manifest.name, item, seq, null),
    requestHash: requestHash(item),
    reservedMicros: 0,
    take,
  });
  return await builder.job(attempt, amountUsd, 'succeeded', finished(40));
}

/** The manifest as an earlier run saw it: with three items it no longer lists. */
const EARLIER = `${MANIFEST}  - {id: gone-done, prompt: removed after it was done}
  - {id: gone-pending, prompt: removed before it ran}
  - {id: ghost, prompt: removed with an unanswered attempt}
`;

function richLedger(): { dir: string; manifest: Manifest; path: string } {
  const { dir, manifest: earlier } = project(EARLIER);
  writeFileSync(join(dir, 'current.yaml'), MANIFEST);
  const loaded = loadManifest(join(dir, 'current.yaml'));
  if (!loaded.ok) throw new Error('the current manifest is invalid');
  const manifest = loaded.manifest;
  const b = await LedgerBuilder.open(dir, earlier);
  await b.done('plain', '0.40');
  await b.put('retried', 'pending');
  await b.job(await b.prepare('retried'), '0.40', 'failed', { refundedMicros: 400_000, errorCode: 'processing_failed' });
  await b.done('retried', '0.45');
  await b.put('partly-refunded', 'pending');
  const partly = await b.job(await b.prepare('partly-refunded'), '0.50', 'succeeded', {
    refundedMicros: 100_000,
    ...finished(40),
  });
  savedFile(b, partly.id, ['partly-refunded.mp4']);
  await b.ledger.setItemState('partly-refunded', { state: 'done' });
  const first = await b.done('redone', '0.40');
  savedFile(b, takeAttempt(b, 'redone', 2, 2, '0.41').id, ['redone.take2-first.mp4']);
  savedFile(b, takeAttempt(b, 'redone', 3, 2, '0.42').id, ['redone.take2.mp4']);
  savedFile(b, takeAttempt(b, 'redone', 4, 3, '0.43').id, ['redone.take3.mp4', 'redone.take3.json']);
  await b.ledger.recordFileMoved(first.id, 0, join(manifest.outputDir, 'redone.take1.mp4'));
  await b.put('two-files', 'pending');
  const two = await b.job(await b.prepare('two-files'), '0.40', 'succeeded', finished(40));
  savedFile(b, two.id, ['two-files.mp4', 'two-files.png']);
  await b.ledger.setItemState('two-files', { state: 'done' });
  await b.put('waiting', 'pending');
  await b.prepare('waiting', '0.90');
  await b.put('running', 'pending');
  await b.job(await b.prepare('running'), '0.40', 'running');
  await b.put('unsaved', 'pending');
  await b.job(await b.prepare('unsaved'), '0.30', 'succeeded', finished(2));
  await b.put('refused', 'pending');
  const refused = await b.prepare('refused');
  await b.ledger.recordRejected(refused.id, 409, 'idempotency_key_reused', 'key used for another body');
  await b.done('edited', '0.40', { ...b.item('edited'), input: { ...b.item('edited').input, prompt: 'old' } });
  await b.put('edited', 'done', { stale: true });
  await b.failed('rejected-content', '0.40', 'content_rejected', 'the provider said no');
  await b.put('lapsed', 'expired', { errorCode: 'expired', errorMessage: 'outputs deleted' });
  await b.put('over-budget', 'budget_exceeded', { errorCode: 'budget_exceeded' });
  await b.prepare('no-row', '0.20');
  await b.done('longer', '0.80');
  await b.done('gone-done', '0.44');
  await b.put('gone-pending', 'pending');
  await b.prepare('ghost');
  await b.close();
  return { dir, manifest, path: ledgerPath(dir, earlier) };
}

function wholeView(ledger: Ledger): LedgerView {
  return { items: ledger.listItems(), attempts: ledger.listAttempts(), files: ledger.listFiles() };
}

const byId = <T extends { itemId: string }>(rows: Iterable<T>) =>
  [...rows].sort((a, b) => a.itemId.localeCompare(b.itemId));

function readOnly(path: string, manifest: Manifest): Ledger {
  return Ledger.open(path, manifest.name, manifest.file, { readonly: true });
}

describe('per-item reads from SQLite', () => {
  const { dir, manifest, path } = richLedger();

  it('summarise each item as the whole-ledger path does', () => {
    const ledger = readOnly(path, manifest);
    const view = wholeView(ledger);
    const expected = summarizeView(view);
    const summaries = byId(ledger.itemSummaries());
    expect(summaries).toEqual(byId(expected.summaries));
    expect(summaries.find((row) => row.itemId === 'redone')?.takes).not.toBeNull();
    expect(ledger.moneyTotals()).toEqual(moneyTotalsOf(view.attempts));
    expect(ledger.unsavedSucceeded().map((attempt) => attempt.id)).toEqual(
      unsavedOf(view.attempts).map((attempt) => attempt.id),
    );
    ledger.close();
  });

  it('price each kind of request as the whole-ledger path does', () => {
    const ledger = readOnly(path, manifest);
    const prices = priceTable(ledger.priceSamples());
    expect(prices).toEqual(pricesSeen(ledger.listAttempts()));
    expect(prices.byKey.size).toBe(2);
    expect([...prices.byKey.values()].sort()).toEqual([440_000, 800_000]);
    ledger.close();
  });

  it('give status the same document', () => {
    const ledger = readOnly(path, manifest);
    const streamed = buildStatus(manifest, statusSource(ledger), NOW);
    const whole = stated(buildStatusReport(manifest, wholeView(ledger), NOW));
    expect(streamed).toEqual(whole);
    expect(whole.items.find((item) => item.id === 'redone')?.takes).toHaveLength(3);
    expect(whole.warnings).toHaveLength(1);
    ledger.close();
  });

  it('give plan the same document, with removed items, stray files and changed fields', () => {
    const ledger = readOnly(path, manifest);
    const inputs = {
      outputFiles: [
        join(manifest.outputDir, 'plain.mp4'),
        join(manifest.outputDir, 'plain.json'),
        join(manifest.outputDir, 'stranger.mp4'),
      ],
      previousBody: (attempt: { id: number }) => ledger.getAttempt(attempt.id).requestBody,
    };
    const streamed = buildPlan(manifest, planSource(ledger), null, NOW, inputs);
    const whole = stated(buildPlanReport(manifest, wholeView(ledger), null, NOW, inputs));
    expect(streamed).toEqual(whole);
    expect(whole.removed.map((item) => item.id)).toEqual(['gone-done', 'gone-pending']);
    expect(whole.stray_files).toEqual(['out/views/stranger.mp4']);
    expect(whole.items.find((item) => item.id === 'edited')?.changed_fields).toEqual(['input.prompt']);
    expect(new Set(whole.items.map((item) => item.plan))).toEqual(
      new Set(['done', 'retry', 'in_flight', 'changed', 'failed', 'expired', 'new']),
    );
    ledger.close();
  });

  it('read a ledger written before takes (no take column) as take 1 everywhere', () => {
    const old = join(dir, 'before-takes.sqlite');
    const db = new Database(path, { readonly: true });
    db.exec(`VACUUM INTO '${old}'`);
    db.close();
    const dropped = new Database(old);
    dropped.exec('ALTER TABLE attempts DROP COLUMN take');
    dropped.close();
    const ledger = readOnly(old, manifest);
    const view = wholeView(ledger);
    expect(byId(ledger.itemSummaries())).toEqual(byId(summarizeView(view).summaries));
    expect(buildStatus(manifest, statusSource(ledger), NOW)).toEqual(
      stated(buildStatusReport(manifest, view, NOW)),
    );
    expect(view.attempts.every((attempt) => attempt.take === 1)).toBe(true);
    ledger.close();
  });
});

describe('per-item reads of an empty or missing ledger', () => {
  it('give the documents of a batch that never ran', () => {
    const { dir, manifest } = project(MANIFEST);
    const ledger = Ledger.open(join(dir, 'empty.sqlite'), manifest.name, manifest.file);
    const empty = { items: [], attempts: [], files: [] };
    expect(buildStatus(manifest, statusSource(ledger), NOW)).toEqual(
      stated(buildStatusReport(manifest, empty, NOW)),
    );
    expect(buildStatus(manifest, statusSource(null), NOW)).toEqual(
      stated(buildStatusReport(manifest, empty, NOW)),
    );
    const plan = buildPlanReport(manifest, empty, null, NOW);
    expect(buildPlan(manifest, planSource(ledger), null, NOW)).toEqual(stated(plan));
    expect(buildPlan(manifest, planSource(null), null, NOW)).toEqual(plan);
    expect(plan.totals.new).toBe(manifest.items.length);
    expect(parseUsdStrict(plan.totals.budget_left_usd!)).toBe(9_000_000);
    ledger.close();
  });
});
