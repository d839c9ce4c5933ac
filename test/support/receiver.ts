import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One POST the receiver got, as it arrived. */
export interface Received {
  headers: Record<string, string | string[] | undefined>;
  body: string;
  status: number;
  at: number;
}

export interface Receiver {
  url: string;
  received: Received[];
  /** The bodies it answered 2xx, parsed. */
  delivered: () => Array<Record<string, unknown> & { event: string }>;
  close: () => Promise<void>;
}

/**
 * A small webhook receiver made with node:http, as a user would write one: it records every
 * request and answers the statuses in `answers` first (500, 500, ...), then 204.
 */
export async function startReceiver(answers: number[] = []): Promise<Receiver> {
  const received: Received[] = [];
  const queue = [...answers];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      const status = queue.shift() ?? 204;
      received.push({ headers: request.headers, body, status, at: Date.now() });
      response.statusCode = status;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/mediabatch`,
    received,
    delivered: () =>
      received
        .filter((request) => request.status < 300)
        .map((request) => JSON.parse(request.body) as Record<string, unknown> & { event: string }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Checks a notification's signature the way docs/overnight.md tells a receiver to, written here
 * from that description with node:crypto alone: `t=<seconds>,v1=<hex>` where the hex is
 * HMAC-SHA256 of `<t>.<body>`, and t within five minutes of now.
 */
export function signatureValid(received: Received, secret: string, now = Date.now()): boolean {
  const header = received.headers['x-mediabatch-signature'];
  if (typeof header !== 'string') return false;
  const parts = new Map(header.split(',').map((part) => part.split('=', 2) as [string, string]));
  const t = Number(parts.get('t'));
  const given = Buffer.from(parts.get('v1') ?? '', 'hex');
  const expected = createHmac('sha256', secret)
    .update(`${parts.get('t')}.${received.body}`)
    .digest();
  if (!Number.isInteger(t) || Math.abs(now / 1000 - t) > 300) return false;
  return given.length === expected.length && timingSafeEqual(given, expected);
}
