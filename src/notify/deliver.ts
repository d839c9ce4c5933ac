import { request } from 'undici';
import { backoffDelay, NOTIFY_BACKOFF } from '../runner/policy.js';
import { SIGNATURE_HEADER, signatureHeader } from './sign.js';

export interface Delivery {
  url: string;
  /** The JSON document, sent byte for byte as signed. */
  body: string;
  /** `run.finished` or `run.stopped`, also sent as a header so a receiver can route before parsing. */
  event: string;
  /** MEDIABATCH_NOTIFY_SECRET; null sends the notification unsigned. */
  secret: string | null;
  /** Tries stop once this much time has passed since the first. */
  windowMs: number;
  random?: () => number;
  now?: () => number;
}

export type DeliveryResult =
  | { delivered: true; tries: number }
  | { delivered: false; tries: number; reason: string };

/** Longest wait for one answer; a receiver slower than this is tried again. */
const TRY_TIMEOUT_MS = 10_000;

/**
 * Answers worth another try: the receiver failing as a whole, or asking to slow down. Any other
 * answer (a 400, a 401 for a wrong signature, a 404) will not change by sending the same request.
 */
const RETRYABLE = (status: number) => status >= 500 || status === 408 || status === 429;

/**
 * POSTs one notification, again with full-jitter backoff while the receiver fails or does not
 * answer, until `windowMs` has passed. Each try is signed afresh, so its timestamp is the time it
 * was sent. Never throws: the caller logs an undelivered notification and the run goes on as it was.
 */
export async function deliver(delivery: Delivery): Promise<DeliveryResult> {
  const now = delivery.now ?? Date.now;
  const random = delivery.random ?? Math.random;
  const deadline = now() + delivery.windowMs;
  let reason = 'no try fitted in the time allowed';
  for (let tries = 1; ; tries += 1) {
    const left = deadline - now();
    if (left <= 0) return { delivered: false, tries: tries - 1, reason };
    const answer = await post(delivery, Math.min(TRY_TIMEOUT_MS, left), now());
    if (answer.ok) return { delivered: true, tries };
    reason = answer.reason;
    if (!answer.retry) return { delivered: false, tries, reason };
    const wait = backoffDelay(tries - 1, random, NOTIFY_BACKOFF);
    if (now() + wait >= deadline) return { delivered: false, tries, reason };
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

async function post(
  delivery: Delivery,
  timeoutMs: number,
  nowMs: number,
): Promise<{ ok: true } | { ok: false; retry: boolean; reason: string }> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'mediabatch',
    'x-mediabatch-event': delivery.event,
  };
  if (delivery.secret !== null)
    headers[SIGNATURE_HEADER] = signatureHeader(delivery.secret, delivery.body, nowMs / 1000);
  try {
    const response = await request(delivery.url, {
      method: 'POST',
      headers,
      body: delivery.body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    await response.body.dump().catch(() => undefined);
    if (response.statusCode >= 200 && response.statusCode < 300) return { ok: true };
    return { ok: false, retry: RETRYABLE(response.statusCode), reason: `HTTP ${response.statusCode}` };
  } catch (error) {
    // The message of a failed connection names no secret; the URL is left out by the caller's log.
    const code = (error as { code?: unknown }).code;
    const text = typeof code === 'string' ? code : error instanceof Error ? error.name : 'error';
    return { ok: false, retry: true, reason: text };
  }
}
