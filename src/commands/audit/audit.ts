import { resolve } from 'node:path';
import { z } from 'zod';
import { batchOf, checkedManifest, checkOptions, serviceOptionsSchema } from '../../batch/resolve/options.js';
import type { Warning } from '../../batch/resolve/warnings.js';
import type { Manifest } from '../../manifest/index.js';
import { auditBatch } from './audit-batch.js';
import type { AuditDocument } from './audit-report.js';

export type { AuditDocument, AuditProblemEntry } from './audit-report.js';
export type { AuditProblemKind } from './audit-rules.js';

const auditOptionsSchema = serviceOptionsSchema.extend({
  /**
   * A folder for the dispute bundle (`--out`), from `cwd`: new or empty, or with `force` an earlier
   * bundle. problems.csv, audit.json, and each problem job's JSON as the service returned it, the
   * ledger's record and its sidecars.
   */
  out: z.string().min(1).optional(),
  /** Replace an earlier dispute bundle at `out` (never a folder of other files, nor a protected one). */
  force: z.boolean().optional(),
  /** Told each pre-flight word and warning, as `{ code, message }`. */
  warn: z.custom<(warning: Warning) => void>((value) => typeof value === 'function').optional(),
});

export type AuditOptions = z.input<typeof auditOptionsSchema>;

/**
 * Reads every job of the batch back from the service and compares it with the ledger
 * (`mediabatch audit`, docs/audit.md): refunds missing, charges over max_cost_usd, jobs only one
 * side knows, and both net spends to the micro-dollar. Sends no POST; records an `audit` event in
 * the ledger. `agrees` false: something is owed or unexplained (the CLI exits `Unreconciled`).
 */
export async function audit(manifest: Manifest, options: AuditOptions = {}): Promise<AuditDocument> {
  const { out, force, warn, ...rest } = checkOptions('audit', auditOptionsSchema, options);
  const batch = batchOf(checkedManifest('audit', manifest), rest);
  const bundle = out === undefined ? null : { out: resolve(batch.cwd, out), force: force ?? false };
  return auditBatch(batch, bundle, warn ?? (() => undefined));
}
