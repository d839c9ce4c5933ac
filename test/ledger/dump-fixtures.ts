import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BatchDump } from '../../src/ledger/records.js';
import { tempDir } from '../support/temp.js';

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

/** The files the rich batch saved, as they were written (their SHA-256 is in the ledger). */
const SAVED: Record<string, string> = {
  'beach-sunrise.mp4': 'video of beach-sunrise',
  'two-takes.take1.mp4': 'video of two-takes',
  'two-takes.mp4': 'take two',
};

/** The rich batch's ledger, as the synchronous ledgers made it (fixtures/README-v7-and-postgres.md). */
export const RICH_LEDGER = join(import.meta.dirname, 'fixtures', 'v7-project', 'ledger.sqlite');

/**
 * A project whose ledger holds one of everything a batch (`moving`) records: a done item with its
 * file, a failed and refunded one, a succeeded job not saved yet, an item with two takes (the
 * first file moved aside), a job still running, a pending item, template variables, a service
 * binding, two keepers, two runs (one never ended) and the events all of that wrote: the
 * manifest `batch.yaml`, its ledger and its saved files, in a project folder of their own.
 */
export function richBatch(): { dir: string; ledger: string } {
  const dir = tempDir('mediabatch-rich-');
  writeFileSync(join(dir, 'batch.yaml'), RICH_MANIFEST);
  mkdirSync(join(dir, 'out', 'moving'), { recursive: true });
  for (const [name, text] of Object.entries(SAVED)) writeFileSync(join(dir, 'out', 'moving', name), text);
  mkdirSync(join(dir, '.mediabatch'));
  const ledger = join(dir, '.mediabatch', 'moving.sqlite');
  copyFileSync(RICH_LEDGER, ledger);
  return { dir, ledger };
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
