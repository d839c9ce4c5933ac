import { withLedger } from '../../batch/ledger/ledger-read.js';
import { folderTrace } from '../../batch/output/leave-no-trace.js';
import { judgeOutputFolder, waveOf } from '../../batch/output/save-check.js';
import { NO_ANSWER_IN_TIME } from '../../batch/plan/plan-account.js';
import type { AccountCheck } from '../../batch/plan/plan-report.js';
import type { Batch } from '../../batch/resolve/resolve-batch.js';
import type { Warn } from '../../batch/resolve/warnings.js';
import { DEFAULT_SLOT_LIMIT } from '../../batch/run-settings/run-settings.js';
import { stopOnJobsUnknownToLedger } from '../../batch/service/known-jobs-check.js';
import { type Connection, checkAccount, clientFor, connectionOf } from '../../batch/service/service-check.js';
import { ensureSameService, serviceIdentity } from '../../batch/service/service-identity.js';
import { cleanText } from '../../documents/clean-text.js';
import { UserError } from '../../errors.js';
import { SANDBOX_IDENTITY } from '../../ledger/index.js';
import { isS3Uri, type Manifest, type ManifestHead } from '../../manifest/index.js';
import type { OutputStore } from '../../storage/output-store.js';

/**
 * What `run`'s pre-flight would refuse, refused here with the same words and exit code, before
 * anything is priced: a ledger bound to another service, an address that is not the service
 * (missing /v1), and a new ledger while the service holds this manifest's jobs (a lost ledger).
 * Returns what GET /account said, or null when no service was given.
 */
export async function checkLikeRun(batch: Batch<ManifestHead>, warn: Warn): Promise<AccountCheck | null> {
  const { manifest } = batch;
  const connection = batch.sandbox ? null : accountConnection(batch, warn);
  if (!batch.sandbox && connection === null) return null;
  const identity = connection ? serviceIdentity(connection.baseUrl) : SANDBOX_IDENTITY;
  const ledger = await withLedger(batch, async (opened, note) => ({
    ...note,
    attempts: await attemptsIn(opened),
  }));
  try {
    ensureSameService(ledger.service, identity, ledger.path, batch.cwd);
    if (connection === null) return null;
    const account = await accountOf(connection, batch, warn);
    if (account.ok)
      await stopOnJobsUnknownToLedger(
        connection,
        // Read afresh each time it is asked: the check reads it again after the service's list.
        { hasAttempts: async () => ledger.attempts || (await withLedger(batch, attemptsIn)) },
        {
          manifestName: manifest.name,
          manifestArg: batch.named.manifest,
          ledgerPath: ledger.path,
          ledgerFlag: batch.named.ledger,
          baseUrlFlag: batch.named.baseUrl,
        },
      );
    return account;
  } catch (error) {
    throw asRunWouldStop(error);
  }
}

const attemptsIn = async (opened: { hasAttempts(): Promise<boolean> } | null) =>
  (await opened?.hasAttempts()) ?? false;

/**
 * run's check that the output folder takes a file the way a download is saved and has room for
 * the next wave (save-check.ts), made as run makes it, with run's words and exit code. The
 * folders the probe had to create are removed again: a plan leaves nothing behind. A bucket is
 * left to run: its probe writes an object.
 */
export async function checkOutputLikeRun(
  batch: Batch<ManifestHead & Partial<Pick<Manifest, 'items'>>>,
  store: OutputStore,
  /** The items waiting, counted by a streamed plan as they went past; else counted here. */
  waiting?: number,
): Promise<void> {
  const { manifest } = batch;
  if (isS3Uri(manifest.outputDir)) return;
  const only = null;
  const wave = await withLedger(batch, (ledger) =>
    waveOf(manifest, ledger, { only, defaultSlotLimit: DEFAULT_SLOT_LIMIT }, waiting),
  );
  const trace = folderTrace(manifest.outputDir);
  try {
    await judgeOutputFolder(manifest.outputDir, wave, store);
  } catch (error) {
    throw asRunWouldStop(error);
  } finally {
    trace.remove();
  }
}

/** A refusal run would make (the output folder's checks refuse before anything is sent), said as what run would do. */
function asRunWouldStop(error: unknown): unknown {
  if (error instanceof UserError)
    return new UserError(`run would stop here: ${error.message}`, error.code, error.fields);
  return error;
}

/**
 * An explicit base URL is a request to check the account, so a missing key is an error there; a
 * base URL merely exported in the environment without a key just skips the check.
 */
function accountConnection(batch: Batch<ManifestHead>, warn: Warn): Connection | null {
  if (batch.named.baseUrl === undefined && batch.baseUrl && !batch.apiKey) {
    warn({
      code: 'account_not_checked',
      message: 'MEDIAGEN_BASE_URL is set but MEDIAGEN_API_KEY is not; the account is not checked',
    });
    return null;
  }
  return connectionOf(batch);
}

/**
 * run's own pre-flight, GET /account only: plan never sends a POST. A wrong address throws (exit
 * 2, with run's hint); a service that cannot be reached within the window is reported as run
 * would (exit 1), after the plan. Messages never carry the key or a URL's query.
 */
async function accountOf(
  connection: Connection,
  batch: Batch<ManifestHead>,
  warn: Warn,
): Promise<AccountCheck> {
  // Printed as the ledger knows the service: no credentials, query or fragment.
  const baseUrl = serviceIdentity(connection.baseUrl);
  const safe = (message: string) => cleanText(message.split(connection.apiKey).join('[redacted]'));
  const timings = batch.settings;
  const client = clientFor(connection, timings);
  const failed = (status: number | null, code: string | null, message: string): AccountCheck => ({
    baseUrl,
    ok: false,
    status,
    code,
    message: safe(message),
  });
  try {
    const checked = await checkAccount(client, connection, timings, warn);
    if (checked.kind === 'answered') return { baseUrl, ok: true, account: checked.account };
    if (checked.kind === 'refused')
      return failed(checked.error.status, checked.error.code, checked.error.message);
    return failed(
      null,
      NO_ANSWER_IN_TIME,
      'no answer in time; run would go on, resending what goes unanswered',
    );
  } catch (error) {
    if (error instanceof UserError && error.code === 'service_unreachable')
      return failed(null, null, error.message);
    throw error;
  }
}
