import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { openManifest, type StreamedManifest } from '../../src/batch/resolve/streamed-manifest.js';
import { loadManifest, type Manifest } from '../../src/manifest/index.js';
import { finished, LedgerBuilder, ledgerPath, project } from '../e2e/commands/fixtures.js';

/**
 * Batches with every kind of history, for the commands that read a manifest a chunk at a time
 * (plan, status, export) to be held to what they give of the same manifest held whole: items the
 * manifest no longer lists, renames, twins, saved takes of the same request, a budget that runs
 * out, files missing on disk and files the ledger did not write.
 */

/** An earlier manifest's item and what the ledger did with it. */
export type History =
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
export type Fate = 'kept' | 'edited' | 'dropped';

export interface Case {
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
export const aCase: fc.Arbitrary<Case> = fc.record({
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

export const line = (id: string, prompt: string, cap: boolean) =>
  JSON.stringify({ id, prompt, ...(cap ? { max_cost_usd: '0.60' } : {}) });

export function manifestYaml(budget: string | null): string {
  return `version: 1\nname: streamed\ninput: {seconds: 6, definition: 720p}\n${budget ? `budget_usd: "${budget}"\n` : ''}items_from: items.jsonl\n`;
}

export async function built(c: Case): Promise<{ dir: string; manifest: Manifest; path: string }> {
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

/** The manifest opened to be read a chunk at a time (the fixture's always can be). */
export function streamedOf(file: string): StreamedManifest {
  const opened = openManifest(file);
  if (!('streamed' in opened)) throw new Error('the fixture manifest should stream');
  return opened;
}
