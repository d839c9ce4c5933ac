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
    this.name = new.target.name;
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
      return new (errorClassFor(status))({
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
    return new (errorClassFor(status))({
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

type ApiErrorFields = ConstructorParameters<typeof ApiError>[0];

/** 400: the request itself is wrong (invalid or missing field, max_cost_exceeded); nothing is created. */
export class BadRequestError extends ApiError {}
/** 401: the key is missing, malformed, unknown or revoked. */
export class AuthenticationError extends ApiError {}
/** 402: the wallet is not enabled or its balance is too low. */
export class BillingError extends ApiError {}
/** 404: no such job (or route) in this workspace. */
export class NotFoundError extends ApiError {}
/** 409: the idempotency key was used for a different request. */
export class ConflictError extends ApiError {}
/** 429: the workspace is at its concurrency limit; Retry-After says when to try again. */
export class RateLimitError extends ApiError {}
/** 5xx: a server fault; a POST is resent with the same key and body. */
export class InternalServerError extends ApiError {}

/** The class for an HTTP status; any other status stays a plain ApiError. */
const CLASS_BY_STATUS: Readonly<Record<number, new (fields: ApiErrorFields) => ApiError>> = {
  400: BadRequestError,
  401: AuthenticationError,
  402: BillingError,
  404: NotFoundError,
  409: ConflictError,
  429: RateLimitError,
};

function errorClassFor(status: number): new (fields: ApiErrorFields) => ApiError {
  if (status >= 500) return InternalServerError;
  return CLASS_BY_STATUS[status] ?? ApiError;
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
