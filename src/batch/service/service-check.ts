import { type NothingWas, UserError } from '../../errors.js';
import { SANDBOX_IDENTITY } from '../../ledger/index.js';
import { systemClock } from '../../runner/clock.js';
import { MediaGenClient } from '../../service-client/client.js';
import type { Batch } from '../resolve/resolve-batch.js';
import type { BatchSettings } from '../resolve/settings.js';
import type { Warn } from '../resolve/warnings.js';
import { type PreflightResult, preflight } from './preflight.js';
import { ensureSameService, serviceIdentity } from './service-identity.js';

/**
 * The checks every command that talks to a service for a ledger makes before it sends anything,
 * in one place: which service (the batch's base URL, or the embedded sandbox), whether the ledger
 * belongs to it, and whether it answers GET /account (docs/services.md). `run`, `plan`, `import`
 * and `forget` all go through here, so they refuse the same things with the same codes.
 */

/** The address and key of a service; the key is never written anywhere. */
export interface Connection {
  baseUrl: string;
  apiKey: string;
}

/** How long to keep trying to reach the service, and to wait for one answer. */
export type ServiceTimings = Pick<BatchSettings, 'preflightWindowMs' | 'httpTimeoutMs'>;

/** The service a batch is pointed at: a null connection for the sandbox, known once it listens. */
export function serviceTarget(
  batch: Batch,
  missing: { what: string; sandbox: string },
): { connection: Connection | null; identity: string } {
  if (batch.sandbox) return { connection: null, identity: SANDBOX_IDENTITY };
  const connection = connectionOf(batch);
  if (!connection)
    throw new UserError(
      `${missing.what}: pass \`baseUrl\` URL (or set MEDIAGEN_BASE_URL), or ${missing.sandbox} with \`sandbox\``,
      'service_missing',
      { options: ['baseUrl', 'sandbox'], variable: 'MEDIAGEN_BASE_URL' },
    );
  return { connection, identity: serviceIdentity(connection.baseUrl) };
}

/** The batch's base URL and key; null without a base URL. */
export function connectionOf(batch: Pick<Batch, 'baseUrl' | 'apiKey'>): Connection | null {
  const { baseUrl, apiKey } = batch;
  if (!baseUrl) return null;
  if (!(/^https?:\/\//i.test(baseUrl) && URL.canParse(baseUrl)))
    throw new UserError(
      `\`baseUrl\` / MEDIAGEN_BASE_URL is not an http(s) URL: ${baseUrl}`,
      'setting_invalid',
      { option: 'baseUrl', variable: 'MEDIAGEN_BASE_URL', value: baseUrl },
    );
  if (!apiKey)
    throw new UserError(
      'MEDIAGEN_API_KEY is not set: export the API key from the service console',
      'api_key_missing',
    );
  return { baseUrl, apiKey };
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
  warn: Warn,
  signal: AbortSignal = new AbortController().signal,
  nothingDone?: string,
): Promise<PreflightResult> {
  const windowMs = timings.preflightWindowMs;
  return preflight({
    client,
    identity: serviceIdentity(connection.baseUrl),
    windowMs,
    timeoutMs: Math.min(timings.httpTimeoutMs ?? 60_000, Math.max(2000, windowMs / 2)),
    signal,
    sleep: (ms, abort) => systemClock.sleep(ms, abort),
    warn,
    ...(nothingDone === undefined ? {} : { nothingDone }),
  });
}

/**
 * For `import` and `forget`: the ledger must belong to this service, and the service must answer
 * and accept the account, or the command stops before it changes anything.
 */
export async function checkServiceForLedger(
  target: { connection: Connection; identity: string },
  ledger: { bound: string | null; path: string },
  batch: Batch,
  warn: Warn,
  nothingWas: NothingWas,
): Promise<MediaGenClient> {
  ensureSameService(ledger.bound, target.identity, ledger.path, batch.cwd);
  const client = clientFor(target.connection, batch.settings);
  const signal = new AbortController().signal;
  const nothing = `nothing was ${nothingWas}`;
  const checked = await checkAccount(client, target.connection, batch.settings, warn, signal, nothing);
  if (checked.kind === 'refused')
    throw new UserError(
      `the service refused the account (${checked.error.code ?? checked.error.status}: ${checked.error.message}): ` +
        'fix MEDIAGEN_API_KEY or the wallet; the ledger was not changed',
      'account_refused',
    );
  return client;
}
