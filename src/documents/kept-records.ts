import { stringify } from 'csv-stringify/sync';
import type { ExportFile, ExportFormat } from './export-records.js';

/**
 * `export --kept`: one record per manifest item, the take kept of it (docs/gallery.md, "Keepers"),
 * for a pipeline that publishes the picks. An item with one variant and one saved take is kept by
 * itself; an item without a kept take is left out (and counted by the caller). A keeper the
 * manifest no longer asks for (its variant or its item gone) is a record with `in_manifest: false`.
 */
export interface KeptRecord {
  /** The manifest item's id (the group of its variants). */
  id: string;
  /** The ledger item kept: the item's id, or its variant's (`<id>.v<n>`). */
  item: string;
  variant: number;
  take: number;
  job_id: string | null;
  /** What that take's job cost, net of refunds, as a six-decimal string. */
  net_cost_usd: string;
  completed_at: string | null;
  files: ExportFile[];
  /** False when the manifest no longer asks for the kept take: its variant, or its whole item. */
  in_manifest: boolean;
}

/** A keeper the manifest no longer asks for, as `status` and `plan` name it (`keepers_outside_manifest`). */
export interface KeeperOutsideManifest {
  /** The item's id (the group of its variants). */
  id: string;
  /** The ledger item kept (`<id>.v<n>`, or the id itself). */
  item: string;
  variant: number;
  take: number;
  /** The variant is beyond the item's `variants` now, or the item left the manifest. */
  why: 'variant_not_asked' | 'item_not_asked';
  /** The kept take's files, shown from the manifest's folder. */
  paths: string[];
}

/**
 * A kept file that is not as the ledger saved it (`export --kept` reads each and compares its
 * SHA-256; an object in a bucket is asked for its size and recorded SHA-256): gone, other bytes,
 * or the bucket could not be asked (`unchecked`).
 */
export interface KeptFileProblem {
  id: string;
  item: string;
  path: string;
  problem: 'missing' | 'altered' | 'unchecked';
  detail: string;
}

export const KEPT_COLUMNS = [
  'id',
  'item',
  'variant',
  'take',
  'job_id',
  'net_cost_usd',
  'completed_at',
  'files',
  'in_manifest',
] as const satisfies ReadonlyArray<keyof KeptRecord>;

/** The kept records as JSON Lines (keys in column order) or CSV (files as JSON text in their cell). */
export function keptChunks(records: readonly KeptRecord[], format: ExportFormat): string[] {
  if (format === 'jsonl') return records.map((record) => `${JSON.stringify(record)}\n`);
  // `files` as JSON text, `in_manifest` as export's own CSV writes it (true, false).
  const cells = (r: KeptRecord) =>
    KEPT_COLUMNS.map((column) =>
      column === 'files'
        ? JSON.stringify(r.files)
        : column === 'in_manifest'
          ? String(r[column])
          : (r[column] ?? ''),
    );
  return [stringify([KEPT_COLUMNS as readonly string[], ...records.map(cells)])];
}

/**
 * What `export --kept` says beside its records, for stderr: the items left out, the records of
 * keepers outside the manifest, and each kept file not as saved (empty when there is nothing).
 */
export function keptExportNotes(
  command: string,
  found: {
    records: readonly KeptRecord[];
    withoutKeeper: readonly string[];
    fileProblems: readonly KeptFileProblem[];
    ledger: { path: string; exists: boolean; sandboxLedger?: string };
  },
  /** The same export on the sandbox's ledger, as the person would type it. */
  sandboxCommand = 'mediabatch export --kept --sandbox',
): string {
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const lines: string[] = [];
  const left = found.withoutKeeper.length;
  const { ledger } = found;
  const read = ledger.exists
    ? `the ledger read: ${ledger.path}`
    : `no ledger at ${ledger.path}: nothing has run there`;
  if (left > 0)
    lines.push(`${command}: ${left} item(s) without a kept take left out (mediabatch keep); ${read}`);
  if (left > 0 && ledger.sandboxLedger)
    lines.push(
      `${command}: a sandbox run keeps its ledger at ${ledger.sandboxLedger}: add --sandbox to read it (${sandboxCommand})`,
    );
  const outside = found.records.filter((record) => !record.in_manifest);
  if (outside.length > 0)
    lines.push(
      `${command}: ${plural(outside.length, 'kept take')} outside the manifest, written with in_manifest false: ` +
        outside.map((record) => `${record.id} (${record.item})`).join(', '),
    );
  const problems = found.fileProblems;
  if (problems.length > 0)
    lines.push(
      `${command}: ${plural(problems.length, 'kept file')} not as saved (each compared with its recorded SHA-256); the records are written as the ledger holds them:`,
      ...problems.map((p) => `  ${p.id}: ${p.path} ${p.problem}: ${p.detail}`),
    );
  return lines.map((line) => `${line}\n`).join('');
}
