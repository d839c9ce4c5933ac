import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type PostgresTestServer,
  postgresCanRestart,
  psql,
  skipPostgresTests,
  startPostgresServer,
} from '../support/postgres-server.js';

/**
 * The PostgreSQL server the ledger tests run against (test/support/postgres-server.ts), proved with
 * the psql client: a database of its own per test, a password that is checked, a server that never
 * runs as root, an outage and a restart that keep the data, and nothing left behind.
 */

/** The error `promise` rejects with (fails the test when it resolves). */
async function errorOf(promise: Promise<unknown>): Promise<Error> {
  const error = await promise.then(
    () => null,
    (reason: unknown) => reason,
  );
  if (!(error instanceof Error)) throw new Error(`expected a rejection, got ${String(error)}`);
  return error;
}

/** The postmaster's process id: the first line of postmaster.pid in the data folder. */
function postmasterPid(server: PostgresTestServer): number {
  if (!server.dataDir) throw new Error('an external server has no data folder');
  return Number(readFileSync(join(server.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
}

/**
 * Whether `pid` is a live process. A zombie counts as gone: the postmaster's parent, pg_ctl, exits
 * at once, so an exited server waits for the machine's init to reap it, which may take a while.
 */
function alive(pid: number): boolean {
  const stat = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' });
  return stat.status === 0 && !stat.stdout.trim().startsWith('Z');
}

describe.skipIf(skipPostgresTests)('the PostgreSQL test server', () => {
  let server: PostgresTestServer;

  beforeAll(async () => {
    server = await startPostgresServer();
  }, 40_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('hands out a URL with a password, and the same settings as PG* variables', () => {
    const { user, password, host, port } = server;
    expect(password.length).toBeGreaterThan(0);
    // Parts, not the whole string: an external server's URL may carry a query (sslmode, say).
    const url = new URL(server.url);
    expect(url.protocol).toMatch(/^postgres(ql)?:$/);
    expect(decodeURIComponent(url.username)).toBe(user);
    expect(decodeURIComponent(url.password)).toBe(password);
    expect(url.hostname.replace(/^\[|\]$/g, '')).toBe(host);
    expect(url.port || '5432').toBe(String(port));
    expect(decodeURIComponent(url.pathname.slice(1))).toBe(server.env.PGDATABASE);
    expect(server.env).toEqual({
      PGHOST: host,
      PGPORT: String(port),
      PGUSER: user,
      PGPASSWORD: password,
      PGDATABASE: server.env.PGDATABASE,
    });
  });

  it('creates empty, uniquely named databases that psql can use through their URL', async () => {
    const url = await server.createDatabase('Server-Test');
    const other = await server.createDatabase('Server-Test');
    expect(new URL(url).pathname).toMatch(/^\/server_test_[0-9a-f]{12}$/);
    expect(other).not.toBe(url);
    expect(await psql(url, "SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")).toBe('0');

    await psql(url, 'CREATE TABLE items (id text PRIMARY KEY, cost_micros bigint NOT NULL)');
    await psql(url, "INSERT INTO items VALUES ('a', 1250000)");
    expect(await psql(url, "SELECT id || '=' || cost_micros FROM items")).toBe('a=1250000');
    // The other database is a database of its own.
    expect(await psql(other, "SELECT count(*) FROM pg_tables WHERE tablename = 'items'")).toBe('0');
  });

  it('refuses a wrong password', async () => {
    const wrong = new URL(server.url);
    wrong.password = 'not-the-password';
    const error = await errorOf(psql(wrong.toString(), 'SELECT 1'));
    expect(error.message).toMatch(/password authentication failed/);
    expect(error.message).not.toContain(server.password);
  });

  it.skipIf(!postgresCanRestart)('runs the server as a user other than root', () => {
    const user = execFileSync('ps', ['-o', 'user=', '-p', String(postmasterPid(server))], {
      encoding: 'utf8',
    }).trim();
    const us = execFileSync('id', ['-un'], { encoding: 'utf8' }).trim();
    // PostgreSQL refuses root, so as root the helper runs it as Debian's postgres user; else as us.
    expect(user).toBe(process.getuid?.() === 0 ? 'postgres' : us);
    expect(user).not.toBe('root');
  });

  it.skipIf(!postgresCanRestart)(
    'stopServer makes connections fail; startServer brings the server back on its port with its data',
    async () => {
      const url = await server.createDatabase('outage');
      await psql(url, 'CREATE TABLE kept (v text)');
      await psql(url, "INSERT INTO kept VALUES ('before the outage')");

      await server.stopServer();
      const error = await errorOf(psql(url, 'SELECT 1'));
      expect(error.message).toMatch(/Connection refused|could not connect/i);

      await server.startServer();
      expect(await psql(url, 'SELECT v FROM kept')).toBe('before the outage');
      expect(await psql(url, 'SHOW port')).toBe(String(server.port));
    },
  );

  it.skipIf(!postgresCanRestart)('stop() stops the server and removes its folder', async () => {
    const second = await startPostgresServer();
    expect(second.port).not.toBe(server.port);
    const pid = postmasterPid(second);
    expect(alive(pid)).toBe(true);

    await second.stop();
    expect(alive(pid)).toBe(false);
    expect(existsSync(second.dir!)).toBe(false);
  });
});
