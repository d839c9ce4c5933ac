import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Exchange, type Reply, readBody } from './exchange.js';
import { draw } from './faults.js';
import { fail, HttpError } from './http-error.js';
import { route } from './routes.js';
import type { RequestRecord, SandboxStore } from './store.js';

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    // Unref'd: a pending simulated delay must not keep a closed sandbox's process alive.
    setTimeout(resolve, ms).unref();
  });

/** Loopback origin for URLs; wildcard binds are reached through 127.0.0.1. */
function originFor(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/**
 * A whole, cleanly ended download whose Content-Length lies. Node's response object frames bodies
 * by their Content-Length, so the answer is written on the socket itself: a shorter body ends with
 * the connection (Connection: close), a longer one is framed by chunked encoding.
 */
function sendWithWrongLength(res: ServerResponse, bytes: Buffer, side: 'short' | 'long'): void {
  const declared = side === 'short' ? bytes.length * 2 : Math.floor(bytes.length / 2);
  const head = [
    'HTTP/1.1 200 OK',
    'content-type: video/mp4',
    `content-length: ${declared}`,
    `x-request-id: ${String(res.getHeader('x-request-id'))}`,
    'connection: close',
    ...(side === 'long' ? ['transfer-encoding: chunked'] : []),
  ].join('\r\n');
  const socket = res.socket!;
  socket.write(`${head}\r\n\r\n`);
  if (side === 'long') {
    socket.write(`${bytes.length.toString(16)}\r\n`);
    socket.write(bytes);
    socket.end('\r\n0\r\n\r\n');
  } else socket.end(bytes);
}

/**
 * What went wrong inside the sandbox, told to whoever started it (`onProblem`): the sandbox itself
 * writes nothing to the console.
 */
export interface SandboxProblem {
  kind: 'internal_error' | 'state_not_written';
  message: string;
}

export type OnSandboxProblem = (problem: SandboxProblem) => void;

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** A thrown HttpError as the service's JSON error; anything else as its 500. */
function errorReply(error: unknown, requestId: string, onProblem: OnSandboxProblem): Reply {
  let httpError = error;
  if (!(error instanceof HttpError)) {
    // A sandbox bug must still look like the service's own 500, but it should not go unnoticed.
    onProblem({ kind: 'internal_error', message: `internal error: ${describe(error)}` });
    httpError = fail.internal();
  }
  const failure = httpError as HttpError;
  return {
    kind: 'json',
    status: failure.status,
    body: failure.envelope(requestId),
    headers: failure.headers,
  };
}

/** Durable before answered: a job the client was told about survives a restart of the sandbox. */
function commitBeforeAnswering(
  store: SandboxStore,
  reply: Reply,
  requestId: string,
  onProblem: OnSandboxProblem,
): Reply {
  try {
    store.commit();
    return reply;
  } catch (error) {
    // The client resends on a 500 with the same key, and the job is replayed from memory.
    onProblem({ kind: 'state_not_written', message: `cannot write its state file: ${describe(error)}` });
    return { kind: 'json', status: 500, body: fail.internal().envelope(requestId) };
  }
}

/**
 * The HTTP listener in front of a SandboxStore. It can stop and listen again on the same port,
 * severing open connections in between, to simulate an outage while keeping all state.
 */
export class SandboxServer {
  readonly #store: SandboxStore;
  readonly #host: string;
  #server: Server | null = null;
  #port = 0;
  #requests = 0;
  readonly #onProblem: OnSandboxProblem;

  constructor(store: SandboxStore, host: string, onProblem: OnSandboxProblem) {
    this.#store = store;
    this.#host = host;
    this.#onProblem = onProblem;
  }

  get port(): number {
    return this.#port;
  }

  get origin(): string {
    return originFor(this.#host, this.#port);
  }

  async listen(port: number): Promise<void> {
    if (this.#server) return;
    const server = createServer((req, res) => {
      void this.#handle(req, res);
    });
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.#host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#server = server;
    this.#port = (server.address() as AddressInfo).port;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = null;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sandbox.invalid');
    const requestId = `req_${randomBytes(12).toString('hex')}`;
    const record = this.#recordRequest(req, url);
    res.setHeader('x-request-id', requestId);
    let reply: Reply;
    try {
      reply = await this.#answer(req, url, record);
    } catch (error) {
      reply = errorReply(error, requestId, this.#onProblem);
    }
    reply = commitBeforeAnswering(this.#store, reply, requestId, this.#onProblem);
    await this.#send(req, res, reply, record);
  }

  /** Recorded on arrival, before the body is read, so a request that fails or is dropped is still listed. */
  #recordRequest(req: IncomingMessage, url: URL): RequestRecord {
    const record: RequestRecord = {
      method: req.method ?? 'GET',
      path: url.pathname,
      status: 0,
      idempotencyKey:
        typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : null,
      jobId: null,
      at: this.#store.now(),
      ...(url.search === '' ? {} : { query: url.search }),
    };
    this.#store.requests.push(record);
    return record;
  }

  async #answer(req: IncomingMessage, url: URL, record: RequestRecord): Promise<Reply> {
    const store = this.#store;
    const bodyText = await readBody(req);
    await this.#simulateLatency(req.method === 'GET' && url.pathname === '/v1/jobs');
    const ex: Exchange = {
      req,
      store,
      record,
      path: url.pathname,
      query: url.searchParams,
      bodyText,
      now: store.now(),
      origin: this.origin,
    };
    return route(ex);
  }

  async #simulateLatency(listing: boolean): Promise<void> {
    const store = this.#store;
    const { min, max } = store.config.faults.latency_ms;
    this.#requests += 1;
    if (max > 0) await sleep(min + draw(store.config.seed, 'latency', this.#requests) * (max - min));
    const list = store.config.faults.list_latency_ms;
    if (listing && list.max > 0)
      await sleep(list.min + draw(store.config.seed, 'list-latency', this.#requests) * (list.max - list.min));
  }

  async #send(req: IncomingMessage, res: ServerResponse, reply: Reply, record: RequestRecord): Promise<void> {
    if (res.destroyed) {
      record.status = 'dropped';
      return;
    }
    if (reply.kind === 'drop') {
      record.status = 'dropped';
      req.socket.destroy();
      return;
    }
    record.status = reply.kind === 'json' ? reply.status : 200;
    if (reply.kind === 'json') {
      const text = JSON.stringify(reply.body);
      res.writeHead(reply.status, {
        ...reply.headers,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
      });
      res.end(text);
      return;
    }
    await this.#sendFile(res, reply);
  }

  /** A video body, throttled to download_bytes_per_second when set, or cut halfway as a fault. */
  async #sendFile(res: ServerResponse, reply: Extract<Reply, { kind: 'file' }>): Promise<void> {
    if (reply.wrongLength !== null) {
      sendWithWrongLength(res, reply.bytes, reply.wrongLength);
      return;
    }
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': reply.bytes.length });
    const end = reply.cut ? Math.floor(reply.bytes.length / 2) : reply.bytes.length;
    const rate = this.#store.config.faults.download_bytes_per_second;
    const chunk = rate === undefined ? end : Math.max(1, Math.ceil(rate / 10));
    for (let offset = 0; offset < end; offset += chunk) {
      if (res.destroyed) return;
      res.write(reply.bytes.subarray(offset, Math.min(end, offset + chunk)));
      if (rate !== undefined && offset + chunk < end) await sleep(100);
    }
    if (reply.cut) {
      // Let the half body reach the client before the connection goes, as a real mid-transfer cut.
      await sleep(20);
      res.destroy();
      return;
    }
    res.end();
  }
}
