import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { FolderKind } from '../../batch/named-files/named-folder.js';
import { sidecarPathFor } from '../../downloads/sidecar.js';
import { writeFileAtomically, writeFolderAtomically } from '../../downloads/write-atomically.js';
import type { AttemptRecord, FileRecord } from '../../ledger/index.js';
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

/**
 * The bundle's folder as the door for named files knows it (batch/named-files/named-folder.ts): a new or empty
 * folder, or with `force` an earlier bundle, replaced whole.
 */
export const BUNDLE_FOLDER: FolderKind = {
  call: 'audit',
  option: 'out',
  writes: 'a dispute bundle',
  isOwn: isBundle,
};

/** What an earlier bundle holds, and nothing else: its two files, and folders of job JSON. */
const BUNDLE_ENTRIES: Record<string, (path: string) => boolean> = {
  'problems.csv': (path) => statSync(path).isFile(),
  'audit.json': (path) => isAuditDocument(path),
  jobs: (path) => holdsOnly(path, isJson),
  ledger: (path) => holdsOnly(path, isJson),
  sidecars: (path) => holdsOnly(path, (entry) => holdsOnly(entry, isJson)),
};

/** Whether `dir` holds a dispute bundle mediabatch wrote, and nothing besides. */
function isBundle(dir: string): boolean {
  try {
    const names = readdirSync(dir);
    return (
      names.includes('audit.json') && names.every((name) => BUNDLE_ENTRIES[name]?.(join(dir, name)) === true)
    );
  } catch {
    return false;
  }
}

function holdsOnly(dir: string, each: (path: string) => boolean): boolean {
  return statSync(dir).isDirectory() && readdirSync(dir).every((name) => each(join(dir, name)));
}

const isJson = (path: string): boolean => path.endsWith('.json') && statSync(path).isFile();

function isAuditDocument(path: string): boolean {
  if (!isJson(path)) return false;
  const doc = JSON.parse(readFileSync(path, 'utf8')) as Partial<Record<keyof AuditDocument, unknown>>;
  return typeof doc.audited_at === 'string' && typeof doc.agrees === 'boolean' && 'bundle' in doc;
}

/** The bundle, whole or not at all: written beside `dir` and renamed into place (over an earlier one with `replace`). */
export async function writeBundle(
  dir: string,
  doc: AuditDocument,
  evidence: BundleEvidence,
  replace: boolean,
): Promise<void> {
  await writeFolderAtomically(dir, (temp) => writeBundleFiles(temp, doc, evidence), replace);
}

async function writeBundleFiles(dir: string, doc: AuditDocument, evidence: BundleEvidence): Promise<void> {
  const write = (path: string, content: string | Buffer) => writeFileAtomically(path, content);
  await write(join(dir, 'problems.csv'), problemsCsv(doc));
  await write(join(dir, 'audit.json'), `${JSON.stringify(doc, null, 2)}\n`);
  const jobIds = [...new Set(doc.problems.map((problem) => problem.job_id))];
  const filesOf = filesByAttempt(evidence.files);
  for (const jobId of jobIds) {
    const job = evidence.jobs.get(jobId);
    if (job) await write(join(dir, 'jobs', `${jobId}.json`), `${JSON.stringify(job, null, 2)}\n`);
    const attempt = evidence.attempts.get(jobId);
    if (!attempt) continue;
    await write(join(dir, 'ledger', `${jobId}.json`), `${JSON.stringify(attempt, null, 2)}\n`);
    for (const sidecar of sidecarsOf(filesOf.get(attempt.id) ?? []))
      await write(join(dir, 'sidecars', jobId, basename(sidecar)), readFileSync(sidecar));
  }
}

/**
 * The batch's saved files by attempt, read once: a pass over every file for each job of a problem
 * made a bundle of many problems grow with the square of the batch.
 */
function filesByAttempt(files: readonly FileRecord[]): Map<number, FileRecord[]> {
  const byAttempt = new Map<number, FileRecord[]>();
  for (const file of files) {
    const list = byAttempt.get(file.attemptId);
    if (list) list.push(file);
    else byAttempt.set(file.attemptId, [file]);
  }
  return byAttempt;
}

/** The sidecars beside an attempt's saved files that are on this disk (a bucket's are not fetched). */
function sidecarsOf(files: readonly FileRecord[]): string[] {
  return files.map((file) => sidecarPathFor(file.path)).filter((path) => existsSync(path));
}
