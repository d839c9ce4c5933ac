import { existsSync } from 'node:fs';
import type { MediaGenClient } from '../../api/client.js';
import { ApiError } from '../../api/errors.js';
import { ExitCode, UserError } from '../../errors.js';
import { Ledger } from '../../ledger/ledger.js';
import type { AttemptRecord } from '../../ledger/records.js';
import { forSandbox, ledgerPathFor, manifestOrExit } from '../../lib/common.js';
import type { SandboxHandle } from '../../lib/embedded-sandbox.js';
import { startEmbeddedSandbox } from '../../lib/embedded-sandbox.js';
import { lockLedger } from '../../lib/ledger-access.js';
import { describeFailure } from '../../lib/preflight.js';
import { checkServiceForLedger, serviceTarget, serviceTimings } from '../../lib/service-check.js';
import { formatUsdHuman } from '../../money.js';
import { didYouMean } from '../../suggest.js';
import type { Command } from '../io.js';

/**
 * `mediabatch forget <manifest> [id...]`: the way out when the service lost jobs the ledger holds
 * (a `run` stops on `job_not_found`). Each job in flight is given up only once the service itself
 * says it does not know it (GET /jobs/{id} answers 404): anything else may still be a live, paid
 * job that a later run saves. A forgotten job stays in the ledger with what it cost, and its item
 * is pending again, so the next run pays for it again and says so first (docs/troubleshooting.md).
 */
export const forgetCommand: Command<'forget'> = async ({ values, positionals }, io) => {
  const [manifestArg, ...ids] = positionals;
  const manifest = forSandbox(manifestOrExit(manifestArg, io, 'nothing was forgotten'), values.sandbox);
  const timings = serviceTimings(io);
  const target = serviceTarget(values.sandbox, values['base-url'], io, {
    what: 'no service to ask which jobs it knows',
    sandbox: 'ask the sandbox that `run --sandbox` uses',
  });
  const ledgerPath = ledgerPathFor(manifest, values.ledger, io, { sandbox: values.sandbox });
  if (!existsSync(ledgerPath)) throw new UserError(`no ledger at ${ledgerPath}: there is nothing to forget`);
  const lock = lockLedger(ledgerPath);
  if (!lock)
    throw new UserError(
      `the ledger ${ledgerPath} is held by a live run; nothing was forgotten`,
      ExitCode.Refused,
    );
  let ledger: Ledger | null = null;
  let sandbox: SandboxHandle | null = null;
  try {
    ledger = Ledger.open(ledgerPath, manifest.name, manifest.file);
    const jobs = jobsToCheck(
      ledger.listAttempts(),
      ids,
      manifest.items.map((item) => item.id),
    );
    if (jobs.length === 0) {
      io.stdout.write(
        `${manifest.name}: no job in flight${ids.length > 0 ? ` for ${ids.join(', ')}` : ''}; nothing to forget\n`,
      );
      return ExitCode.Ok;
    }
    if (target.connection === null) sandbox = await startEmbeddedSandbox(ledgerPath);
    const connection = target.connection ?? { baseUrl: sandbox!.baseUrl, apiKey: sandbox!.apiKey };
    const bound = ledger.service()?.identity ?? null;
    const client = await checkServiceForLedger(
      'forget',
      { connection, identity: target.identity },
      { bound, path: ledgerPath },
      timings,
      io,
    );
    const outcomes = await forgetUnknown(client, ledger, jobs);
    const planCommand = ['mediabatch plan', manifestArg, ...(values.sandbox ? ['--sandbox'] : [])].join(' ');
    io.stdout.write(renderOutcomes(manifest.name, outcomes, planCommand));
    return outcomes.every((outcome) => outcome.lost) ? ExitCode.Ok : ExitCode.ItemsNotDone;
  } finally {
    ledger?.close();
    lock.release();
    await sandbox?.close();
  }
};

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
        : `no item '${id}' in the manifest${didYouMean(id, manifestIds, (s) => `'${s}'`)}; nothing was forgotten`,
    );
  }
  return open.filter((attempt) => ids.includes(attempt.itemId));
}

interface Outcome {
  attempt: AttemptRecord;
  lost: boolean;
  /** Why the job was kept, when it was. */
  why?: string;
}

/** Asks for each job once; only a 404 gives it up. A refused account stops everything (exit 3). */
async function forgetUnknown(
  client: MediaGenClient,
  ledger: Ledger,
  jobs: readonly AttemptRecord[],
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const attempt of jobs) {
    try {
      const answer = await client.getJob(attempt.jobId!);
      outcomes.push({
        attempt,
        lost: false,
        why: `the service still knows it (${answer.data.status}): kept, and the next run follows it`,
      });
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) {
        const message = `the service answered ${error.code ?? '404'} for job ${attempt.jobId}: given up with mediabatch forget`;
        outcomes.push({ attempt: ledger.recordJobLost(attempt.id, message), lost: true });
        continue;
      }
      if (error instanceof ApiError && (error.status === 401 || error.status === 402))
        throw new UserError(
          `the service refused the account (${error.code ?? error.status}) while asking for job ${attempt.jobId}; ` +
            `${outcomes.filter((outcome) => outcome.lost).length} job(s) were forgotten before that, the rest kept`,
          ExitCode.Refused,
        );
      outcomes.push({
        attempt,
        lost: false,
        why: `could not ask the service (${describeFailure(error)}): kept`,
      });
    }
  }
  return outcomes;
}

function renderOutcomes(name: string, outcomes: readonly Outcome[], planCommand: string): string {
  const lines = outcomes.map(({ attempt, lost, why }) => {
    const paid = formatUsdHuman(attempt.amountMicros - attempt.refundedMicros);
    return lost
      ? `  forgot ${attempt.itemId}: job ${attempt.jobId} is unknown to the service; it cost ${paid}, and the item is pending again`
      : `  kept ${attempt.itemId}: job ${attempt.jobId}: ${why}`;
  });
  const lost = outcomes.filter((outcome) => outcome.lost);
  const paid = lost.reduce((sum, { attempt }) => sum + attempt.amountMicros - attempt.refundedMicros, 0);
  const tail =
    lost.length === 0
      ? 'nothing was forgotten'
      : `${lost.length} job(s) forgotten, ${formatUsdHuman(paid)} paid for them is kept in the spend. ` +
        `The next run submits their items again and pays again: ${planCommand} says how much at most`;
  return `${name}:\n${lines.join('\n')}\n${tail}\n`;
}
