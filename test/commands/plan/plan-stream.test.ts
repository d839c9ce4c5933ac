import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { filesUnder } from '../../../src/batch/output-files.js';
import { takeIsThere } from '../../../src/batch/saved-file-problems.js';
import { openManifest, type StreamedManifest } from '../../../src/batch/streamed-manifest.js';
import { planSource } from '../../../src/commands/plan/plan-reads.js';
import { planStreamed } from '../../../src/commands/plan/plan-stream.js';
import { buildPlanStreamed } from '../../../src/commands/plan/plan-streamed.js';
import { strangerReason } from '../../../src/downloads/files-on-disk.js';
import type { Ledger } from '../../../src/ledger/ledger.js';
import { openLedger } from '../../../src/ledger/open-ledger.js';
import { loadManifest, type Manifest } from '../../../src/manifest/index.js';
import { finished, LedgerBuilder, ledgerPath, project } from '../../e2e/commands/fixtures.js';

/**
 * A plan of a manifest read a chunk at a time (plan-stream.ts) is the plan of the same manifest held
 * whole (plan-streamed.ts, what `plan` gave before): over ledgers with every kind of history, items
 * the manifest no longer lists, renames, twins, saved takes of the same request, a budget that runs
 * out, files missing on disk and files the ledger did not write, whatever the chunks' size.
 */

const NOW = Date.now();

/** An earlier manifest's item and what the ledger did with it. */
type History =
  | 'none'
  | 'done'
  | 'missing'
  | 'failed'
  | 'rejected'
  | 'pending'
  | 'sent'
  | 'running'
  | 'unsaved';
/** What the current manifest does with an earlier item. */
type Fate = 'kept' | 'edited' | 'dropped';

interface Case {
  earlier: Array<{ prompt: number; history: History; fate: Fate; cap: boolean }>;
  /** New items: the prompt they ask for (the same as a dropped one's makes a rename, as another new one's a twin). */
  added: number[];
  budget: string | null;
  /** A file the ledger did not write in the output folder, by its name (null: none). */
  stranger: string | null;
}

const history = fc.constantFrom<History>(
  'none',
  'done',
  'done',
  'missing',
  'failed',
  'rejected',
  'pending',
  'sent',
  'running',
  'unsaved',
);
const aCase: fc.Arbitrary<Case> = fc.record({
  earlier: fc.array(
    fc.record({
      prompt: fc.integer({ min: 0, max: 4 }),
      history,
      fate: fc.constantFrom<Fate>('kept', 'kept', 'edited', 'dropped'),
      cap: fc.boolean(),
    }),
    { minLength: 1, maxLength: 9 },
  ),
  added: fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 4 }),
  budget: fc.constantFrom(null, '0.50', '1.30', '9.00'),
  // Named as no item, or as an item's file: run then holds that item back.
  stranger: fc.constantFrom(null, 'stranger', 'new0', 'i1', 'i2', 'last'),
});

const line = (id: string, prompt: string, cap: boolean) =>
  JSON.stringify({ id, prompt, ...(cap ? { max_cost_usd: '0.60' } : {}) });

function manifestYaml(budget: string | null): string {
  return `version: 1\nname: streamed\ninput: {seconds: 6, definition: 720p}\n${budget ? `budget_usd: "${budget}"\n` : ''}items_from: items.jsonl\n`;
}

async function built(c: Case): Promise<{ dir: string; manifest: Manifest; path: string }> {
  const earlierLines = c.earlier.map((item, n) => line(`i${n}`, `prompt ${item.prompt}`, item.cap));
  const { dir, manifest: earlier } = project(manifestYaml(c.budget), {
    'items.jsonl': earlierLines.join('\n'),
  });
  const b = await LedgerBuilder.open(dir, earlier);
  for (const [n, item] of c.earlier.entries()) await record(b, `i${n}`, item.history);
  await b.close();
  const current = c.earlier.flatMap((item, n) =>
    item.fate === 'dropped'
      ? []
      : [line(`i${n}`, `prompt ${item.prompt}${item.fate === 'edited' ? ' again' : ''}`, item.cap)],
  );
  // One item always: a manifest without any is refused.
  current.push(
    ...c.added.map((prompt, n) => line(`new${n}`, `prompt ${prompt}`, false)),
    line('last', 'prompt 9', false),
  );
  writeFileSync(join(dir, 'items.jsonl'), current.join('\n'));
  if (c.stranger !== null) {
    mkdirSync(earlier.outputDir, { recursive: true });
    writeFileSync(join(earlier.outputDir, `${c.stranger}.mp4`), 'not ours');
  }
  const loaded = loadManifest(join(dir, 'batch.yaml'));
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems));
  return { dir, manifest: loaded.manifest, path: ledgerPath(dir, earlier) };
}

async function record(b: LedgerBuilder, id: string, what: History): Promise<void> {
  if (what === 'none') return;
  if (what === 'done' || what === 'missing') {
    await b.done(id, '0.40');
    if (what === 'missing') rmSync(join(b.manifest.outputDir, `${id}.mp4`));
    return;
  }
  if (what === 'failed') await b.failed(id, '0.40', 'processing_failed', 'the job failed');
  else if (what === 'rejected') await b.failed(id, '0.40', 'content_rejected', 'moderation said no');
  else if (what === 'pending') await b.put(id, 'pending');
  else {
    await b.put(id, 'pending');
    const attempt = await b.prepare(id, '0.50');
    if (what === 'running') await b.job(attempt, '0.40', 'running');
    if (what === 'unsaved') await b.job(attempt, '0.30', 'succeeded', finished(2));
  }
}

/** What `plan` is given besides the manifest and the ledger. */
function inputsOf(manifest: Pick<Manifest, 'outputDir' | 'file' | 'name'>) {
  return {
    outputFiles: filesUnder(manifest.outputDir, manifest.file),
    strayWhy: (path: string) => strangerReason(path, manifest.name),
    regenerateExpired: false,
    retryFailed: false,
    verify: false,
    fileCheck: 'stat' as const,
    takeIsThere: takeIsThere(false),
    nowMs: NOW,
  };
}

/** The plan of the manifest held whole, as `plan` made it before it streamed. */
async function wholePlan(manifest: Manifest, ledger: Ledger | null) {
  return buildPlanStreamed(manifest, await planSource(ledger), null, NOW, inputsOf(manifest), true);
}

/** The streamed plan, its items read back from their spool, its chunks `chunkSize` items. */
async function streamedPlan(manifest: StreamedManifest, ledger: Ledger | null, chunkSize: number) {
  const chunked = {
    ...manifest,
    readItems: (_size?: number, again?: boolean) => manifest.readItems(chunkSize, again),
  };
  const { doc, read } = await planStreamed(chunked, ledger, inputsOf(manifest), async () => null);
  try {
    return { doc: { ...doc, items: [...doc.items] }, read };
  } finally {
    doc.items.close();
  }
}

function streamedOf(file: string): StreamedManifest {
  const opened = openManifest(file);
  if (!('streamed' in opened)) throw new Error('the fixture manifest should stream');
  return opened;
}

/** Cases that meet each rule across items for certain, beside the random ones. */
const kept = (prompt: number, history: History, fate: Fate = 'kept') => ({
  prompt,
  history,
  fate,
  cap: false,
});
const EVERY_RULE: Array<[Case, number]> = [
  // A rename (a removed item's request asked for by a new one), and a removed item left.
  [
    {
      earlier: [kept(0, 'done', 'dropped'), kept(1, 'failed', 'dropped')],
      added: [0],
      budget: null,
      stranger: null,
    },
    1,
  ],
  // A twin of a new item, a take found for another, a twin of an item followed; a budget that runs out.
  [
    {
      earlier: [kept(2, 'done'), kept(3, 'running'), kept(3, 'none')],
      added: [1, 1, 2],
      budget: '0.50',
      stranger: 'stranger',
    },
    2,
  ],
  // A job the service still holds fetched again (its saved take is missing), an item held back.
  [{ earlier: [kept(4, 'missing', 'edited')], added: [4, 0], budget: null, stranger: 'new1' }, 3],
];

describe('a plan made a chunk of items at a time', () => {
  it('is the plan of the manifest held whole, whatever the ledger holds and the chunks (property)', async () => {
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(aCase, fc.integer({ min: 1, max: 4 }), async (c, chunkSize) => {
        const { manifest, path } = await built(c);
        const ledger = await openLedger({ kind: 'sqlite', path, shown: path }, manifest.name, manifest.file, {
          readonly: true,
        });
        try {
          const whole = await wholePlan(manifest, ledger);
          const { doc, read } = await streamedPlan(streamedOf(manifest.file), ledger, chunkSize);
          expect(doc).toEqual(whole);
          expect(read.count).toBe(manifest.items.length);
          for (const item of doc.items) seen.add(item.plan);
          if (doc.renamed.length > 0) seen.add('renames');
          if (doc.removed.length > 0) seen.add('removed');
          if ((doc.stray_files ?? []).length > 0) seen.add('stray');
          if (doc.items.some((item) => item.reused_from?.take === null)) seen.add('twin');
          if (doc.items.some((item) => (item.reused_from?.take ?? null) !== null)) seen.add('take');
          if (doc.items.some((item) => item.file_problems)) seen.add('file problems');
          if (doc.items.some((item) => /fetched again|followed/.test(item.reason ?? '')))
            seen.add('acquired');
          if (doc.items.some((item) => /fetched again as a new take/.test(item.reason ?? '')))
            seen.add('held job');
        } finally {
          await ledger.close();
        }
      }),
      { numRuns: 100, examples: EVERY_RULE },
    );
    // The rules across items were all met: a rename, a removed item, a twin, a take found, a twin
    // of an item fetched again, a job the service holds fetched again, an item held back by a file
    // in its way, a budget that ran out, files missing and files not ours.
    const kinds = ['renames', 'removed', 'twin', 'take', 'acquired', 'held job', 'held_back'];
    for (const kind of [...kinds, 'blocked_by_budget', 'file problems', 'stray'])
      expect(seen, kind).toContain(kind);
  });

  it('is the plan of a batch that never ran, in one read of the manifest, twins and all', async () => {
    const lines = Array.from({ length: 7 }, (_, n) => line(`item-${n}`, `prompt ${n % 3}`, n % 2 === 0));
    const { manifest } = project(manifestYaml('1.00'), { 'items.jsonl': lines.join('\n') });
    let reads = 0;
    const streamed = streamedOf(manifest.file);
    const counted = {
      ...streamed,
      readItems: (size?: number) => {
        reads += 1;
        return streamed.readItems(size);
      },
    };
    const { doc } = await streamedPlan(counted, null, 2);
    expect(doc).toEqual(await wholePlan(manifest, null));
    expect(reads).toBe(1);
    expect(doc.totals.copies).toBe(4);
  });
});
