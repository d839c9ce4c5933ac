import pLimit from 'p-limit';
import {
  holdLedger,
  openLedgerForWriting,
  refuseLiveRunners,
  refuseMissingLedger,
} from '../../batch/ledger/ledger-access.js';
import { refuseNamedFolder } from '../../batch/named-files/named-folder.js';
import { targetGuard } from '../../batch/named-files/named-target.js';
import type { Batch } from '../../batch/resolve/resolve-batch.js';
import type { Warn } from '../../batch/resolve/warnings.js';
import { startEmbeddedSandbox } from '../../batch/service/embedded-sandbox.js';
import { checkServiceForLedger, serviceTarget } from '../../batch/service/service-check.js';
import { ApiError, UserError } from '../../errors.js';
import {
  type AttemptRecord,
  type FileRecord,
  type LedgerLifecycle,
  type RecordReads,
  type SharedLedger,
  spentMicros,
} from '../../ledger/index.js';
import type { SandboxHandle } from '../../sandbox/index.js';
import type { MediaGenClient } from '../../service-client/client.js';
import type { Job } from '../../service-client/schemas.js';
import { BUNDLE_FOLDER, writeBundle } from './audit-bundle.js';
import { type AuditDocument, auditDocument } from './audit-report.js';
import { auditFindings, type LedgerJob, type ListedJobs } from './audit-rules.js';

/** 1,000 pages of 100 jobs: a bound on a runaway listing, as import's. */
const MAX_PAGES = 1000;

/**
 * `mediabatch audit` (docs/audit.md): every job of the batch read back from the service (GET
 * /jobs/{id} for each job the ledger knows, the job list for those it does not) and compared with
 * the ledger. It sends no POST; the one thing it changes is an `audit` event in the ledger.
 * `bundle`: the dispute bundle's folder (absolute), checked by the door for named files before
 * anything is read, and whether `force` may replace an earlier bundle there; null for none.
 */
export async function auditBatch(
  batch: Batch,
  bundle: { out: string; force: boolean } | null,
  warn: Warn,
): Promise<AuditDocument> {
  const out = bundle?.out ?? null;
  const { manifest, ledgerShown } = batch;
  const target = serviceTarget(batch, {
    what: 'no service to read the jobs from',
    sandbox: 'audit against the embedded sandbox of `sandbox` runs',
  });
  refuseMissingLedger(batch.ledger, ledgerShown, 'to audit', { ledgerPath: ledgerShown });
  const write =
    bundle === null ? null : refuseNamedFolder(bundle.out, targetGuard(batch), BUNDLE_FOLDER, bundle.force);
  const lock = holdLedger(batch.ledger, 'audited');
  let ledger: (LedgerLifecycle & RecordReads & SharedLedger) | null = null;
  let sandbox: SandboxHandle | null = null;
  try {
    ledger = await openLedgerForWriting(batch.ledger, manifest, batch.settings, 'audited');
    await refuseLiveRunners(ledger, 'audited');
    if (target.connection === null)
      sandbox = await startEmbeddedSandbox(ledgerShown, warn, batch.sandboxConfig);
    const connection = target.connection ?? { baseUrl: sandbox!.baseUrl, apiKey: sandbox!.apiKey };
    const client = await checkServiceForLedger(
      { connection, identity: target.identity },
      { bound: (await ledger.service())?.identity ?? null, path: ledgerShown },
      batch,
      warn,
      'audited',
    );
    const attempts = (await ledger.listAttempts()).filter((attempt) => attempt.jobId !== null);
    const ledgerJobs = await readLedgerJobs(client, attempts);
    const known = new Set(attempts.map((attempt) => attempt.jobId!));
    const listed = await listOthers(client, manifest.name, known);
    const findings = auditFindings(ledgerJobs, listed, spentMicros(await ledger.moneyTotals()));
    const auditedAt = new Date().toISOString();
    const doc = auditDocument(findings, {
      manifest: manifest.name,
      ledger: ledger.path,
      auditedAt,
      bundle: out,
    });
    if (out !== null)
      await writeBundle(
        out,
        doc,
        evidenceOf(ledgerJobs, listed, await ledger.listFiles()),
        write === 'replace',
      );
    await ledger.appendEvent(null, null, 'audit', {
      agrees: doc.agrees,
      problems: doc.problems.length,
      owed_usd: doc.owed_usd,
      unexplained_usd: doc.unexplained_usd,
      net_spend: doc.net_spend,
    });
    return doc;
  } finally {
    await ledger?.close();
    lock.release();
    await sandbox?.close();
  }
}

/** GET /jobs/{id} for each job the ledger knows, four at a time; a 404 is a finding, not a failure. */
async function readLedgerJobs(
  client: MediaGenClient,
  attempts: readonly AttemptRecord[],
): Promise<LedgerJob[]> {
  const limit = pLimit(4);
  return Promise.all(
    attempts.map((attempt) =>
      limit(async (): Promise<LedgerJob> => {
        try {
          const answer = await client.getJob(attempt.jobId!);
          return { attempt, answer: { kind: 'found', job: answer.data, requestId: answer.requestId } };
        } catch (error) {
          if (error instanceof ApiError && error.status === 404)
            return { attempt, answer: { kind: 'not_found', requestId: error.requestId ?? null } };
          throw unread(`job ${attempt.jobId}`, error);
        }
      }),
    ),
  );
}

/** The workspace's whole job list: the batch's jobs the ledger does not know, and other clients'. */
async function listOthers(
  client: MediaGenClient,
  manifestName: string,
  known: ReadonlySet<string>,
): Promise<ListedJobs> {
  const listed: ListedJobs = { unrecorded: [], others: [] };
  let pages = 0;
  try {
    for await (const page of client.listJobPages({ limit: 100 })) {
      for (const job of page.data.data) {
        if (job.metadata['mediabatch.manifest'] !== manifestName) listed.others.push(job);
        else if (!known.has(job.id)) listed.unrecorded.push(job);
      }
      pages += 1;
      if (pages >= MAX_PAGES && page.data.has_more)
        throw new Error(`the job list goes on past ${MAX_PAGES} pages of 100 jobs`);
    }
  } catch (error) {
    throw unread('the job list', error);
  }
  return listed;
}

/** The service could not be read whole: the audit cannot say anything, and records nothing. */
function unread(what: string, error: unknown): UserError {
  if (error instanceof UserError) return error;
  if (error instanceof ApiError && (error.status === 401 || error.status === 402))
    return new UserError(
      `the service refused the account (${error.code}) while reading ${what}; nothing was audited`,
      'account_refused',
    );
  return new UserError(
    `could not read ${what} from the service (${error instanceof Error ? error.message : String(error)}); nothing was audited`,
    'service_read_failed',
  );
}

function evidenceOf(ledgerJobs: readonly LedgerJob[], listed: ListedJobs, files: FileRecord[]) {
  const jobs = new Map<string, Job>(listed.unrecorded.map((job) => [job.id, job]));
  const attempts = new Map<string, AttemptRecord>();
  for (const { attempt, answer } of ledgerJobs) {
    attempts.set(attempt.jobId!, attempt);
    if (answer.kind === 'found') jobs.set(answer.job.id, answer.job);
  }
  return { jobs, attempts, files };
}
