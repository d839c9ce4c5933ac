import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';

/**
 * A real PostgreSQL server on loopback for the tests: the server binaries of Debian's `postgresql`
 * package (the highest version under /usr/lib/postgresql/<version>/bin, else whatever is on PATH),
 * one cluster per call in a temporary folder. Under CI=true a missing server is a failure (.ci/run
 * installs it); elsewhere the PostgreSQL tests skip, and say so.
 *
 * The superuser has a password and host connections need it (scram-sha-256), so that tests can
 * check that a password never leaks into output. PostgreSQL refuses to run as root: when the tests
 * run as root, initdb and pg_ctl run as the `postgres` OS user (Debian's package creates it), in a
 * folder that user owns.
 *
 * With MEDIABATCH_TEST_POSTGRES_URL set (a postgres:// URL of a role allowed to CREATE DATABASE),
 * startPostgresServer hands out that server instead: see docs/testing.md.
 */
export interface PostgresTestServer {
  /** postgres://USER:PASSWORD@127.0.0.1:PORT/postgres (the superuser's maintenance database), or the external URL. */
  url: string;
  host: string;
  port: number;
  user: string;
  password: string;
  /** PGHOST, PGPORT, PGUSER, PGPASSWORD, PGDATABASE for a child process. */
  env: Record<string, string>;
  /** The temporary folder holding the cluster and its log; null for an external server. */
  dir: string | null;
  /** The cluster's data folder (postmaster.pid names the server's process); null for an external server. */
  dataDir: string | null;
  /** Creates a new, empty, uniquely named database and returns its URL (same role and password). */
  createDatabase(prefix?: string): Promise<string>;
  /** Stops the server (pg_ctl stop -m fast), keeping its data: connections then fail. For outage tests. */
  stopServer(): Promise<void>;
  /** Starts the stopped server again on the same port and waits until it accepts connections. */
  startServer(): Promise<void>;
  /** Stops the server and removes the temp folder (external server: drops the databases it created). */
  stop(): Promise<void>;
}

const FOLDER_PREFIX = 'mediabatch-postgres-';
const SUPERUSER = 'mediabatch';
const MAINTENANCE_DB = 'postgres';
const SERVER_OS_USER = 'postgres';
const READY_TIMEOUT_S = 30;
const COMMAND_TIMEOUT_MS = 60_000;
const APT_INSTALL = 'apt-get install --no-install-recommends postgresql';

interface Binaries {
  initdb: string;
  pgCtl: string;
  psql: string;
}

interface OsUser {
  uid: number;
  gid: number;
}

const inCi = process.env.CI === 'true';
const external = externalServerFromEnv();
const asRoot = process.getuid?.() === 0;
const binaries = findBinaries();
const serverOsUser = asRoot ? osUser(SERVER_OS_USER) : null;
/** Why no server can be started here, or null when one can. */
const missing = missingReason();

/** True when no PostgreSQL server can be started, no external one is configured, and we are not under CI=true. */
export const skipPostgresTests = external === null && missing !== null && !inCi;
/** False against an external server, which the tests cannot stop: outage tests skip then. */
export const postgresCanRestart = external === null;

if (skipPostgresTests) {
  console.warn(
    `\n*** PostgreSQL tests SKIPPED: ${missing} (${APT_INSTALL}; ` +
      'or set MEDIABATCH_TEST_POSTGRES_URL; under CI=true this fails) ***\n',
  );
}

function missingReason(): string | null {
  if (!binaries) {
    return 'no PostgreSQL server found, initdb, pg_ctl and psql under /usr/lib/postgresql/*/bin or on PATH';
  }
  if (asRoot && !serverOsUser) {
    return `running as root and there is no '${SERVER_OS_USER}' OS user to run the server as (PostgreSQL refuses root)`;
  }
  return null;
}

/**
 * A server for the calling suite: started before its first test, stopped after its last (the
 * suite's own after-hooks, registered later, run before the stop). Call it inside `describe`.
 */
export function usePostgresServer(): { readonly server: PostgresTestServer } {
  const handle: { server?: PostgresTestServer } = {};
  beforeAll(async () => {
    handle.server = await startPostgresServer();
  }, 60_000);
  afterAll(async () => {
    await handle.server?.stop();
  });
  return handle as { readonly server: PostgresTestServer };
}

export async function startPostgresServer(): Promise<PostgresTestServer> {
  if (external) return externalHandle(external);
  if (missing) throw new Error(`PostgreSQL cannot start: ${missing}; ${APT_INSTALL} (.ci/run does)`);
  return startCluster();
}

/**
 * Runs one SQL command with psql against `url` and returns its rows, unaligned and without
 * headers (`a|b` per row). The password goes to psql through PGPASSWORD, never on its command
 * line, where `ps` would show it. Rejects with psql's error (which never contains the password).
 */
export async function psql(url: string, sql: string): Promise<string> {
  const target = new URL(url);
  const password = decodeURIComponent(target.password);
  target.password = '';
  const result = await run(
    psqlBinary(),
    ['-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', target.toString(), '-c', sql],
    { env: { PGPASSWORD: password, PGCONNECT_TIMEOUT: '5' } },
  );
  if (result.code !== 0) throw new Error(`psql failed (exit ${result.code}): ${result.stderr.trim()}`);
  return result.stdout.trim();
}

// ---------------------------------------------------------------------------------------------
// Finding the server

/** The highest versioned Debian folder with a server in it, else the first PATH folder with one. */
function findBinaries(): Binaries | null {
  const debian = '/usr/lib/postgresql';
  const versions = existsSync(debian)
    ? readdirSync(debian)
        .filter((name) => /^\d+(\.\d+)?$/.test(name))
        .sort((a, b) => Number(b) - Number(a))
        .map((version) => join(debian, version, 'bin'))
    : [];
  const pathDirs = (process.env.PATH ?? '').split(delimiter).filter(Boolean);
  for (const dir of [...versions, ...pathDirs]) {
    const has = (name: string) => existsSync(join(dir, name));
    if (!has('initdb') || !has('pg_ctl') || !has('postgres')) continue;
    // Debian ships psql in the same folder; elsewhere it may live apart from the server.
    const psql = has('psql') ? join(dir, 'psql') : onPath('psql');
    if (!psql) return null;
    return { initdb: join(dir, 'initdb'), pgCtl: join(dir, 'pg_ctl'), psql };
  }
  return null;
}

function onPath(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    if (existsSync(join(dir, name))) return join(dir, name);
  }
  return null;
}

/** psql for an external server may come from the client package alone. */
function psqlBinary(): string {
  const found = binaries?.psql ?? onPath('psql') ?? (existsSync('/usr/bin/psql') ? '/usr/bin/psql' : null);
  if (!found) throw new Error(`psql not found: apt-get install postgresql-client (or ${APT_INSTALL})`);
  return found;
}

function osUser(name: string): OsUser | null {
  try {
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8', stdio: 'pipe' }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8', stdio: 'pipe' }).trim());
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// Running commands

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface RunOptions {
  env?: Record<string, string>;
  cwd?: string;
  /** Run as the server's OS user (when we are root, PostgreSQL's tools refuse to run as us). */
  asServerUser?: boolean;
}

/**
 * The environment for every PostgreSQL tool: ours without any PG* variable (a developer's PGHOST
 * or PGSERVICE must not send a check to another server), messages in English for the errors.
 */
function toolEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('PG')) env[key] = value;
  return { ...env, LC_ALL: 'C', ...extra };
}

/** `command args` as the server's OS user when we are root, else as is. */
function asServer(command: string, args: string[]): [string, string[]] {
  if (!asRoot) return [command, args];
  const runuser =
    onPath('runuser') ?? ['/usr/sbin/runuser', '/sbin/runuser'].find((path) => existsSync(path));
  if (runuser) return [runuser, ['-u', SERVER_OS_USER, '--', command, ...args]];
  // util-linux's other way to drop privileges, for a system without runuser.
  return [
    'setpriv',
    ['--reuid', SERVER_OS_USER, '--regid', SERVER_OS_USER, '--init-groups', '--', command, ...args],
  ];
}

function run(command: string, args: string[], options: RunOptions = {}): Promise<RunResult> {
  const [file, argv] = options.asServerUser ? asServer(command, args) : [command, args];
  return new Promise((resolve, reject) => {
    const child = spawn(file, argv, {
      env: toolEnv(options.env),
      // The server's user may not enter our working folder; tools that call getcwd then complain.
      cwd: options.cwd ?? tmpdir(),
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: COMMAND_TIMEOUT_MS,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

// ---------------------------------------------------------------------------------------------
// A cluster in a temporary folder

interface Cluster {
  dir: string;
  dataDir: string;
  socketDir: string;
  logFile: string;
  port: number;
  password: string;
  pgCtl: string;
}

async function startCluster(): Promise<PostgresTestServer> {
  const found = binaries!;
  await removeStaleFolders(found.pgCtl);
  const dir = mkdtempSync(join(tmpdir(), FOLDER_PREFIX));
  writeFileSync(join(dir, 'owner.pid'), String(process.pid));
  const cluster: Cluster = {
    dir,
    dataDir: join(dir, 'data'),
    socketDir: join(dir, 'socket'),
    logFile: join(dir, 'server.log'),
    port: 0,
    // Letters a test can search output for; hex needs no escaping in a URL.
    password: `pw${randomBytes(12).toString('hex')}`,
    pgCtl: found.pgCtl,
  };
  mkdirSync(cluster.socketDir);
  // Root can always remove the folder; the server's user needs to own it to write there.
  if (serverOsUser) {
    chownSync(dir, serverOsUser.uid, serverOsUser.gid);
    chownSync(cluster.socketDir, serverOsUser.uid, serverOsUser.gid);
  }
  const killOnExit = () => killCluster(cluster);
  process.once('exit', killOnExit);
  let watcher: ChildProcess | null = null;
  try {
    await initCluster(cluster, found.initdb);
    await startOnFreePort(cluster);
    // A test process killed by a signal runs no exit handler, and pg_ctl puts the server in a
    // session of its own: the watcher stops it and removes the folder once we are gone.
    watcher = watchParent(cluster);
  } catch (error) {
    killCluster(cluster);
    process.removeListener('exit', killOnExit);
    throw error;
  }

  const server = handle(
    {
      host: '127.0.0.1',
      port: cluster.port,
      user: SUPERUSER,
      password: cluster.password,
      database: MAINTENANCE_DB,
    },
    { dir, dataDir: cluster.dataDir },
  );
  server.stopServer = () => pgCtlStop(cluster, 'fast');
  server.startServer = async () => {
    if (await running(cluster)) return;
    await pgCtlStart(cluster);
  };
  server.stop = async () => {
    watcher?.kill('SIGKILL');
    watcher = null;
    try {
      await pgCtlStop(cluster, 'fast');
    } catch {
      await pgCtlStop(cluster, 'immediate').catch(() => {});
    }
    rmSync(dir, { recursive: true, force: true });
    process.removeListener('exit', killOnExit);
  };
  return server;
}

/** initdb with the superuser's password from a file (never on a command line); no fsync, C locale: fast and the same everywhere. */
async function initCluster(cluster: Cluster, initdb: string): Promise<void> {
  const pwfile = join(cluster.dir, 'password');
  writeFileSync(pwfile, `${cluster.password}\n`, { mode: 0o600 });
  if (serverOsUser) chownSync(pwfile, serverOsUser.uid, serverOsUser.gid);
  const result = await run(
    initdb,
    [
      '-D',
      cluster.dataDir,
      '-U',
      SUPERUSER,
      `--pwfile=${pwfile}`,
      // Password checks for socket and host connections alike: no trust anywhere.
      '--auth=scram-sha-256',
      '--encoding=UTF8',
      '--locale=C',
      '--no-sync',
      '--no-instructions',
    ],
    { asServerUser: true, cwd: cluster.dir },
  );
  rmSync(pwfile, { force: true });
  if (result.code !== 0) {
    throw new Error(
      `initdb failed (exit ${result.code}):\n${(result.stdout + result.stderr).trim().slice(-3000)}`,
    );
  }
}

/**
 * The port comes from the kernel (port 0) and is released just before the server binds it, so
 * another process may take it in between: the server then fails to bind, and we try a new one.
 */
async function startOnFreePort(cluster: Cluster): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    cluster.port = await freePort();
    try {
      await pgCtlStart(cluster);
      return;
    } catch (error) {
      const taken = /could not bind|Address already in use/i.test(String(error));
      if (!taken || attempt >= 3) throw error;
    }
  }
}

/**
 * pg_ctl -w returns once the server accepts connections (or has failed); the server's output goes
 * to server.log in the folder. Fast settings for a throwaway cluster: no fsync, one socket in the
 * folder (not /var/run/postgresql, which only the Debian cluster's user may write), loopback only.
 */
async function pgCtlStart(cluster: Cluster): Promise<void> {
  const options = [
    `-p ${cluster.port}`,
    `-k '${cluster.socketDir}'`,
    '-c listen_addresses=127.0.0.1',
    '-c fsync=off',
    '-c full_page_writes=off',
    '-c synchronous_commit=off',
  ].join(' ');
  const result = await run(
    cluster.pgCtl,
    [
      'start',
      '-w',
      '-t',
      String(READY_TIMEOUT_S),
      '-D',
      cluster.dataDir,
      '-l',
      cluster.logFile,
      '-o',
      options,
    ],
    { asServerUser: true, cwd: cluster.dir },
  );
  if (result.code !== 0) {
    throw new Error(
      `pg_ctl start failed (exit ${result.code}) on port ${cluster.port}: ${(result.stdout + result.stderr).trim()}` +
        `\n--- server.log:\n${logTail(cluster)}`,
    );
  }
}

async function pgCtlStop(cluster: Cluster, mode: 'fast' | 'immediate'): Promise<void> {
  if (!(await running(cluster))) return;
  const result = await run(
    cluster.pgCtl,
    ['stop', '-w', '-t', String(READY_TIMEOUT_S), '-m', mode, '-D', cluster.dataDir],
    {
      asServerUser: true,
      cwd: cluster.dir,
    },
  );
  if (result.code !== 0) {
    throw new Error(
      `pg_ctl stop failed (exit ${result.code}): ${(result.stdout + result.stderr).trim()}\n--- server.log:\n${logTail(cluster)}`,
    );
  }
}

/** pg_ctl status: 0 running, 3 not running. */
async function running(cluster: Cluster): Promise<boolean> {
  if (!existsSync(join(cluster.dataDir, 'postmaster.pid'))) return false;
  const result = await run(cluster.pgCtl, ['status', '-D', cluster.dataDir], {
    asServerUser: true,
    cwd: cluster.dir,
  });
  return result.code === 0;
}

function logTail(cluster: Cluster): string {
  try {
    return readFileSync(cluster.logFile, 'utf8').trim().slice(-3000);
  } catch {
    return '(no log)';
  }
}

/** On the test process's exit: no time for waiting on promises, so a synchronous immediate stop. */
function killCluster(cluster: Cluster): void {
  if (existsSync(join(cluster.dataDir, 'postmaster.pid'))) {
    const [file, argv] = asServer(cluster.pgCtl, ['stop', '-w', '-m', 'immediate', '-D', cluster.dataDir]);
    spawnSync(file, argv, { env: toolEnv(), cwd: cluster.dir, stdio: 'ignore', timeout: 10_000 });
  }
  rmSync(cluster.dir, { recursive: true, force: true });
}

/**
 * A shell that polls for this process once a second and, when it is gone, stops the server and
 * removes the folder. It runs as us (it must see our process), the stop as the server's user.
 */
function watchParent(cluster: Cluster): ChildProcess {
  const [file, argv] = asServer(cluster.pgCtl, ['stop', '-m', 'immediate', '-D', cluster.dataDir]);
  const script =
    'parent=$1; dir=$2; shift 2; while kill -0 "$parent" 2>/dev/null; do sleep 1; done; ' +
    '"$@" >/dev/null 2>&1; rm -rf "$dir"';
  const child = spawn(
    'sh',
    ['-c', script, 'postgres-watch', String(process.pid), cluster.dir, file, ...argv],
    {
      detached: true,
      stdio: 'ignore',
      env: toolEnv(),
      cwd: tmpdir(),
    },
  );
  // The watcher must never keep the test process alive.
  child.unref();
  return child;
}

/**
 * Folders whose owner is gone (a test process killed before its watcher started, or a machine
 * restarted mid-run): stop a server still running there, and remove the folder.
 */
async function removeStaleFolders(pgCtl: string): Promise<void> {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(FOLDER_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    const owner = Number(readFileOr(join(dir, 'owner.pid'), '0'));
    // No owner file yet: another process may be between mkdtemp and writing it; give it a minute.
    const settled = owner > 0 || Date.now() - statSync(dir).mtimeMs > 60_000;
    if (!settled || alive(owner)) continue;
    const dataDir = join(dir, 'data');
    if (existsSync(join(dataDir, 'postmaster.pid'))) {
      await run(pgCtl, ['stop', '-w', '-m', 'immediate', '-D', dataDir], { asServerUser: true }).catch(
        () => {},
      );
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

function readFileOr(path: string, fallback: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return fallback;
  }
}

function alive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, someone else's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------------------------------------
// The handle, and an external server

interface Connection {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

function connectionUrl(connection: Connection, database = connection.database): string {
  const user = encodeURIComponent(connection.user);
  const password = encodeURIComponent(connection.password);
  const host = connection.host.includes(':') ? `[${connection.host}]` : connection.host;
  return `postgres://${user}:${password}@${host}:${connection.port}/${encodeURIComponent(database)}`;
}

function handle(
  connection: Connection,
  folders: { dir: string | null; dataDir: string | null },
  created?: string[],
  urlOf: (database: string) => string = (database) => connectionUrl(connection, database),
): PostgresTestServer {
  const url = urlOf(connection.database);
  return {
    url,
    host: connection.host,
    port: connection.port,
    user: connection.user,
    password: connection.password,
    env: {
      PGHOST: connection.host,
      PGPORT: String(connection.port),
      PGUSER: connection.user,
      PGPASSWORD: connection.password,
      PGDATABASE: connection.database,
    },
    ...folders,
    createDatabase: async (prefix = 'mb_test') => {
      const name = databaseName(prefix);
      // The name is [a-z0-9_] only, so quoting it is enough.
      await psql(url, `CREATE DATABASE "${name}"`);
      created?.push(name);
      return urlOf(name);
    },
    stopServer: () => Promise.reject(notSupported('stopServer')),
    startServer: () => Promise.reject(notSupported('startServer')),
    stop: async () => {},
  };
}

function notSupported(what: string): Error {
  return new Error(
    `${what} is not supported against an external server (MEDIABATCH_TEST_POSTGRES_URL); check postgresCanRestart`,
  );
}

/** `prefix_<12 hex>`: lower-case, at most 63 characters (PostgreSQL's limit), unique on a shared server. */
function databaseName(prefix: string): string {
  const clean = prefix
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 40);
  return `${clean || 'mb_test'}_${randomBytes(6).toString('hex')}`;
}

interface ExternalServer {
  connection: Connection;
  /** The URL as given, so that its query (sslmode, say) reaches every database's URL. */
  url: URL;
}

function externalServerFromEnv(): ExternalServer | null {
  const value = process.env.MEDIABATCH_TEST_POSTGRES_URL;
  if (!value) return null;
  const url = new URL(value);
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new Error('MEDIABATCH_TEST_POSTGRES_URL must be a postgres:// URL');
  }
  const user = decodeURIComponent(url.username);
  return {
    url,
    connection: {
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(url.port || 5432),
      user,
      password: decodeURIComponent(url.password),
      database: decodeURIComponent(url.pathname.slice(1)) || MAINTENANCE_DB,
    },
  };
}

/** Databases on a shared server outlive the test process: stop() drops each one it made. */
function externalHandle(settings: ExternalServer): PostgresTestServer {
  const created: string[] = [];
  const urlOf = (database: string) => {
    const url = new URL(settings.url);
    url.pathname = `/${encodeURIComponent(database)}`;
    return url.toString();
  };
  const server = handle(settings.connection, { dir: null, dataDir: null }, created, urlOf);
  server.stop = async () => {
    for (const name of created.splice(0)) {
      // FORCE (PostgreSQL 13+) ends connections a test left open.
      await psql(server.url, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    }
  };
  return server;
}
