import { existsSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { type E2eProject, ledgerRows, project } from './e2e.js';

/** A loopback port with nothing listening on it (bound once, then closed). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A plain HTTP server that is not the video service: every request gets `status` and `body`.
 * It counts requests by method, and closes when the test ends.
 */
export async function impostor(
  status: number,
  body: string,
  contentType = 'text/html',
): Promise<{ baseUrl: string; requests: Array<{ method: string; url: string }> }> {
  const requests: Array<{ method: string; url: string }> = [];
  const server: Server = createServer((request, response) => {
    requests.push({ method: request.method ?? '', url: request.url ?? '' });
    request.resume();
    response.writeHead(status, { 'content-type': contentType });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, requests };
}

/** Item states of the ledger by id (plain SQL); empty when the ledger has no items table rows. */
export function itemStates(p: E2eProject): Record<string, string> {
  // A refused command leaves no ledger behind: no file records no item.
  if (!existsSync(p.ledger)) return {};
  const rows = ledgerRows<{ item_id: string; state: string; error_code: string | null }>(
    p,
    'SELECT item_id, state, error_code FROM items ORDER BY item_id',
  );
  return Object.fromEntries(
    rows.map((row) => [row.item_id, row.error_code ? `${row.state}:${row.error_code}` : row.state]),
  );
}

/** The ledger's bound service (plain SQL), or null. */
export function boundService(p: E2eProject): string | null {
  if (!existsSync(p.ledger)) return null;
  const rows = ledgerRows<{ identity: string }>(p, 'SELECT identity FROM service');
  return rows[0]?.identity ?? null;
}

/** Every request the sandbox saw, as `METHOD path status`. */
export function requestLog(sandbox: SandboxHandle): string[] {
  return sandbox.records().requests.map((request) => `${request.method} ${request.path} ${request.status}`);
}

/** `project()` whose folder is removed when the test ends, passed or failed. */
export function ownProject(name: string, yaml: string, files: Record<string, string> = {}): E2eProject {
  const p = project(name, yaml, files);
  onTestFinished(() => rmSync(p.dir, { recursive: true, force: true }));
  return p;
}

/**
 * A pass-through proxy to `baseUrl` that answers 404 route_not_found to the requests `blocked`
 * picks, as a misrouted gateway would. Closed when the test ends.
 */
export async function routeBlockingProxy(
  baseUrl: string,
  blocked: (method: string, path: string) => boolean,
): Promise<{ baseUrl: string }> {
  const upstream = new URL(baseUrl);
  const server: Server = createServer((request, response) => {
    const method = request.method ?? '';
    const path = request.url ?? '';
    if (blocked(method, path)) {
      request.resume();
      response.writeHead(404, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          error: {
            type: 'not_found',
            code: 'route_not_found',
            message: `No route for ${method} ${path}.`,
            request_id: 'req_proxy',
          },
        }),
      );
      return;
    }
    const forward = httpRequest(
      { host: upstream.hostname, port: upstream.port, method, path, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    forward.on('error', () => response.destroy());
    request.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}${upstream.pathname}` };
}

/** An items block of one "take <id>" prompt per id; `marker` adds a sandbox prompt marker. */
export function takeItems(ids: readonly string[], marker = ''): string {
  return `items:\n${ids.map((id) => `  - {id: ${id}, prompt: "take ${id}${marker}"}\n`).join('')}`;
}
