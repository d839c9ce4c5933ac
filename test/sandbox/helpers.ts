import { request } from 'undici';
import { afterEach, expect } from 'vitest';
import { ApiError } from '../../src/errors.js';
import { type SandboxConfigInput, type SandboxHandle, startSandbox } from '../../src/sandbox/index.js';
import { errorEnvelopeSchema, MediaGenClient } from '../../src/service-client/index.js';

export const T0 = Date.parse('2030-01-01T00:00:00.000Z');

/** A clock the test moves by hand, so lifecycle rules never depend on wall-clock luck. */
export class FakeClock {
  time = T0;
  readonly now = (): number => this.time;
  advance(seconds: number): void {
    this.time += Math.round(seconds * 1000);
  }
}

const open: SandboxHandle[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((sandbox) => sandbox.close()));
});

/** Fast, fault-free defaults for tests: 1 s queued, 2 s running, fixed durations. */
export const BASE: SandboxConfigInput = {
  seed: 7,
  queued_seconds: 1,
  running_seconds: { min: 2, max: 2 },
};

/** A workspace that never runs into its balance or concurrency limit. */
export const ROOMY: SandboxConfigInput = {
  workspaces: [{ id: 'ws_demo', balance_usd: '1000', wallet_enabled: true, concurrency_limit: 1000 }],
};

export async function setup(config: SandboxConfigInput = {}, clock = new FakeClock()) {
  const sandbox = await startSandbox({ ...BASE, ...config }, { port: 0, now: clock.now });
  open.push(sandbox);
  const client = new MediaGenClient({ baseUrl: sandbox.baseUrl, apiKey: sandbox.apiKey });
  return { sandbox, clock, client };
}

export function clientFor(sandbox: SandboxHandle, apiKey: string): MediaGenClient {
  return new MediaGenClient({ baseUrl: sandbox.baseUrl, apiKey });
}

let keys = 0;
/** A fresh Idempotency-Key. */
export const newKey = (): string => `key-${process.pid}-${++keys}`;

export function body(
  prompt: string,
  extra: Record<string, unknown> = {},
  input: Record<string, unknown> = {},
): string {
  return JSON.stringify({ input: { prompt, ...input }, ...extra });
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: unknown;
}

/** Raw HTTP for cases the typed client cannot express (missing headers, bad JSON). */
export async function raw(
  sandbox: SandboxHandle,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  options: { headers?: Record<string, string>; body?: string; auth?: boolean } = {},
): Promise<RawResponse> {
  const url = path.startsWith('http') ? path : `${sandbox.baseUrl}${path}`;
  const headers: Record<string, string> = {
    ...(options.auth === false ? {} : { authorization: `Bearer ${sandbox.apiKey}` }),
    ...options.headers,
  };
  const response = await request(url, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: options.body }),
  });
  const text = await response.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.statusCode, headers: response.headers, text, json };
}

/** POST /videos/generation with the usual headers, each of which a test may drop or override. */
export function rawPost(
  sandbox: SandboxHandle,
  bodyText: string,
  headers: Record<string, string | undefined> = {},
): Promise<RawResponse> {
  const all: Record<string, string | undefined> = {
    'content-type': 'application/json',
    'idempotency-key': newKey(),
    ...headers,
  };
  const defined = Object.fromEntries(
    Object.entries(all).filter(([, value]) => value !== undefined),
  ) as Record<string, string>;
  return raw(sandbox, 'POST', '/videos/generation', { headers: defined, body: bodyText });
}

/** Checks the error envelope strictly, the status/type/code row, and X-Request-Id = request_id. */
export function expectEnvelope(
  response: RawResponse,
  status: number,
  type: string,
  code: string,
  param?: string,
): void {
  expect(response.status).toBe(status);
  expect(response.headers['content-type']).toBe('application/json');
  const envelope = errorEnvelopeSchema.parse(response.json);
  expect(envelope.error).toMatchObject({ type, code });
  expect(envelope.error.param).toBe(param);
  expect(envelope.error.message.length).toBeGreaterThan(0);
  expect(response.headers['x-request-id']).toMatch(/^req_/);
  expect(envelope.error.request_id).toBe(response.headers['x-request-id']);
}

/** Awaits a client call that must fail with an ApiError of that status and code. */
export async function expectApiError(
  promise: Promise<unknown>,
  status: number,
  code: string,
): Promise<ApiError> {
  const error = await promise.then(
    () => null,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ApiError);
  const apiError = error as ApiError;
  expect({ status: apiError.status, code: apiError.code }).toEqual({ status, code });
  expect(apiError.requestId).toMatch(/^req_/);
  return apiError;
}
