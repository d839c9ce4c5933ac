import { Writable } from 'node:stream';
import { z } from 'zod';
import type { ImportSummary } from '../import/render.js';
import type { Manifest } from '../manifest/index.js';
import type { ExportRecord, ExportState } from '../report/export-records.js';
import { checkOptions, hostOf, ledgerOptionsSchema, placeOf, serviceOptionsSchema } from './api-options.js';
import { exportedRecords } from './export-items.js';
import { importLedger } from './import-ledger.js';
import { withLedger } from './ledger-read.js';
import { serviceTarget, serviceTimings } from './service-check.js';

const importOptionsSchema = serviceOptionsSchema.extend({
  /** How far back to look, in hours (`--since`); default 48, how long outputs live. */
  sinceHours: z.number().positive().optional(),
  /** Told each pre-flight word and warning, one line each. */
  log: z.custom<(line: string) => void>((value) => typeof value === 'function').optional(),
});

export type ImportOptions = z.input<typeof importOptionsSchema>;

/** Rebuilds a lost ledger from the service's job list, with the checks `mediabatch import` makes. */
export async function importJobs(manifest: Manifest, options: ImportOptions = {}): Promise<ImportSummary> {
  const checked = checkOptions('importJobs', importOptionsSchema, options);
  const say = checked.log ?? (() => undefined);
  const host = hostOf(
    checked,
    new Writable({ write: (chunk, _enc, done) => done(void say(String(chunk).trimEnd())) }),
  );
  const placed = placeOf(manifest, checked, host);
  const target = serviceTarget(checked.sandbox ?? false, checked.baseUrl, host, {
    what: 'no service to import from',
    sandbox: 'use the embedded sandbox',
  });
  const sinceMs = (checked.sinceHours ?? 48) * 3_600_000;
  return importLedger({ ...placed, target, timings: serviceTimings(host), sinceMs }, host);
}

/** The item states, and `removed`: the items paid for that the manifest no longer names. */
const EXPORT_STATES = [
  'pending',
  'in_flight',
  'done',
  'failed',
  'budget_exceeded',
  'expired',
  'removed',
] as const satisfies readonly ExportState[];

const exportOptionsSchema = ledgerOptionsSchema.extend({
  /** Only items in these states (`--state`), `removed` for those the manifest no longer names; default every item. */
  states: z.array(z.enum(EXPORT_STATES)).optional(),
});

export type ExportOptions = z.input<typeof exportOptionsSchema>;

/**
 * One record per item in manifest order (`export --format jsonl`), from the ledger, then the paid
 * items the manifest no longer names (`in_manifest: false`).
 */
export function exportItems(manifest: Manifest, options: ExportOptions = {}): ExportRecord[] {
  const checked = checkOptions('exportItems', exportOptionsSchema, options);
  const host = hostOf({ cwd: checked.cwd }, process.stderr);
  const states = new Set<ExportState>(checked.states ?? []);
  return withLedger(manifest, checked.ledger, host, { sandbox: checked.sandbox ?? false }, (ledger) => [
    ...exportedRecords(manifest, ledger, states),
  ]);
}
