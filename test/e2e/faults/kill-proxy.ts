import { createServer, type IncomingMessage, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Where a trap fires on a POST /videos/generation:
 * - `held`: the proxy has the request but the service never sees it, as if the runner died right
 *   after committing the attempt and before its bytes left;
 * - `answered`: the service stored (and charged) the job and answered, but the answer never
 *   reaches the runner, as if it died while the POST was in flight.
 */
export type TrapPoint = 'held' | 'answered';

export interface PostTrap {
  point: TrapPoint;
  /** Fires on the n-th POST seen after arming (1 = the first). */
  nth: number;
  fire: () => void;
}

export interface KillProxy {
  /** 'http://127.0.0.1:<port>/v1': what the runner uses as its base URL. */
  baseUrl: string;
  arm(trap: PostTrap | null): void;
  /** True once the armed trap fired. */
  readonly fired: boolean;
  close(): Promise<void>;
}

/**
 * A transparent HTTP proxy in front of the sandbox's API (downloads go straight to the sandbox),
 * which can kill the runner at exact points of a submission.
 */
export async function startKillProxy(upstreamBaseUrl: string): Promise<KillProxy> {
  const upstream = new URL(upstreamBaseUrl);
  let trap: PostTrap | null = null;
  let seen = 0;
  let fired = false;

  const forward = (req: IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer } | null>((resolve) => {
      const out = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, host: upstream.host, connection: 'close' },
          agent: false,
        },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on('data', (chunk: Buffer) => chunks.push(chunk));
          answer.on('end', () =>
            resolve({
              status: answer.statusCode ?? 502,
              headers: answer.headers,
              body: Buffer.concat(chunks),
            }),
          );
          answer.on('error', () => resolve(null));
        },
      );
      out.on('error', () => resolve(null));
      out.end(body);
    });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    let point: TrapPoint | null = null;
    if (req.method === 'POST' && trap) {
      seen += 1;
      if (seen >= trap.nth) point = trap.point;
    }
    const armed = trap;
    if (point === 'held' && armed) {
      trap = null;
      fired = true;
      armed.fire();
      req.socket.destroy();
      return;
    }
    const answer = await forward(req, body);
    if (point === 'answered' && armed) {
      trap = null;
      fired = true;
      armed.fire();
      req.socket.destroy();
      return;
    }
    if (!answer) {
      // The service dropped the connection: so does the proxy.
      req.socket.destroy();
      return;
    }
    const headers = { ...answer.headers };
    delete headers.connection;
    delete headers['transfer-encoding'];
    headers['content-length'] = String(answer.body.length);
    res.writeHead(answer.status, headers);
    res.end(answer.body);
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch(() => req.socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}${upstream.pathname}`,
    arm(next) {
      trap = next;
      seen = 0;
      fired = false;
    },
    get fired() {
      return fired;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
