import type { IncomingMessage } from 'node:http';
import type { SandboxConfig } from './config.js';
import { fail } from './http-error.js';
import type { RequestRecord, SandboxStore } from './store.js';

/** One request as the handlers see it: parsed once, with the clock read after the simulated latency. */
export interface Exchange {
  req: IncomingMessage;
  store: SandboxStore;
  record: RequestRecord;
  path: string;
  query: URLSearchParams;
  bodyText: string;
  now: number;
  /** Scheme, host and port that signed URLs point at. */
  origin: string;
}

/** What a handler asks the server to do; errors are thrown as HttpError instead. */
export type Reply =
  | { kind: 'json'; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'drop' }
  | { kind: 'file'; bytes: Buffer; cut: boolean; wrongLength: WrongLength };

/** A download whose Content-Length lies: the body is shorter or longer than it says. */
export type WrongLength = 'short' | 'long' | null;

export const json = (status: number, body: unknown, headers?: Record<string, string>): Reply => ({
  kind: 'json',
  status,
  body,
  ...(headers ? { headers } : {}),
});

const MAX_BODY_BYTES = 1024 * 1024;

/** Reads the whole body; an oversized one is drained and reported as an invalid request. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size <= MAX_BODY_BYTES) chunks.push(chunk as Buffer);
  }
  if (size > MAX_BODY_BYTES) throw fail.invalidJson('The request body is larger than 1 MiB.');
  return Buffer.concat(chunks).toString('utf8');
}

export function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** Retry-After as a plain number of seconds; tests configure fractions such as 0.2. */
export function retryAfterHeader(config: SandboxConfig): string {
  return String(config.retry_after_seconds);
}
