import {
  ApiError,
  type ApiErrorFields,
  AuthenticationError,
  BadRequestError,
  BillingError,
  ConflictError,
  InternalServerError,
  NotFoundError,
  RateLimitError,
} from '../errors.js';
import { errorEnvelopeSchema } from './schemas.js';

/**
 * An HTTP error answer as the error tree's ApiError (errors.ts), of the class its status names.
 * A body that is not the error envelope (a proxy page, say) still yields one, without a service code.
 */
export function apiErrorFrom(
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
      serviceCode: null,
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
    serviceCode: error.code,
    param: error.param ?? null,
    requestId: error.request_id || requestId,
    retryAfter,
    message: `${status} ${error.code}${error.param ? ` (${error.param})` : ''}: ${error.message}`,
  });
}

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
