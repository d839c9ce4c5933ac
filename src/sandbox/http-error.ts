/** An HTTP error answer in the service's error envelope; thrown by handlers, sent by the server. */
export class HttpError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly param: string | undefined;
  readonly headers: Record<string, string>;

  constructor(
    status: number,
    type: string,
    code: string,
    message: string,
    options: { param?: string; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.type = type;
    this.code = code;
    this.param = options.param;
    this.headers = options.headers ?? {};
  }

  envelope(requestId: string): { error: Record<string, string> } {
    return {
      error: {
        type: this.type,
        code: this.code,
        message: this.message,
        request_id: requestId,
        ...(this.param === undefined ? {} : { param: this.param }),
      },
    };
  }
}

/** Every error answer the service documents, plus the few it leaves open (unknown routes, downloads). */
export const fail = {
  invalidJson: (message = 'The request body is not valid JSON.') =>
    new HttpError(400, 'invalid_request', 'invalid_request', message),
  invalidParameter: (param: string, message: string) =>
    new HttpError(400, 'invalid_request', 'invalid_parameter', message, { param }),
  missingParameter: (param: string, message = `${param} is required.`) =>
    new HttpError(400, 'invalid_request', 'missing_parameter', message, { param }),
  maxCostExceeded: (message: string) =>
    new HttpError(400, 'invalid_request', 'max_cost_exceeded', message, { param: 'max_cost_usd' }),
  invalidApiKey: () =>
    new HttpError(
      401,
      'authentication_error',
      'invalid_api_key',
      'The API key is missing, malformed, unknown or revoked.',
    ),
  walletNotEnabled: () =>
    new HttpError(
      402,
      'billing_error',
      'wallet_not_enabled',
      'The API wallet of this workspace is not enabled.',
    ),
  insufficientBalance: (message: string) =>
    new HttpError(402, 'billing_error', 'insufficient_balance', message),
  jobNotFound: () => new HttpError(404, 'not_found', 'job_not_found', 'No such job in this workspace.'),
  idempotencyKeyReused: () =>
    new HttpError(
      409,
      'conflict',
      'idempotency_key_reused',
      'This Idempotency-Key was already used with a different request.',
      { param: 'Idempotency-Key' },
    ),
  concurrencyLimited: (retryAfter: string, limit: number) =>
    new HttpError(
      429,
      'rate_limit_error',
      'concurrency_limited',
      `The workspace already has ${limit} unfinished jobs, its concurrency limit.`,
      { headers: { 'retry-after': retryAfter } },
    ),
  internal: () =>
    new HttpError(500, 'api_error', 'internal_error', 'Internal server error. Retry with the same key.'),
  routeNotFound: (method: string, path: string) =>
    new HttpError(404, 'not_found', 'route_not_found', `No route for ${method} ${path}.`),
  methodNotAllowed: (allow: string) =>
    new HttpError(405, 'invalid_request', 'method_not_allowed', `Use ${allow} on this path.`, {
      headers: { allow },
    }),
  urlExpired: () =>
    new HttpError(
      403,
      'permission_error',
      'url_expired',
      'This signed URL has expired; fetch the job again.',
    ),
  badSignature: () =>
    new HttpError(403, 'permission_error', 'invalid_signature', 'The URL signature is not valid.'),
  fileNotFound: () => new HttpError(404, 'not_found', 'file_not_found', 'No such file.'),
  outputExpired: () =>
    new HttpError(410, 'not_found', 'output_expired', 'The output of this job is past its retention period.'),
};
