import { ExitCode, UserError } from '../errors.js';
import { stopOnJobsUnknownToLedger } from '../import/known-jobs-check.js';
import type { Manifest } from '../manifest/index.js';
import type { AccountCheck } from '../report/plan-report.js';
import { cleanText } from '../report/render-text.js';
import { type Connection, connectionFromEnv } from './placement.js';
import type { Host } from './host.js';
import { withLedger } from './ledger-read.js';
import { ensureSameService, SANDBOX_IDENTITY, serviceIdentity } from './service-identity.js';
import { checkAccount, clientFor, serviceTimings } from './service-check.js';

/** The code plan gives an account check that got no answer in time (not the service's). */
export const SLOW = 'no_answer_in_time';

/**
 * What `run`'s pre-flight would refuse, refused here with the same words and exit code, before
 * anything is priced: a ledger bound to another service, an address that is not the service
 * (missing /v1), and a new ledger while the service holds this manifest's jobs (a lost ledger).
 * Returns what GET /account said, or null when no service was given.
 */
export async function checkLikeRun(
  manifest: Manifest,
  asked: { sandbox: boolean; ledger: string | undefined; baseUrl: string | undefined; manifestArg: string },
  io: Host,
): Promise<AccountCheck | null> {
  const values = { sandbox: asked.sandbox, ledger: asked.ledger, 'base-url': asked.baseUrl };
  const connection = values.sandbox ? null : accountConnection(values['base-url'], io);
  if (!values.sandbox && connection === null) return null;
  const identity = connection ? serviceIdentity(connection.baseUrl) : SANDBOX_IDENTITY;
  const ledger = withLedger(manifest, values.ledger, io, { sandbox: values.sandbox }, (opened, note) => ({
    ...note,
    attempts: opened?.hasAttempts() ?? false,
  }));
  try {
    ensureSameService(ledger.service, identity, ledger.path, io.cwd);
    if (connection === null) return null;
    const account = await accountOf(connection, io);
    if (account.ok)
      await stopOnJobsUnknownToLedger(
        connection,
        { hasAttempts: () => ledger.attempts },
        {
          manifestName: manifest.name,
          manifestArg: asked.manifestArg,
          ledgerPath: ledger.path,
          ledgerFlag: values.ledger,
          baseUrlFlag: values['base-url'],
        },
      );
    return account;
  } catch (error) {
    if (error instanceof UserError && error.exitCode === ExitCode.Usage)
      throw new UserError(`run would stop here: ${error.message}`, error.exitCode);
    throw error;
  }
}

/**
 * A --base-url flag is an explicit request to check the account, so a missing key is an error
 * there; a base URL merely exported in the environment without a key just skips the check.
 */
function accountConnection(flag: string | undefined, io: Host): Connection | null {
  if (flag === undefined && io.env.MEDIAGEN_BASE_URL && !io.env.MEDIAGEN_API_KEY) {
    io.stderr.write(
      'mediabatch plan: MEDIAGEN_BASE_URL is set but MEDIAGEN_API_KEY is not; the account is not checked\n',
    );
    return null;
  }
  return connectionFromEnv(flag, io);
}

/**
 * run's own pre-flight, GET /account only: plan never sends a POST. A wrong address throws (exit
 * 2, with run's hint); a service that cannot be reached within the window is reported as run
 * would (exit 1), after the plan. Messages never carry the key or a URL's query.
 */
async function accountOf(connection: Connection, io: Host): Promise<AccountCheck> {
  const baseUrl = displayUrl(connection.baseUrl);
  const safe = (message: string) => cleanText(message.split(connection.apiKey).join('[redacted]'));
  const timings = serviceTimings(io);
  const client = clientFor(connection, timings);
  const failed = (status: number | null, code: string | null, message: string): AccountCheck => ({
    baseUrl,
    ok: false,
    status,
    code,
    message: safe(message),
  });
  try {
    const checked = await checkAccount(client, connection, timings, (line) =>
      io.stderr.write(`mediabatch plan: ${line}\n`),
    );
    if (checked.kind === 'answered') return { baseUrl, ok: true, account: checked.account };
    if (checked.kind === 'refused')
      return failed(checked.error.status, checked.error.code, checked.error.message);
    return failed(null, SLOW, 'no answer in time; run would go on, resending what goes unanswered');
  } catch (error) {
    if (error instanceof UserError && error.exitCode === ExitCode.ItemsNotDone)
      return failed(null, null, error.message);
    throw error;
  }
}

/** The base URL without credentials, query or fragment, fit to print. */
function displayUrl(text: string): string {
  const url = new URL(text);
  return `${url.protocol}//${url.host}${url.pathname}`;
}
