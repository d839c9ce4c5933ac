import { MediaGenClient } from '../service-client/client.js';
import { ExitCode, UserError } from '../errors.js';
import { systemClock } from '../runner/clock.js';
import { type Connection, connectionFromEnv, parsePositiveSeconds } from './placement.js';
import type { Host } from './host.js';
import { DEFAULT_PREFLIGHT_SECONDS, type PreflightResult, preflight } from './preflight.js';
import { ensureSameService, SANDBOX_IDENTITY, serviceIdentity } from './service-identity.js';

/**
 * The checks every command that talks to a service for a ledger makes before it sends anything,
 * in one place: which service (a flag, the environment, or the embedded sandbox), whether the
 * ledger belongs to it, and whether it answers GET /account (docs/services.md). `run`, `plan`,
 * `import` and `forget` all go through here, so they refuse the same things with the same codes.
 */

/** How long to keep trying to reach the service, and to wait for one answer, from the environment. */
export interface ServiceTimings {
  preflightWindowMs: number;
  httpTimeoutMs: number | null;
}

/** A positive number of seconds from a flag or variable, in milliseconds; null when not given. */
export const millis = (text: string | undefined, name: string): number | null => {
  const value = parsePositiveSeconds(text, name);
  return value === null ? null : value * 1000;
};

export function serviceTimings(io: Pick<Host, 'env'>): ServiceTimings {
  return {
    httpTimeoutMs: millis(io.env.MEDIABATCH_HTTP_TIMEOUT, 'MEDIABATCH_HTTP_TIMEOUT'),
    preflightWindowMs:
      millis(io.env.MEDIABATCH_PREFLIGHT_SECONDS, 'MEDIABATCH_PREFLIGHT_SECONDS') ??
      DEFAULT_PREFLIGHT_SECONDS * 1000,
  };
}

/** The service a command is pointed at: null connection for --sandbox, known once it listens. */
export function serviceTarget(
  sandbox: boolean,
  baseUrlFlag: string | undefined,
  io: Pick<Host, 'env'>,
  missing: { what: string; sandbox: string },
): { connection: Connection | null; identity: string } {
  if (sandbox) return { connection: null, identity: SANDBOX_IDENTITY };
  const connection = connectionFromEnv(baseUrlFlag, io);
  if (!connection)
    throw new UserError(
      `${missing.what}: pass --base-url URL (or set MEDIAGEN_BASE_URL), or ${missing.sandbox} with --sandbox`,
      ExitCode.Usage,
      'service_missing',
    );
  return { connection, identity: serviceIdentity(connection.baseUrl) };
}

/** The HTTP client for a connection, with MEDIABATCH_HTTP_TIMEOUT applied. */
export function clientFor(
  connection: Connection,
  timings: ServiceTimings,
  onAnswer?: () => void,
): MediaGenClient {
  return new MediaGenClient({
    ...connection,
    ...(timings.httpTimeoutMs === null ? {} : { timeoutMs: timings.httpTimeoutMs }),
    ...(onAnswer ? { onAnswer } : {}),
  });
}

/** run's pre-flight (GET /account until it decides): throws for a wrong address or no service. */
export function checkAccount(
  client: MediaGenClient,
  connection: Connection,
  timings: ServiceTimings,
  say: (line: string) => void,
  signal: AbortSignal = new AbortController().signal,
): Promise<PreflightResult> {
  const windowMs = timings.preflightWindowMs;
  return preflight({
    client,
    identity: serviceIdentity(connection.baseUrl),
    windowMs,
    timeoutMs: Math.min(timings.httpTimeoutMs ?? 60_000, Math.max(2000, windowMs / 2)),
    signal,
    sleep: (ms, abort) => systemClock.sleep(ms, abort),
    say,
  });
}

/**
 * For `import` and `forget`: the ledger must belong to this service, and the service must answer
 * and accept the account, or the command stops before it changes anything.
 */
export async function checkServiceForLedger(
  command: string,
  target: { connection: Connection; identity: string },
  ledger: { bound: string | null; path: string },
  timings: ServiceTimings,
  io: Host,
): Promise<MediaGenClient> {
  ensureSameService(ledger.bound, target.identity, ledger.path, io.cwd);
  const client = clientFor(target.connection, timings);
  const checked = await checkAccount(client, target.connection, timings, (line) =>
    io.stderr.write(`mediabatch ${command}: ${line}\n`),
  );
  if (checked.kind === 'refused')
    throw new UserError(
      `the service refused the account (${checked.error.code ?? checked.error.status}: ${checked.error.message}): ` +
        'fix MEDIAGEN_API_KEY or the wallet; the ledger was not changed',
      ExitCode.Refused,
      'account_refused',
    );
  return client;
}
