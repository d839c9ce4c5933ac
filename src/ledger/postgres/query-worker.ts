import type PgModule from 'pg';

/**
 * The body of the worker thread that owns the PostgreSQL connection (sync-connection.ts). It is
 * started from this function's own source text (`eval`), so it needs no file of its own beside the
 * compiled one and runs the same under the tests' transform: it must stay self-contained, using
 * only `load` (the worker's require) and what workerData brings.
 *
 * One message in, one reply out, in order: { sql, params } runs on the one client, so a BEGIN and
 * its COMMIT share a session. A connection that fails is dropped and the reply says so; the next
 * message connects again. The reply is posted on `reply` and the shared counter is bumped, which
 * wakes the main thread waiting on it.
 */
// biome-ignore lint/suspicious/noExplicitAny: CommonJS modules loaded at run time have no types here.
export function queryWorker(load: (id: string) => any): void {
  const { parentPort, workerData } = load('node:worker_threads');
  // Typed by pg's own declarations: the type import is erased, the module is the worker's require's.
  const pg: typeof PgModule = load(workerData.pgPath);
  // Money and ids are bigint columns; micro-dollars stay far below 2^53.
  pg.types.setTypeParser(20, (value: string) => Number(value));
  const signal = new Int32Array(workerData.signal);
  const reply = workerData.reply;
  // biome-ignore lint/suspicious/noExplicitAny: pg's Client, loaded at run time.
  let client: any = null;
  const lostCodes = new Set([
    'ECONNREFUSED',
    'ECONNRESET',
    'EPIPE',
    'ETIMEDOUT',
    'EHOSTUNREACH',
    'ENOTFOUND',
  ]);
  const isLost = (error: { code?: string; message?: string }): boolean =>
    lostCodes.has(error.code ?? '') ||
    /^(08|57P0)/.test(error.code ?? '') ||
    /Connection terminated|Query read timeout|timeout expired|not queryable|Client has encountered a connection error/i.test(
      error.message ?? '',
    );
  const drop = (): void => {
    const old = client;
    client = null;
    old?.end().catch(() => {});
  };
  const answer = (message: unknown): void => {
    reply.postMessage(message);
    Atomics.add(signal, 0, 1);
    Atomics.notify(signal, 0);
  };
  const run = async (
    sql: string,
    params: unknown[],
    arrays: boolean,
  ): Promise<{ rows: unknown[]; rowCount: number }> => {
    if (client === null) {
      const fresh = new pg.Client(workerData.config);
      fresh.on('error', () => {
        if (client === fresh) drop();
      });
      client = fresh;
      try {
        await fresh.connect();
      } catch (error) {
        // A client that never connected (a wrong password, say) takes no more statements: the
        // next one (a ROLLBACK) would wait in its queue until the statement timeout.
        if (client === fresh) drop();
        throw error;
      }
    }
    // Without values, the simple protocol: a migration's several statements go as one text.
    const result = await client.query(
      params.length > 0 ? { text: sql, values: params, ...(arrays ? { rowMode: 'array' } : {}) } : sql,
    );
    return { rows: result.rows ?? [], rowCount: result.rowCount ?? 0 };
  };
  parentPort.on(
    'message',
    async (message: { sql?: string; params?: unknown[]; arrays?: boolean; close?: boolean }) => {
      if (message.close) {
        await client?.end().catch(() => {});
        client = null;
        answer({ ok: true, rows: [], rowCount: 0 });
        return;
      }
      try {
        answer({
          ok: true,
          ...(await run(message.sql ?? '', message.params ?? [], message.arrays === true)),
        });
      } catch (caught) {
        const error = caught as { code?: string; message?: string; detail?: string; constraint?: string };
        const lost = isLost(error);
        if (lost) drop();
        answer({
          ok: false,
          error: {
            message: String(error.message),
            code: error.code ?? null,
            constraint: error.constraint ?? null,
            lost,
          },
        });
      }
    },
  );
}
