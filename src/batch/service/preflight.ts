import { cleanText } from '../../documents/clean-text.js';
import { ApiConnectionError, ApiError, UserError } from '../../errors.js';
import type { MediaGenClient } from '../../service-client/client.js';
import type { Account } from '../../service-client/schemas.js';
import type { Warn } from '../resolve/warnings.js';

/**
 * `run` asks the service for the account before anything is prepared or sent (docs/services.md),
 * so a mistake that would be the same for every item (a base URL without /v1, a wrong host, a
 * service that is not there) stops the run instead of failing items.
 */

/** What one failed GET /account says about the address. */
export type PreflightVerdict =
  /** 404: no such route here, so the base URL is wrong (missing /v1, wrong host). */
  | 'wrong_route'
  /** Something answered, but not as the service does (another 4xx, not JSON, wrong shape). */
  | 'not_the_service'
  /** 401 or 402: it is the service, refusing the account; the runner reports it as ever (exit 3). */
  | 'refused'
  /** No answer at all: connection refused, a DNS server that failed, TLS, reset, timeout. Retried within the window. */
  | 'unreachable'
  /**
   * The host's name does not exist (ENOTFOUND: the DNS answered, and there is no such name): a
   * mistake in the address, not an outage, so it is not retried.
   */
  | 'no_such_host'
  /** 5xx, 408 or 429: the service is there but cannot answer now. Retried within the window. */
  | 'unavailable'
  /** Connected, but no answer in time: a slow service; the run goes on and resends what goes unanswered. */
  | 'slow';

const SLOW_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

export function classifyPreflightError(error: unknown): PreflightVerdict {
  if (error instanceof ApiError) {
    if (error.status === 404) return 'wrong_route';
    if (error.status === 401 || error.status === 402) return 'refused';
    if (error.status >= 500 || error.status === 408 || error.status === 429) return 'unavailable';
    return 'not_the_service';
  }
  if (error instanceof ApiConnectionError) {
    if (error.kind === 'protocol') return 'not_the_service';
    const code = (error.cause as { code?: unknown } | undefined)?.code;
    if (code === 'ENOTFOUND') return 'no_such_host';
    return typeof code === 'string' && SLOW_CODES.has(code) ? 'slow' : 'unreachable';
  }
  throw error;
}

/**
 * Waits between tries: doubling, and adding up to the whole window (30 s: 2, 4, 8 and 16 s), so a
 * service that is merely restarting is found and a wrong address is reported within the window.
 */
export function preflightDelays(windowMs: number): number[] {
  const unit = windowMs / 15;
  return [1, 2, 4, 8].map((factor) => Math.round(unit * factor));
}

/** With /v1 missing from the path, the address the user most likely meant. */
export function suggestBaseUrl(identity: string): string | null {
  const url = new URL(identity);
  if (/\/v1$/.test(url.pathname)) return null;
  return `${identity.replace(/\/+$/, '')}/v1`;
}

export interface PreflightDeps {
  client: MediaGenClient;
  /** The normalised base URL, for messages (never carries a key or a query). */
  identity: string;
  windowMs: number;
  /** Longest wait for one answer. */
  timeoutMs: number;
  /** Aborted by Ctrl-C: the pre-flight gives up at once. */
  signal: AbortSignal;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  /** One visible line per retry. */
  warn: Warn;
  /**
   * What a refusal left undone, in the command's words: a run's "nothing was submitted and no
   * item changed" (the default), an import's "nothing was imported".
   */
  nothingDone?: string;
}

export type PreflightResult =
  | { kind: 'answered'; account: Account }
  | { kind: 'refused'; error: ApiError }
  | { kind: 'slow' }
  | { kind: 'interrupted' };

/**
 * A refused account (401, 402) on a batch that has recorded nothing: no job can be sent or looked
 * at, so the run ends here (exit 3) before it binds a ledger, claims a folder or writes a gallery,
 * and its new ledger goes again (leave-no-trace.ts). The service's words, never the key.
 */
export function refusedBeforeAnything(error: ApiError): UserError {
  const code = error.code;
  return new UserError(
    `the service refused the account: ${cleanText(error.message).replace(/[.\s]*$/, '')}; ` +
      'nothing was sent and nothing was recorded: fix the key or the wallet, then run again',
    'account_refused',
    { status: error.status, code },
  );
}

/** GET /account until it decides; throws a UserError for the outcomes that end the run. */
export async function preflight(deps: PreflightDeps): Promise<PreflightResult> {
  const delays = preflightDelays(deps.windowMs);
  for (let tries = 1; ; tries += 1) {
    let error: unknown;
    try {
      const answer = await deps.client.getAccount({ signal: deps.signal, timeoutMs: deps.timeoutMs });
      return { kind: 'answered', account: answer.data };
    } catch (caught) {
      if (deps.signal.aborted) return { kind: 'interrupted' };
      error = caught;
    }
    const verdict = classifyPreflightError(error);
    if (verdict === 'refused') return { kind: 'refused', error: error as ApiError };
    const detail = describeFailure(error);
    if (verdict === 'slow') {
      deps.warn({
        code: 'service_slow',
        message: `${deps.identity} is slow to answer (${detail}); going on: an unanswered request is resent with the same key`,
      });
      return { kind: 'slow' };
    }
    const nothing = deps.nothingDone ?? NOTHING_SENT;
    if (verdict === 'wrong_route') throw wrongRoute(deps.identity, detail, nothing);
    if (verdict === 'not_the_service') throw notTheService(deps.identity, detail, nothing);
    if (verdict === 'no_such_host') throw noSuchHost(deps.identity, nothing);
    const delay = delays[tries - 1];
    if (delay === undefined)
      throw gaveUp(deps.identity, verdict, detail, { tries, windowMs: deps.windowMs, nothing });
    deps.warn({
      code: 'service_retry',
      message:
        `${verdict === 'unreachable' ? 'cannot reach' : 'no answer from'} ${deps.identity} (${detail}); ` +
        `trying again in ${formatSeconds(delay)} (try ${tries + 1} of ${delays.length + 1})`,
    });
    await deps.sleep(delay, deps.signal);
    if (deps.signal.aborted) return { kind: 'interrupted' };
  }
}

/** Network failures in words, by the cause's code; anything else keeps its own message. */
const NETWORK_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused: nothing listens there',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'DNS lookup failed',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no answer in time',
};

export function describeFailure(error: unknown): string {
  const code = (error as { cause?: { code?: unknown } }).cause?.code;
  if (typeof code === 'string') {
    if (NETWORK_WORDS[code]) return NETWORK_WORDS[code];
    if (/CERT|TLS|SSL/.test(code)) return `TLS failure, ${code}`;
  }
  return (error as Error).message;
}

const NOTHING_SENT = 'nothing was submitted and no item changed';

function wrongRoute(identity: string, detail: string, nothing: string): UserError {
  const suggestion = suggestBaseUrl(identity);
  const hint = suggestion
    ? `the base URL must include the version segment: did you mean \`baseUrl\` ${suggestion} ?`
    : "is this the service's address? Check the host and port of `baseUrl` / MEDIAGEN_BASE_URL";
  return new UserError(
    `${identity} has no GET /account (${detail}); ${hint}\n  ${nothing}`,
    'service_wrong_route',
    { option: 'baseUrl', baseUrl: identity, suggestion: suggestion ?? null },
  );
}

function notTheService(identity: string, detail: string, nothing: string): UserError {
  return new UserError(
    `${identity} answered GET /account, but not as the video service does (${detail}); ` +
      `check \`baseUrl\` / MEDIAGEN_BASE_URL: it is the service's address, including /v1\n  ${nothing}`,
    'not_the_service',
    { option: 'baseUrl', baseUrl: identity },
  );
}

/**
 * A name the DNS says does not exist will not exist in 30 seconds either: a typo in the address
 * (or a host only another network knows), said at once with the host. A DNS server that fails
 * (EAI_AGAIN) is an outage and keeps the retries.
 */
function noSuchHost(identity: string, nothing: string): UserError {
  const host = new URL(identity).hostname;
  return new UserError(
    `no such host: ${host} (from ${identity}) is not a name the DNS knows; ` +
      `check the host in \`baseUrl\` / MEDIAGEN_BASE_URL for a typo\n  ${nothing}`,
    'service_host_unknown',
    { option: 'baseUrl', baseUrl: identity, host },
  );
}

function gaveUp(
  identity: string,
  verdict: PreflightVerdict,
  detail: string,
  { tries, windowMs, nothing }: { tries: number; windowMs: number; nothing: string },
): UserError {
  const what = verdict === 'unreachable' ? 'cannot reach' : 'no usable answer from';
  return new UserError(
    `${what} the service at ${identity} (${detail}) after ${tries} tries over ${formatSeconds(windowMs)}; ` +
      `${nothing}. Check \`baseUrl\` / MEDIAGEN_BASE_URL and the network, then re-run ` +
      '(MEDIABATCH_PREFLIGHT_SECONDS sets how long to keep trying)',
    'service_unreachable',
    { option: 'baseUrl', baseUrl: identity, tries, windowMs },
  );
}

export function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${seconds >= 10 ? Math.round(seconds) : Number(seconds.toFixed(1))}s`;
}
