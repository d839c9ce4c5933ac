import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { pricesSeen, priceTable } from '../../../src/batch/ledger/cost-estimate.js';
import { statusSource } from '../../../src/batch/ledger/ledger-read.js';
import { planSource } from '../../../src/batch/plan/plan-reads.js';
import { buildPlanReport } from '../../../src/batch/plan/plan-report.js';
import { buildPlanStreamed } from '../../../src/batch/plan/plan-streamed.js';
import { collectRows } from '../../../src/collect-rows.js';
import { buildStatusReport, buildStatusStreamed } from '../../../src/documents/status-report.js';
import { type LedgerView, summarizeView, unsavedOf } from '../../../src/documents/status-view.js';
import type { Ledger } from '../../../src/ledger/ledger.js';
import { moneyTotalsOf } from '../../../src/ledger/money-totals.js';
import { openLedger } from '../../../src/ledger/open-ledger.js';
import { loadManifest, type Manifest } from '../../../src/manifest/index.js';
import { parseUsdStrict } from '../../../src/money.js';
import { buildRequestBody, requestHash } from '../../../src/runner/request.js';
import { finished, LedgerBuilder, ledgerPath, project } from '../../e2e/commands/fixtures.js';

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

async function savedFile(builder: LedgerBuilder, attemptId: number, names: string[]): Promise<void> {
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
async function takeAttempt(builder: LedgerBuilder, id: string, seq: number, take: number, amountUsd: string) {
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

async function richLedger(): Promise<{ dir: string; manifest: Manifest; path: string }> {
  const { dir, manifest: earlier } = project(EARLIER);
  writeFileSync(join(dir, 'current.yaml'), MANIFEST);
  const loaded = loadManifest(join(dir, 'current.yaml'));
  if (!loaded.ok) throw new Error('the current manifest is invalid');
  const manifest = loaded.manifest;
  const b = await LedgerBuilder.open(dir, earlier);
  await b.done('plain', '0.40');
  await b.put('retried', 'pending');
  await b.job(await b.prepare('retried'), '0.40', 'failed', {
    refundedMicros: 400_000,
    errorCode: 'processing_failed',
  });
  await b.done('retried', '0.45');
  await b.put('partly-refunded', 'pending');
  const partly = await b.job(await b.prepare('partly-refunded'), '0.50', 'succeeded', {
    refundedMicros: 100_000,
    ...finished(40),
  });
  await savedFile(b, partly.id, ['partly-refunded.mp4']);
  await b.ledger.setItemState('partly-refunded', { state: 'done' });
  const first = await b.done('redone', '0.40');
  await savedFile(b, (await takeAttempt(b, 'redone', 2, 2, '0.41')).id, ['redone.take2-first.mp4']);
  await savedFile(b, (await takeAttempt(b, 'redone', 3, 2, '0.42')).id, ['redone.take2.mp4']);
  await savedFile(b, (await takeAttempt(b, 'redone', 4, 3, '0.43')).id, [
    'redone.take3.mp4',
    'redone.take3.json',
  ]);
  await b.ledger.recordFileMoved(first.id, 0, join(manifest.outputDir, 'redone.take1.mp4'));
  await b.put('two-files', 'pending');
  const two = await b.job(await b.prepare('two-files'), '0.40', 'succeeded', finished(40));
  await savedFile(b, two.id, ['two-files.mp4', 'two-files.png']);
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
  await b.done('edited', '0.40', {
    ...b.item('edited'),
    input: { ...b.item('edited').input, prompt: 'old' },
  });
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

async function wholeView(ledger: Ledger): Promise<LedgerView> {
  return {
    items: await ledger.listItems(),
    attempts: await ledger.listAttempts(),
    files: await ledger.listFiles(),
  };
}

const byId = <T extends { itemId: string }>(rows: Iterable<T>) =>
  [...rows].sort((a, b) => a.itemId.localeCompare(b.itemId));

const streamedById = async <T extends { itemId: string }>(rows: AsyncIterable<T>) =>
  byId(await collectRows(rows));

function readOnly(path: string, manifest: Manifest): Promise<Ledger> {
  return openLedger({ kind: 'sqlite', path, shown: path }, manifest.name, manifest.file, { readonly: true });
}

describe('per-item reads from SQLite', () => {
  let dir: string;
  let manifest: Manifest;
  let path: string;
  beforeAll(async () => {
    ({ dir, manifest, path } = await richLedger());
  });

  it('summarise each item as the whole-ledger path does', async () => {
    const ledger = await readOnly(path, manifest);
    const view = await wholeView(ledger);
    const expected = summarizeView(view);
    const summaries = await streamedById(ledger.itemSummaries());
    expect(summaries).toEqual(byId(expected.summaries));
    expect(summaries.find((row) => row.itemId === 'redone')?.takes).not.toBeNull();
    expect(await ledger.moneyTotals()).toEqual(moneyTotalsOf(view.attempts));
    expect((await ledger.unsavedSucceeded()).map((attempt) => attempt.id)).toEqual(
      unsavedOf(view.attempts).map((attempt) => attempt.id),
    );
    await ledger.close();
  });

  it('price each kind of request as the whole-ledger path does', async () => {
    const ledger = await readOnly(path, manifest);
    const prices = priceTable(await ledger.priceSamples());
    expect(prices).toEqual(pricesSeen(await ledger.listAttempts()));
    expect(prices.byKey.size).toBe(2);
    expect([...prices.byKey.values()].sort()).toEqual([440_000, 800_000]);
    await ledger.close();
  });

  it('give status the same document', async () => {
    const ledger = await readOnly(path, manifest);
    const streamed = await buildStatusStreamed(manifest, await statusSource(ledger), NOW);
    const whole = stated(buildStatusReport(manifest, await wholeView(ledger), NOW));
    expect(streamed).toEqual(whole);
    expect(whole.items.find((item) => item.id === 'redone')?.takes).toHaveLength(3);
    expect(whole.warnings).toHaveLength(1);
    await ledger.close();
  });

  it('give plan the same document, with removed items, stray files and changed fields', async () => {
    const ledger = await readOnly(path, manifest);
    const view = await wholeView(ledger);
    const inputs = {
      outputFiles: [
        join(manifest.outputDir, 'plain.mp4'),
        join(manifest.outputDir, 'plain.json'),
        join(manifest.outputDir, 'stranger.mp4'),
      ],
    };
    // The streamed plan reads an edited item's last body itself (namesChanges); the whole view has it.
    const recorded = (attempt: { id: number }) =>
      view.attempts.find((candidate) => candidate.id === attempt.id);
    const streamed = await buildPlanStreamed(manifest, await planSource(ledger), null, NOW, inputs, true);
    const whole = stated(
      buildPlanReport(manifest, view, null, NOW, {
        ...inputs,
        previousBody: (attempt) => recorded(attempt)?.requestBody,
        previousVars: (attempt) => recorded(attempt)?.vars,
      }),
    );
    expect(streamed).toEqual(whole);
    expect(whole.removed.map((item) => item.id)).toEqual(['gone-done', 'gone-pending']);
    expect(whole.stray_files).toEqual(['out/views/stranger.mp4']);
    expect(whole.items.find((item) => item.id === 'edited')?.changed_fields).toEqual(['input.prompt']);
    expect(new Set(whole.items.map((item) => item.plan))).toEqual(
      new Set(['done', 'retry', 'in_flight', 'changed', 'failed', 'expired', 'new']),
    );
    await ledger.close();
  });

  it('read a ledger written before takes (no take column) as take 1 everywhere', async () => {
    const old = join(dir, 'before-takes.sqlite');
    const db = new Database(path, { readonly: true });
    db.exec(`VACUUM INTO '${old}'`);
    db.close();
    const dropped = new Database(old);
    dropped.exec('ALTER TABLE attempts DROP COLUMN take');
    dropped.close();
    const ledger = await readOnly(old, manifest);
    const view = await wholeView(ledger);
    expect(await streamedById(ledger.itemSummaries())).toEqual(byId(summarizeView(view).summaries));
    expect(await buildStatusStreamed(manifest, await statusSource(ledger), NOW)).toEqual(
      stated(buildStatusReport(manifest, view, NOW)),
    );
    expect(view.attempts.every((attempt) => attempt.take === 1)).toBe(true);
    await ledger.close();
  });
});

describe('per-item reads of an empty or missing ledger', () => {
  it('give the documents of a batch that never ran', async () => {
    const { dir, manifest } = project(MANIFEST);
    const path = join(dir, 'empty.sqlite');
    const ledger = await openLedger({ kind: 'sqlite', path, shown: path }, manifest.name, manifest.file);
    const empty = { items: [], attempts: [], files: [] };
    expect(await buildStatusStreamed(manifest, await statusSource(ledger), NOW)).toEqual(
      stated(buildStatusReport(manifest, empty, NOW)),
    );
    expect(await buildStatusStreamed(manifest, await statusSource(null), NOW)).toEqual(
      stated(buildStatusReport(manifest, empty, NOW)),
    );
    const plan = buildPlanReport(manifest, empty, null, NOW);
    expect(await buildPlanStreamed(manifest, await planSource(ledger), null, NOW)).toEqual(stated(plan));
    expect(await buildPlanStreamed(manifest, await planSource(null), null, NOW)).toEqual(plan);
    expect(plan.totals.new).toBe(manifest.items.length);
    expect(parseUsdStrict(plan.totals.budget_left_usd!)).toBe(9_000_000);
    await ledger.close();
  });
});
