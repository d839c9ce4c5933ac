import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';

/**
 * A real S3-protocol server on loopback for the tests: OpenStack Swift with its s3api middleware,
 * from Debian's packages, one node on a temporary folder. Under CI=true a missing Swift is a
 * failure (.ci/run installs it); elsewhere the S3 tests skip, and say so.
 *
 * With MEDIABATCH_TEST_S3_ENDPOINT, _ACCESS_KEY_ID and _SECRET_ACCESS_KEY (and optionally _REGION)
 * set, startS3Server hands out that server instead (MinIO, AWS): see docs/testing.md.
 */
export interface S3TestServer {
  /** 'http://127.0.0.1:PORT' (the proxy), or the external endpoint. */
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION, AWS_ENDPOINT_URL_S3 for a child process. */
  env: Record<string, string>;
  /** Creates a new, uniquely named bucket (lower-case, valid S3 name) and returns its name. */
  createBucket(prefix?: string): Promise<string>;
  /** Stops only the proxy (all S3 requests then fail to connect), and starts it again on the same port; for outage tests. */
  stopProxy(): Promise<void>;
  startProxy(): Promise<void>;
  /** Stops every server and removes the temp folder (external server: deletes the buckets it created). */
  stop(): Promise<void>;
}

const SWIFT_PYTHON = '/usr/bin/python3';
const SERVERS = ['account', 'container', 'object', 'proxy'] as const;
type ServerName = (typeof SERVERS)[number];
const STORAGE_SERVERS = ['account', 'container', 'object'] as const;
/** Swift reads its hash settings from here whatever swift_dir says. */
const SWIFT_CONF = '/etc/swift/swift.conf';
const TEMPLATES = fileURLToPath(new URL('./swift/', import.meta.url));
const FOLDER_PREFIX = 'mediabatch-swift-';
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 5_000;

const inCi = process.env.CI === 'true';
const external = externalServerFromEnv();
const swiftMissing = SERVERS.some((name) => !existsSync(`/usr/bin/swift-${name}-server`));

/** True when Swift is not installed, no external server is configured, and we are not under CI=true. */
export const skipS3Tests = external === null && swiftMissing && !inCi;
/** False against an external server, whose proxy the tests cannot stop: outage tests skip then. */
export const s3CanRestart = external === null;

if (skipS3Tests) {
  console.warn(
    '\n*** S3 tests SKIPPED: Swift not found, /usr/bin/swift-{proxy,account,container,object}-server ' +
      '(apt-get install swift swift-proxy swift-object swift-container swift-account python3-swift; ' +
      'under CI=true this fails) ***\n',
  );
}

interface ExternalServer {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

function externalServerFromEnv(): ExternalServer | null {
  const endpoint = process.env.MEDIABATCH_TEST_S3_ENDPOINT;
  const accessKeyId = process.env.MEDIABATCH_TEST_S3_ACCESS_KEY_ID;
  const secretAccessKey = process.env.MEDIABATCH_TEST_S3_SECRET_ACCESS_KEY;
  if (!endpoint || !accessKeyId || !secretAccessKey) return null;
  const region = process.env.MEDIABATCH_TEST_S3_REGION || 'us-east-1';
  return { endpoint: endpoint.replace(/\/+$/, ''), region, accessKeyId, secretAccessKey };
}

export async function startS3Server(): Promise<S3TestServer> {
  if (external) return externalHandle(external);
  if (swiftMissing) {
    throw new Error(
      'Swift is missing: apt-get install --no-install-recommends swift swift-proxy swift-object ' +
        'swift-container swift-account python3-swift (.ci/run does)',
    );
  }
  return startSwift();
}

/**
 * The client the tests use against the server. Two settings make the AWS SDK v3 speak to Swift's
 * s3api: checksums only when an operation requires them (the default streams a PutObject as
 * aws-chunked, which s3api refuses with 501), and path-style bucket addressing. DeleteObjects also
 * gets a Content-MD5, which s3api requires (the SDK sends only a CRC32 checksum).
 */
export function s3TestClient(server: S3TestServer, secretAccessKey = server.secretAccessKey): S3Client {
  const client = new S3Client({
    endpoint: server.endpoint,
    region: server.region,
    credentials: { accessKeyId: server.accessKeyId, secretAccessKey },
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  client.middlewareStack.add(
    (next) => async (args) => {
      const request = args.request as {
        method?: string;
        query?: Record<string, unknown>;
        headers?: Record<string, string>;
        body?: unknown;
      };
      if (
        request.method === 'POST' &&
        request.query &&
        'delete' in request.query &&
        typeof request.body === 'string'
      ) {
        request.headers = {
          ...request.headers,
          'content-md5': createHash('md5').update(request.body).digest('base64'),
        };
      }
      return next(args);
    },
    { step: 'build', name: 'contentMd5ForDeleteObjects' },
  );
  return client;
}

// ---------------------------------------------------------------------------------------------
// Swift on loopback

interface Running {
  dir: string;
  ports: Record<ServerName, number>;
  children: Map<ServerName, ChildProcess>;
}

async function startSwift(): Promise<S3TestServer> {
  ensureSwiftConf();
  removeStaleFolders();
  const dir = mkdtempSync(join(tmpdir(), FOLDER_PREFIX));
  writeFileSync(join(dir, 'owner.pid'), String(process.pid));
  const running: Running = { dir, ports: await freePorts(), children: new Map() };
  const killOnExit = () => killAll(running);
  process.once('exit', killOnExit);
  try {
    writeConfigs(running);
    for (const name of SERVERS) spawnServer(running, name);
    await waitUntilReady(running, SERVERS);
  } catch (error) {
    await stopAll(running);
    process.removeListener('exit', killOnExit);
    throw error;
  }
  const server = handle({
    endpoint: `http://127.0.0.1:${running.ports.proxy}`,
    region: 'us-east-1',
    accessKeyId: 'test:tester',
    secretAccessKey: 'testing',
  });
  server.stopProxy = async () => {
    await stopServer(running, 'proxy');
    await assertPortFree(running.ports.proxy);
  };
  server.startProxy = async () => {
    if (running.children.has('proxy')) return;
    await assertPortFree(running.ports.proxy);
    spawnServer(running, 'proxy');
    await waitUntilReady(running, ['proxy']);
  };
  server.stop = async () => {
    await stopAll(running);
    process.removeListener('exit', killOnExit);
  };
  return server;
}

/**
 * A test process killed by a signal runs no exit handler: its servers stop by themselves (they
 * watch their parent) but its folder stays. The next start removes folders whose owner is gone.
 */
function removeStaleFolders(): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(FOLDER_PREFIX)) continue;
    const dir = join(tmpdir(), name);
    const owner = Number(readFileOr(join(dir, 'owner.pid'), '0'));
    // No owner file yet: another process may be between mkdtemp and writing it; give it a minute.
    const settled = owner > 0 || Date.now() - statSync(dir).mtimeMs > 60_000;
    if (settled && !alive(owner)) rmSync(dir, { recursive: true, force: true });
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

/** Swift needs [swift-hash] in /etc/swift/swift.conf; a fresh install may lack the file. Never overwritten. */
function ensureSwiftConf(): void {
  if (existsSync(SWIFT_CONF)) return;
  mkdirSync('/etc/swift', { recursive: true });
  const suffix = randomBytes(8).toString('hex');
  writeFileSync(SWIFT_CONF, `[swift-hash]\nswift_hash_path_suffix = ${suffix}\n`, { flag: 'wx' });
}

function writeConfigs({ dir, ports }: Running): void {
  mkdirSync(join(dir, 'devices', 'd1'), { recursive: true });
  mkdirSync(join(dir, 'logs'));
  const storage = readFileSync(join(TEMPLATES, 'storage-server.conf'), 'utf8');
  for (const name of STORAGE_SERVERS) {
    writeFileSync(confPath(dir, name), fillTemplate(storage, { server: name, port: ports[name], dir }));
  }
  const proxy = readFileSync(join(TEMPLATES, 'proxy-server.conf'), 'utf8');
  writeFileSync(confPath(dir, 'proxy'), fillTemplate(proxy, { port: ports.proxy, dir }));
}

function fillTemplate(template: string, values: Record<string, string | number>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (_, key: string) => {
    const value = values[key];
    if (value === undefined) throw new Error(`swift template: no value for {{${key}}}`);
    return String(value);
  });
}

function confPath(dir: string, name: ServerName): string {
  return join(dir, `${name}-server.conf`);
}

function logPath(dir: string, name: ServerName): string {
  return join(dir, 'logs', `${name}.log`);
}

/**
 * One server, in a process group of its own so that a stop reaches everything it started. The
 * proxy also gets the storage servers' ports: the launcher builds the rings before it starts.
 */
function spawnServer(running: Running, name: ServerName): void {
  const { dir, ports } = running;
  const rings = name === 'proxy' ? STORAGE_SERVERS.map((storage) => `${storage}=${ports[storage]}`) : [];
  const log = openSync(logPath(dir, name), 'a');
  const child = spawn(
    SWIFT_PYTHON,
    [join(TEMPLATES, 'launch-server.py'), name, confPath(dir, name), ...rings],
    {
      detached: true,
      stdio: ['ignore', log, log],
      // Debian's setuptools hooks `import distutils` (eventlet does it) and loads all of setuptools;
      // the standard library's distutils is enough, and makes start-up several times faster (the
      // objects setuptools leaves make eventlet's lock greening slow, see launch-server.py).
      env: { ...process.env, SETUPTOOLS_USE_DISTUTILS: 'stdlib' },
    },
  );
  closeSync(log);
  // A forgotten stop() must not keep the test process alive; the exit handler kills the servers.
  child.unref();
  running.children.set(name, child);
  child.once('exit', () => {
    if (running.children.get(name) === child) running.children.delete(name);
  });
}

async function waitUntilReady(running: Running, names: readonly ServerName[]): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  const pending = new Set(names);
  while (pending.size > 0) {
    for (const name of pending) {
      if (!running.children.has(name))
        throw startupError(running, `swift ${name}-server exited during start-up`);
      if (await healthy(running.ports[name])) pending.delete(name);
    }
    if (pending.size === 0) return;
    if (Date.now() > deadline) {
      throw startupError(
        running,
        `swift not ready after ${READY_TIMEOUT_MS / 1000} s: ${[...pending].join(', ')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function startupError(running: Running, message: string): Error {
  const logs = SERVERS.map((name) => {
    const path = logPath(running.dir, name);
    const text = existsSync(path) ? readFileSync(path, 'utf8').trim() : '';
    return text ? `--- ${name}-server:\n${text.slice(-3000)}` : '';
  }).filter(Boolean);
  return new Error([message, ...logs].join('\n'));
}

/** GET /healthcheck on a fresh connection (a pooled one could outlive a stopped proxy). */
function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const request = httpRequest(
      { host: '127.0.0.1', port, path: '/healthcheck', agent: false, timeout: 1000 },
      (response) => {
        response.resume();
        resolve(response.statusCode === 200);
      },
    );
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
    request.end();
  });
}

async function stopServer(running: Running, name: ServerName): Promise<void> {
  const child = running.children.get(name);
  if (!child) return;
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  signalGroup(child, 'SIGTERM');
  const timer = setTimeout(() => signalGroup(child, 'SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
  running.children.delete(name);
}

async function stopAll(running: Running): Promise<void> {
  await Promise.all([...running.children.keys()].map((name) => stopServer(running, name)));
  rmSync(running.dir, { recursive: true, force: true });
}

/** On the test process's exit: no time for waiting, so SIGKILL and remove the folder. */
function killAll(running: Running): void {
  for (const child of running.children.values()) signalGroup(child, 'SIGKILL');
  rmSync(running.dir, { recursive: true, force: true });
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/**
 * Four loopback ports that nothing listens on. Each is taken from the kernel (port 0), so they
 * are free now; they are released just before Swift binds them.
 */
async function freePorts(): Promise<Record<ServerName, number>> {
  const ports = await Promise.all(SERVERS.map(() => freePort()));
  if (new Set(ports).size !== ports.length) return freePorts();
  return Object.fromEntries(SERVERS.map((name, index) => [name, ports[index]])) as Record<ServerName, number>;
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

/**
 * Swift binds with SO_REUSEPORT: a second server on a busy port would start "fine" and share its
 * traffic. A plain bind (no SO_REUSEPORT) fails on a busy port, which is the check.
 */
function assertPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error) => reject(new Error(`port ${port} is still taken: ${error.message}`)));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
  });
}

// ---------------------------------------------------------------------------------------------
// The handle, and an external server

function handle(settings: ExternalServer, created?: string[]): S3TestServer {
  const server: S3TestServer = {
    ...settings,
    env: {
      AWS_ACCESS_KEY_ID: settings.accessKeyId,
      AWS_SECRET_ACCESS_KEY: settings.secretAccessKey,
      AWS_REGION: settings.region,
      AWS_ENDPOINT_URL_S3: settings.endpoint,
    },
    createBucket: async (prefix = 'mb-test') => {
      const bucket = bucketName(prefix);
      const client = s3TestClient(server);
      try {
        await client.send(new CreateBucketCommand({ Bucket: bucket }));
      } finally {
        client.destroy();
      }
      created?.push(bucket);
      return bucket;
    },
    stopProxy: () => Promise.reject(notSupported('stopProxy')),
    startProxy: () => Promise.reject(notSupported('startProxy')),
    stop: async () => {},
  };
  return server;
}

function notSupported(what: string): Error {
  return new Error(
    `${what} is not supported against an external server (MEDIABATCH_TEST_S3_ENDPOINT); check s3CanRestart`,
  );
}

/** Buckets on a shared server outlive the test process: stop() empties and deletes each one it made. */
function externalHandle(settings: ExternalServer): S3TestServer {
  const created: string[] = [];
  const server = handle(settings, created);
  server.stop = async () => {
    const client = s3TestClient(server);
    try {
      for (const bucket of created.splice(0)) await deleteBucket(client, bucket);
    } finally {
      client.destroy();
    }
  };
  return server;
}

/** `prefix-<12 hex>`: lower-case, at most 63 characters, unique enough for a shared account. */
function bucketName(prefix: string): string {
  const clean = prefix
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `${clean || 'mb-test'}-${randomBytes(6).toString('hex')}`;
}

async function deleteBucket(client: S3Client, bucket: string): Promise<void> {
  const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
  for (const upload of uploads.Uploads ?? []) {
    await client.send(
      new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.Key, UploadId: upload.UploadId }),
    );
  }
  for (;;) {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
    const keys = (page.Contents ?? []).map((object) => ({ Key: object.Key }));
    if (keys.length === 0) break;
    await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }));
  }
  await client.send(new DeleteBucketCommand({ Bucket: bucket }));
}
