import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { sidecarPathFor } from '../../downloads/sidecar.js';
import { writeFileAtomically } from '../../downloads/write-atomically.js';
import { UserError } from '../../errors.js';
import type { AttemptRecord, FileRecord } from '../../ledger/records.js';
import type { Job } from '../../service-client/schemas.js';
import { type AuditDocument, problemsCsv } from './audit-report.js';

/**
 * The dispute bundle (docs/audit.md): what a provider's support needs to settle each problem.
 * problems.csv, audit.json (the `audit --json` document), and per job of a problem the service's
 * JSON of it (jobs/), the ledger's record of it (ledger/) and its sidecars where there are some
 * (sidecars/). Nothing in it names the API key: the service's jobs and the ledger's rows never do.
 */

/** What the bundle is made of, besides the document. */
export interface BundleEvidence {
  /** The service's JSON of each job it showed, by job id. */
  jobs: ReadonlyMap<string, Job>;
  /** The ledger's attempt of each job it recorded, by job id. */
  attempts: ReadonlyMap<string, AttemptRecord>;
  /** Every saved file of the batch, with its absolute path (listFiles). */
  files: readonly FileRecord[];
}

/** The folder a bundle goes to: a new one, or an empty one; anything else is refused before the audit reads. */
export function checkBundleFolder(dir: string): void {
  const stat = statSync(dir, { throwIfNoEntry: false });
  if (stat === undefined) return;
  if (!stat.isDirectory() || readdirSync(dir).length > 0)
    throw new UserError(
      `\`out\` ${dir} is ${stat.isDirectory() ? 'a folder that is not empty' : 'not a folder'}: a dispute bundle goes into a new or empty folder; nothing was audited`,
      'target_refused',
      { option: 'out', target: dir },
    );
}

export async function writeBundle(dir: string, doc: AuditDocument, evidence: BundleEvidence): Promise<void> {
  await writeFileAtomically(join(dir, 'problems.csv'), problemsCsv(doc));
  await writeFileAtomically(join(dir, 'audit.json'), `${JSON.stringify(doc, null, 2)}\n`);
  const jobIds = [...new Set(doc.problems.map((problem) => problem.job_id))];
  for (const jobId of jobIds) {
    const job = evidence.jobs.get(jobId);
    if (job)
      await writeFileAtomically(join(dir, 'jobs', `${jobId}.json`), `${JSON.stringify(job, null, 2)}\n`);
    const attempt = evidence.attempts.get(jobId);
    if (!attempt) continue;
    await writeFileAtomically(join(dir, 'ledger', `${jobId}.json`), `${JSON.stringify(attempt, null, 2)}\n`);
    for (const sidecar of sidecarsOf(attempt.id, evidence.files))
      await writeFileAtomically(join(dir, 'sidecars', jobId, basename(sidecar)), readFileSync(sidecar));
  }
}

/** The sidecars beside an attempt's saved files that are on this disk (a bucket's are not fetched). */
function sidecarsOf(attemptId: number, files: readonly FileRecord[]): string[] {
  return files
    .filter((file) => file.attemptId === attemptId)
    .map((file) => sidecarPathFor(file.path))
    .filter((path) => existsSync(path));
}
