import { type Dispatcher, request } from 'undici';
import type { z } from 'zod';
import { ApiConnectionError } from '../errors.js';
import { apiErrorFrom, parseRetryAfter } from './http-errors.js';
import {
  type Account,
  accountSchema,
  type Job,
  type JobList,
  jobListSchema,
  jobSchema,
  type ListJobsQuery,
} from './schemas.js';

export interface ClientOptions {
  /** Base address including the version segment, e.g. http://127.0.0.1:4010/v1 */
  baseUrl: string;
  apiKey: string;
  dispatcher?: Dispatcher;
  /** Milliseconds to wait for response headers and between body chunks. */
  timeoutMs?: number;
  /** Called once per HTTP request, for counting and tracing (never sees the key). */
  onRequest?: (method: string, path: string) => void;
  /** Called after each successful answer of the promised shape: proof that this is the service. */
  onAnswer?: () => void;
}

/** Per-call settings: a signal that abandons the request (Ctrl-C), a shorter wait than the client's. */
export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** A successful answer, with the headers callers need. */
export interface ApiResult<T> {
  data: T;
  status: number;
  requestId: string | null;
  /** Seconds from Retry-After, present while a job is unfinished. */
  retryAfter: number | null;
}

/**
 * Typed client for the four operations of the service's v1 API. It never retries: the retry rules
 * belong to the runner, which alone knows whether a repeat is safe.
 */
export class MediaGenClient {
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #dispatcher: Dispatcher | undefined;
  readonly #timeoutMs: number;
  readonly #onRequest: ClientOptions['onRequest'];
  readonly #onAnswer: ClientOptions['onAnswer'];

  constructor(options: ClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#dispatcher = options.dispatcher;
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#onRequest = options.onRequest;
    this.#onAnswer = options.onAnswer;
  }

  /** POST /videos/generation with the exact body text the ledger committed, so a retry is byte-identical. */
  createVideoJob(bodyJson: string, idempotencyKey: string): Promise<ApiResult<Job>> {
    return this.#send('POST', '/videos/generation', jobSchema, {
      body: bodyJson,
      headers: { 'content-type': 'application/json', 'idempotency-key': idempotencyKey },
    });
  }

  getJob(jobId: string): Promise<ApiResult<Job>> {
    return this.#send('GET', `/jobs/${encodeURIComponent(jobId)}`, jobSchema);
  }

  listJobs(query: ListJobsQuery = {}): Promise<ApiResult<JobList>> {
    return this.#send('GET', `/jobs${toQueryString(query)}`, jobListSchema);
  }

  /** Every page of GET /jobs, following next_cursor while has_more (pages may be shorter than limit). */
  async *listJobPages(query: ListJobsQuery = {}): AsyncGenerator<ApiResult<JobList>> {
    let cursor = query.cursor;
    const seen = new Set<string>();
    for (;;) {
      const page = await this.listJobs({ ...query, ...(cursor === undefined ? {} : { cursor }) });
      yield page;
      const next = page.data.next_cursor;
      if (!page.data.has_more || next === null || seen.has(next)) return;
      seen.add(next);
      cursor = next;
    }
  }

  getAccount(options: CallOptions = {}): Promise<ApiResult<Account>> {
    return this.#send('GET', '/account', accountSchema, {}, options);
  }

  async #send<T>(
    method: 'GET' | 'POST',
    path: string,
    schema: z.ZodType<T>,
    extra: { body?: string; headers?: Record<string, string> } = {},
    call: CallOptions = {},
  ): Promise<ApiResult<T>> {
    this.#onRequest?.(method, path);
    const timeoutMs = call.timeoutMs ?? this.#timeoutMs;
    let response: Dispatcher.ResponseData;
    try {
      response = await request(`${this.#baseUrl}${path}`, {
        method,
        headers: { accept: 'application/json', authorization: `Bearer ${this.#apiKey}`, ...extra.headers },
        ...(extra.body === undefined ? {} : { body: extra.body }),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        ...(this.#dispatcher ? { dispatcher: this.#dispatcher } : {}),
        ...(call.signal ? { signal: call.signal } : {}),
      });
    } catch (cause) {
      throw new ApiConnectionError(`${method} ${path}: ${describeNetworkError(cause)}`, { cause });
    }
    const requestId = headerValue(response.headers['x-request-id']);
    const retryAfter = parseRetryAfter(response.headers['retry-after']);
    let body: unknown;
    try {
      const text = await response.body.text();
      body = text === '' ? undefined : JSON.parse(text);
    } catch (cause) {
      if (response.statusCode >= 400)
        throw apiErrorFrom(response.statusCode, undefined, requestId, retryAfter);
      throw new ApiConnectionError(`${method} ${path}: unreadable response body`, {
        cause,
        requestId,
        kind: cause instanceof SyntaxError ? 'protocol' : 'network',
      });
    }
    if (response.statusCode >= 400) throw apiErrorFrom(response.statusCode, body, requestId, retryAfter);
    const parsed = schema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue ? `${issue.path.join('.') || '(body)'}: ${issue.message}` : 'unexpected body';
      throw new ApiConnectionError(`${method} ${path}: response does not match the interface (${where})`, {
        requestId,
        kind: 'protocol',
      });
    }
    this.#onAnswer?.();
    return { data: parsed.data, status: response.statusCode, requestId, retryAfter };
  }
}

function headerValue(value: string | string[] | undefined): string | null {
  if (Array.isArray(value)) return value[0] ?? null;
  return value ?? null;
}

function describeNetworkError(cause: unknown): string {
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code;
    return typeof code === 'string' ? `${code} ${cause.message}` : cause.message;
  }
  return String(cause);
}

function toQueryString(query: ListJobsQuery): string {
  const params = new URLSearchParams();
  if (query.status?.length) params.set('status', query.status.join(','));
  if (query.api_key_id !== undefined) params.set('api_key_id', String(query.api_key_id));
  if (query.created_after !== undefined) params.set('created_after', query.created_after);
  if (query.created_before !== undefined) params.set('created_before', query.created_before);
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (query.cursor !== undefined) params.set('cursor', query.cursor);
  const text = params.toString();
  return text ? `?${text}` : '';
}
