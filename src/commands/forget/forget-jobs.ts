import {
  holdLedger,
  openLedgerForWriting,
  refuseLiveRunners,
  refuseMissingLedger,
} from '../../batch/ledger/ledger-access.js';
import type { Batch } from '../../batch/resolve/resolve-batch.js';
import type { Warn } from '../../batch/resolve/warnings.js';
import { startEmbeddedSandbox } from '../../batch/service/embedded-sandbox.js';
import { describeFailure } from '../../batch/service/preflight.js';
import { checkServiceForLedger, serviceTarget } from '../../batch/service/service-check.js';
import { ApiError, UserError } from '../../errors.js';
import type {
  AttemptRecord,
  LedgerLifecycle,
  RecordReads,
  RunLedger,
  SharedLedger,
} from '../../ledger/index.js';
import type { SandboxHandle } from '../../sandbox/index.js';
import type { MediaGenClient } from '../../service-client/client.js';
import { didYouMean } from '../../suggest.js';

/**
 * Gives up the jobs the service lost (docs/troubleshooting.md). Each job in flight is given up only
 * once the service itself says it does not know it (GET /jobs/{id} answers 404): anything else may
 * still be a live, paid job that a later run saves. A forgotten job stays in the ledger with what it
 * cost, and its item is pending again. Returns one outcome per job looked at (none: nothing in flight).
 */
export async function forgetLostJobs(batch: Batch, ids: readonly string[], warn: Warn): Promise<Outcome[]> {
  const { manifest, ledgerShown } = batch;
  const target = serviceTarget(batch, {
    what: 'no service to ask which jobs it knows',
    sandbox: 'ask the sandbox a `sandbox` run uses',
  });
  refuseMissingLedger(batch.ledger, ledgerShown, 'to forget');
  const lock = holdLedger(batch.ledger, 'forgotten');
  let ledger: (LedgerLifecycle & RunLedger & RecordReads & SharedLedger) | null = null;
  let sandbox: SandboxHandle | null = null;
  try {
    ledger = await openLedgerForWriting(batch.ledger, manifest, batch.settings, 'forgotten');
    await refuseLiveRunners(ledger, 'forgotten');
    const jobs = jobsToCheck(
      await ledger.listAttempts(),
      ids,
      manifest.items.map((item) => item.id),
    );
    if (jobs.length === 0) return [];
    if (target.connection === null)
      sandbox = await startEmbeddedSandbox(ledgerShown, warn, batch.sandboxConfig);
    const connection = target.connection ?? { baseUrl: sandbox!.baseUrl, apiKey: sandbox!.apiKey };
    const bound = (await ledger.service())?.identity ?? null;
    const client = await checkServiceForLedger(
      { connection, identity: target.identity },
      { bound, path: ledgerShown },
      batch,
      warn,
      'forgotten',
    );
    return await forgetUnknown(client, ledger, jobs);
  } finally {
    await ledger?.close();
    lock.release();
    await sandbox?.close();
  }
}

/** Accepted jobs still queued or running when last seen: the ones a run waits for. */
function jobsToCheck(
  attempts: readonly AttemptRecord[],
  ids: readonly string[],
  manifestIds: readonly string[],
): AttemptRecord[] {
  const open = attempts.filter(
    (attempt) =>
      attempt.state === 'accepted' &&
      attempt.jobId !== null &&
      (attempt.jobStatus === 'queued' || attempt.jobStatus === 'running'),
  );
  if (ids.length === 0) return open;
  const withJobs = new Set(open.map((attempt) => attempt.itemId));
  for (const id of ids) {
    if (withJobs.has(id)) continue;
    const known = manifestIds.includes(id);
    throw new UserError(
      known
        ? `${id} has no job in flight in the ledger; forget gives up only jobs a run waits for. Nothing was forgotten`
        : `no item '${id}' in the manifest${didYouMean(id, manifestIds)}; nothing was forgotten`,
      'selection_empty',
    );
  }
  return open.filter((attempt) => ids.includes(attempt.itemId));
}

export interface Outcome {
  attempt: AttemptRecord;
  lost: boolean;
  /** Why the job was left as it was, when it was. */
  why?: string;
}

/** Asks for each job once; only a 404 gives it up. A refused account stops everything (exit 3). */
async function forgetUnknown(
  client: MediaGenClient,
  ledger: RunLedger & RecordReads,
  jobs: readonly AttemptRecord[],
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const attempt of jobs) {
    try {
      const answer = await client.getJob(attempt.jobId!);
      outcomes.push({
        attempt,
        lost: false,
        why: `the service still knows it (${answer.data.status}): left, and the next run follows it`,
      });
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        const message = `the service answered ${error.code ?? '404'} for job ${attempt.jobId}: given up with mediabatch forget`;
        outcomes.push({ attempt: await ledger.recordJobLost(attempt.id, message), lost: true });
        continue;
      }
      if (error instanceof ApiError && (error.status === 401 || error.status === 402))
        throw new UserError(
          `the service refused the account (${error.code}) while asking for job ${attempt.jobId}; ` +
            `${outcomes.filter((outcome) => outcome.lost).length} job(s) were forgotten before that, the rest left as they were`,
          'account_refused',
        );
      outcomes.push({
        attempt,
        lost: false,
        why: `could not ask the service (${describeFailure(error)}): left`,
      });
    }
  }
  return outcomes;
}
