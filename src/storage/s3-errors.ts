/**
 * What an S3 failure means for a run, from the SDK's error: the bucket's own code (NoSuchBucket,
 * AccessDenied, ...), an endpoint that does not answer, or something about one object. Pure.
 */

export interface S3Failure {
  /** The S3 error code, or the network error's code (ECONNREFUSED, ...); null when neither. */
  code: string | null;
  /** No answer, or the server failing as a whole (5xx after the SDK's own retries). */
  unreachable: boolean;
  /** HTTP 404 of an object or a key that is not there (HeadObject answers with no code). */
  notFound: boolean;
  message: string;
}

const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
  'TimeoutError',
  'RequestTimeout',
  'SlowDown',
  'ServiceUnavailable',
  'InternalError',
]);

export function s3Failure(error: unknown): S3Failure {
  const fields = (error ?? {}) as {
    name?: unknown;
    code?: unknown;
    Code?: unknown;
    message?: unknown;
    $metadata?: { httpStatusCode?: number };
    cause?: { code?: unknown };
  };
  const status = fields.$metadata?.httpStatusCode ?? null;
  const networkCode = stringOr(fields.code) ?? stringOr(fields.cause?.code);
  const named = stringOr(fields.Code) ?? stringOr(fields.name);
  // A bare HTTP status is all a HEAD gets: the SDK then names the error after the status.
  const code = networkCode ?? (named && !/^(Error|Unknown|\d+)$/.test(named) ? named : null);
  const unreachable = UNREACHABLE_CODES.has(code ?? '') || (status ?? 0) >= 500 || status === 0;
  // A HEAD's error has no body to explain it: its status and code say what there is to say.
  const text = stringOr(fields.message);
  const message =
    text !== null && text !== 'UnknownError' ? text : `HTTP ${status ?? '?'}${code ? ` ${code}` : ''}`;
  return { code, unreachable, notFound: status === 404 && code !== 'NoSuchBucket', message };
}

function stringOr(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * An Error carrying the S3 failure's code, for the store's callers (refusals, retries). Any
 * credential a server might echo (some quote the access key in a signature error) is blanked.
 */
export function s3Error(
  what: string,
  failure: S3Failure,
  credentials: readonly string[],
): Error & { code?: string; unreachable?: boolean } {
  const text = `${what}: ${failure.message}${failure.code ? ` (${failure.code})` : ''}`;
  return Object.assign(new Error(blankCredentials(text, credentials)), {
    ...(failure.code ? { code: failure.code } : {}),
    unreachable: failure.unreachable,
  });
}

/** `text` with every credential value in it replaced by `[credential]`. */
export function blankCredentials(text: string, credentials: readonly string[]): string {
  return credentials.reduce((blanked, secret) => blanked.split(secret).join('[credential]'), text);
}
