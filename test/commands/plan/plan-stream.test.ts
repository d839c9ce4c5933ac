import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { takeIsThere } from '../../../src/batch/ledger/saved-file-problems.js';
import { filesUnder } from '../../../src/batch/output/output-files.js';
import { planSource } from '../../../src/batch/plan/plan-reads.js';
import { buildPlanStreamed } from '../../../src/batch/plan/plan-streamed.js';
import type { StreamedManifest } from '../../../src/batch/resolve/streamed-manifest.js';
import { planStreamed } from '../../../src/commands/plan/plan-stream.js';
import { strangerReason } from '../../../src/downloads/files-on-disk.js';
import type { Ledger } from '../../../src/ledger/ledger.js';
import { openLedger } from '../../../src/ledger/open-ledger.js';
import type { Manifest } from '../../../src/manifest/index.js';
import { project } from '../../e2e/commands/fixtures.js';
import {
  aCase,
  built,
  type Case,
  type Fate,
  type History,
  line,
  manifestYaml,
  streamedOf,
} from '../streamed-cases.js';

/**
 * A plan of a manifest read a chunk at a time (plan-stream.ts) is the plan of the same manifest held
 * whole (plan-streamed.ts, what `plan` gave before): over ledgers with every kind of history, items
 * the manifest no longer lists, renames, twins, saved takes of the same request, a budget that runs
 * out, files missing on disk and files the ledger did not write, whatever the chunks' size.
 */

const NOW = Date.now();

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
      { numRuns: 60, examples: EVERY_RULE },
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
