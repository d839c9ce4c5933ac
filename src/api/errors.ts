import { errorEnvelopeSchema } from './schemas.js';

/**
 * The service answered with an HTTP error. Fields mirror the error envelope so that callers branch
 * on `code`, never on `message`, which is written for people and may change. A body that is not
 * the envelope (a proxy page, say) still yields an ApiError, with `code` null.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly type: string | null;
  readonly code: string | null;
  readonly param: string | null;
  readonly requestId: string | null;
  /** Seconds from the Retry-After header, when present. */
  readonly retryAfter: number | null;

  constructor(fields: {
    status: number;
    type: string | null;
    code: string | null;
    param: string | null;
    requestId: string | null;
    retryAfter: number | null;
    message: string;
  }) {
    super(fields.message);
    this.name = 'ApiError';
    this.status = fields.status;
    this.type = fields.type;
    this.code = fields.code;
    this.param = fields.param;
    this.requestId = fields.requestId;
    this.retryAfter = fields.retryAfter;
  }

  static generate(
    status: number,
    body: unknown,
    requestId: string | null,
    retryAfter: number | null,
  ): ApiError {
    const parsed = errorEnvelopeSchema.safeParse(body);
    if (!parsed.success) {
      return new ApiError({
        status,
        type: null,
        code: null,
        param: null,
        requestId,
        retryAfter,
        message: `HTTP ${status} without an error envelope`,
      });
    }
    const { error } = parsed.data;
    return new ApiError({
      status,
      type: error.type,
      code: error.code,
      param: error.param ?? null,
      requestId: error.request_id || requestId,
      retryAfter,
      message: `${status} ${error.code}${error.param ? ` (${error.param})` : ''}: ${error.message}`,
    });
  }
}

/**
 * No usable answer: the connection failed, dropped, timed out, or the body was not what the service
 * promises. For a POST the job may or may not exist, so the caller must retry with the same key.
 */
export class ApiConnectionError extends Error {
  readonly requestId: string | null;
  /**
   * `network`: no answer came back (refused, DNS, TLS, reset, timeout). `protocol`: something
   * answered, but not as the service does (not JSON, or not the promised shape).
   */
  readonly kind: 'network' | 'protocol';
  constructor(
    message: string,
    options: { cause?: unknown; requestId?: string | null; kind?: 'network' | 'protocol' } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'ApiConnectionError';
    this.requestId = options.requestId ?? null;
    this.kind = options.kind ?? 'network';
  }
}

/** Parses Retry-After: delay-seconds (fractions tolerated) or an HTTP-date. */
export function parseRetryAfter(
  value: string | string[] | undefined,
  now: number = Date.now(),
): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return null;
  const seconds = Number(text);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds;
  const date = Date.parse(text);
  if (Number.isNaN(date)) return null;
  return Math.max(0, (date - now) / 1000);
}
