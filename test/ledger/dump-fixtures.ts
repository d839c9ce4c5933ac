import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BatchDump } from '../../src/ledger/records.js';
import { finished, LedgerBuilder, ledgerPath, project } from '../e2e/commands/fixtures.js';

/** A manifest whose ledger holds one of everything a batch records. */
export const RICH_MANIFEST = `version: 1
name: moving
input: {seconds: 6, definition: 720p}
budget_usd: "5.00"
items:
  - {id: beach-sunrise, prompt: A beach at sunrise}
  - {id: city-night, prompt: A city at night}
  - {id: late-save, prompt: Finished but not saved}
  - {id: two-takes, prompt: Redone once}
  - {id: in-flight, prompt: Still running}
  - {id: not-yet, prompt: Never submitted}
`;

/**
 * A SQLite ledger with every kind of row: a done item with its file, a failed and refunded one,
 * a succeeded job not saved yet, an item with two takes (the first file moved aside), a job still
 * running, a pending item, template variables, a service binding, two keepers, two runs (one
 * never ended) and the events all of that wrote.
 */
export async function richBatch(): Promise<{ dir: string; ledger: string }> {
  const { dir, manifest } = project(RICH_MANIFEST);
  const b = await LedgerBuilder.open(dir, manifest);
  await b.ledger.bindService('https://api.example.test/v1');
  const run = await b.ledger.startRun(4242);
  await b.done('beach-sunrise', '0.40');
  await b.failed('city-night', '0.40', 'content_rejected', 'the provider rejected the prompt');
  await b.put('late-save', 'pending');
  await b.job(await b.prepare('late-save'), '0.30', 'succeeded', finished(3));
  const first = await b.done('two-takes', '0.50');
  const moved = join(manifest.outputDir, 'two-takes.take1.mp4');
  writeFileSync(moved, 'video of two-takes');
  await b.ledger.recordFileMoved(first.id, 0, moved);
  const item = b.item('two-takes');
  const second = await b.ledger.prepareAttempt({
    itemId: 'two-takes',
    seq: 2,
    idempotencyKey: 'mb_take2-two-takes',
    requestBody: '{"prompt":"Redone once"}',
    requestHash: 'hash-of-take-2',
    reservedMicros: 500_000,
    take: 2,
    vars: '{"mood":"calm"}',
  });
  await b.job(second, '0.50', 'succeeded', finished(40));
  const path = join(manifest.outputDir, 'two-takes.mp4');
  writeFileSync(path, 'take two');
  const sha256 = createHash('sha256').update('take two').digest('hex');
  await b.ledger.recordFilesSaved(second.id, [
    { idx: 0, path, bytes: 8, sha256, mtimeMs: 1_700_000_000_123 },
  ]);
  await b.ledger.setItemState(item.id, { state: 'done' });
  // The earlier take kept over the newer one, and the single take of another item.
  await b.ledger.setKeepers([
    { itemId: 'two-takes', kept: { itemId: 'two-takes', take: 1 } },
    { itemId: 'beach-sunrise', kept: { itemId: 'beach-sunrise', take: 1 } },
  ]);
  await b.put('in-flight', 'in_flight');
  await b.job(await b.prepare('in-flight', '0.60'), '0.60', 'running');
  await b.put('not-yet', 'pending');
  await b.ledger.endRun(run, 1);
  await b.ledger.startRun(4343);
  await b.close();
  return { dir, ledger: ledgerPath(dir, manifest) };
}

/** A dump with its attempt ids replaced by their position: ids are each ledger's own. */
export function normalised(dump: BatchDump): unknown {
  const position = new Map(dump.attempts.map((attempt, index) => [attempt.id, index]));
  const at = (id: number | null) => (id === null ? null : (position.get(id) ?? `foreign ${id}`));
  return {
    ...dump,
    attempts: dump.attempts.map((attempt) => ({ ...attempt, id: at(attempt.id) })),
    files: dump.files.map((file) => ({ ...file, attemptId: at(file.attemptId) })),
    events: dump.events.map((event) => ({ ...event, attemptId: at(event.attemptId) })),
  };
}
