import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import {
  downloadToFile,
  errorCode,
  isLocalFsError,
  redactUrl,
  TEMP_SUFFIX,
} from '../../src/downloads/save-file.js';
import { openDescriptors, traceDisk } from '../support/disk-trace.js';
import { tempDir } from '../support/temp.js';

const ORIGIN = 'http://files.test';
const SIGNED = `${ORIGIN}/v1/files/job_1/0?expires=1&sig=secret`;
const BODY = Buffer.from('a small video body, 42 bytes long.........');
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** undici's own mock dispatcher: it frames nothing, so a lying Content-Length reaches our check. */
function files(reply: (pool: ReturnType<MockAgent['get']>) => void): MockAgent {
  const agent = new MockAgent();
  agent.disableNetConnect();
  reply(agent.get(ORIGIN));
  return agent;
}

const agents: MockAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.splice(0).map((agent) => agent.close()));
});

function serve(status: number, body: Buffer, headers: Record<string, string | string[]> = {}) {
  const agent = files((pool) => pool.intercept({ path: /.*/ }).reply(status, body, { headers }));
  agents.push(agent);
  return agent;
}

describe('downloadToFile', () => {
  it('saves the whole body under the chosen name, with its size, SHA-256 and content type', async () => {
    const dir = tempDir();
    const seen: Array<string | null> = [];
    const target = join(dir, 'a.mp4');
    const dispatcher = serve(200, BODY, {
      'content-type': 'video/mp4',
      'content-length': String(BODY.length),
    });
    const outcome = await downloadToFile(
      SIGNED,
      (type) => {
        seen.push(type);
        return target;
      },
      { dispatcher },
    );
    expect(outcome).toEqual({
      kind: 'saved',
      bytes: BODY.length,
      sha256: sha(BODY),
      contentType: 'video/mp4',
      path: target,
    });
    expect(seen).toEqual(['video/mp4']);
    expect(readFileSync(target)).toEqual(BODY);
    expect(statSync(target).mode & 0o777).toBe(0o644 & ~process.umask());
    expect(readdirSync(dir)).toEqual(['a.mp4']);
  });

  it('saves a body sent without Content-Length, and reads the first of repeated headers', async () => {
    const dir = tempDir();
    const dispatcher = serve(200, BODY, { 'content-type': ['video/webm', 'video/mp4'] });
    const outcome = await downloadToFile(SIGNED, () => join(dir, 'b.bin'), { dispatcher });
    expect(outcome).toMatchObject({ kind: 'saved', bytes: BODY.length, contentType: 'video/webm' });
  });

  it('passes a null content type when the server sends none', async () => {
    const dir = tempDir();
    const seen: Array<string | null> = [];
    const dispatcher = serve(200, BODY);
    const outcome = await downloadToFile(
      SIGNED,
      (type) => {
        seen.push(type);
        return join(dir, 'c.bin');
      },
      { dispatcher },
    );
    expect(outcome).toMatchObject({ kind: 'saved', contentType: null });
    expect(seen).toEqual([null]);
  });

  for (const [label, length] of [
    ['shorter', BODY.length + 10],
    ['longer', BODY.length - 10],
  ] as const) {
    it(`rejects a body ${label} than its Content-Length and leaves no file at all`, async () => {
      const dir = tempDir();
      const dispatcher = serve(200, BODY, { 'content-type': 'video/mp4', 'content-length': String(length) });
      const outcome = await downloadToFile(SIGNED, () => join(dir, 'a.mp4'), { dispatcher });
      expect(outcome).toEqual({
        kind: 'error',
        message: `download of ${ORIGIN}/v1/files/job_1/0 failed: received ${BODY.length} bytes of ${length}`,
        local: false,
      });
      expect(readdirSync(dir)).toEqual([]);
    });
  }

  for (const status of [401, 403, 404, 410]) {
    it(`calls HTTP ${status} an expired URL`, async () => {
      const dir = tempDir();
      const dispatcher = serve(status, Buffer.from('{"error":{}}'));
      const outcome = await downloadToFile(SIGNED, () => join(dir, 'a.mp4'), { dispatcher });
      expect(outcome).toEqual({ kind: 'url_expired', status });
      expect(readdirSync(dir)).toEqual([]);
    });
  }

  it('reports another status as an error that names the URL without its signature', async () => {
    const dir = tempDir();
    const dispatcher = serve(503, Buffer.from('busy'));
    const outcome = await downloadToFile(SIGNED, () => join(dir, 'a.mp4'), { dispatcher });
    expect(outcome).toEqual({
      kind: 'error',
      message: `download of ${ORIGIN}/v1/files/job_1/0 answered HTTP 503`,
    });
  });

  it('reports a failed request without leaking the signed query, even when the error quotes it', async () => {
    const agent = files((pool) =>
      pool.intercept({ path: /.*/ }).replyWithError(new Error(`refused while fetching ${SIGNED} now`)),
    );
    agents.push(agent);
    const outcome = await downloadToFile(SIGNED, () => '/nowhere', { dispatcher: agent });
    expect(outcome).toEqual({
      kind: 'error',
      message: `download of ${ORIGIN}/v1/files/job_1/0 failed: refused while fetching ${ORIGIN}/v1/files/job_1/0 now`,
    });
  });

  it('calls a folder it cannot write into a local fault and names the target', async () => {
    const dir = tempDir();
    const target = join(dir, 'missing', 'a.mp4');
    const dispatcher = serve(200, BODY, { 'content-length': String(BODY.length) });
    const outcome = await downloadToFile(SIGNED, () => target, { dispatcher });
    // The errno reaches the caller, which tells a fault of every item (a full disk) from one file's.
    expect(outcome).toMatchObject({ kind: 'error', local: true, code: 'ENOENT' });
    expect((outcome as { message: string }).message).toMatch(
      new RegExp(`^saving ${target} from ${ORIGIN}/v1/files/job_1/0 failed: .*ENOENT`),
    );
  });

  it('replaces a file already at the target only with a whole new one', async () => {
    const dir = tempDir();
    const target = join(dir, 'a.mp4');
    writeFileSync(target, 'old');
    const dispatcher = serve(200, BODY, { 'content-length': String(BODY.length) });
    await downloadToFile(SIGNED, () => target, { dispatcher });
    expect(readFileSync(target)).toEqual(BODY);
  });

  it('gives up on a body that stalls longer than the timeout', async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-length': String(BODY.length) });
      res.write(BODY.subarray(0, 10));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const dir = tempDir();
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/f`;
      const outcome = await downloadToFile(url, () => join(dir, 'a.mp4'), { timeoutMs: 200 });
      expect(outcome).toMatchObject({ kind: 'error', local: false });
      // undici's timeout has a code of its own, but only a local fault's code may stop a run.
      expect(outcome).not.toHaveProperty('code');
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  }, 5_000);

  it('gives up on a server that sends no headers within the timeout', async () => {
    const server = createServer(() => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/f?sig=secret`;
      const started = Date.now();
      const outcome = await downloadToFile(url, () => '/nowhere', { timeoutMs: 200 });
      expect(outcome).toMatchObject({ kind: 'error' });
      expect((outcome as { message: string }).message).not.toContain('secret');
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('downloadToFile makes a saved file durable', () => {
  const hidden = (dir: string) => new RegExp(`${dir}/\\.[0-9a-f]{12}\\.mbtmp`, 'g');

  it('fsyncs the whole file, runs the hook, renames it into place, then fsyncs the folder', async () => {
    const dir = realpathSync(tempDir());
    const target = join(dir, 'a.mp4');
    const dispatcher = serve(200, BODY, { 'content-length': String(BODY.length) });
    const before = openDescriptors();
    const log = await traceDisk(async (note) => {
      const outcome = await downloadToFile(SIGNED, () => target, {
        dispatcher,
        beforeRename: async (name) => {
          // The new file is complete and synced, but does not hold the target's name yet.
          note(`before rename ${name} (exists: ${existsSync(name)})`);
        },
      });
      expect(outcome).toMatchObject({ kind: 'saved', path: target });
    });
    expect(log.map((line) => line.replace(hidden(dir), 'TEMP'))).toEqual([
      'fsync TEMP',
      `before rename ${target} (exists: false)`,
      `rename TEMP -> ${target}`,
      `fsync ${dir}`,
    ]);
    expect(openDescriptors()).toBe(before);
  });

  it('leaves the folder fsync to the caller when told to', async () => {
    const dir = realpathSync(tempDir());
    const target = join(dir, 'a.mp4');
    const dispatcher = serve(200, BODY);
    const log = await traceDisk(() =>
      downloadToFile(SIGNED, () => target, { dispatcher, syncFolder: false }),
    );
    expect(log.map((line) => line.replace(hidden(dir), 'TEMP'))).toEqual([
      'fsync TEMP',
      `rename TEMP -> ${target}`,
    ]);
  });

  it('never renames a file that failed its length check, and closes it', async () => {
    const dir = realpathSync(tempDir());
    const dispatcher = serve(200, BODY, { 'content-length': String(BODY.length + 1) });
    const before = openDescriptors();
    const log = await traceDisk(async (note) => {
      const outcome = await downloadToFile(SIGNED, () => join(dir, 'a.mp4'), {
        dispatcher,
        beforeRename: async () => note('hook'),
      });
      expect(outcome).toMatchObject({ kind: 'error', local: false });
    });
    expect(log).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
    expect(openDescriptors()).toBe(before);
  });

  it('lets go of the connection when the file cannot even be created', async () => {
    // A body too big for the socket buffers: unless the client drops it, the server never ends.
    const big = Buffer.alloc(16 * 1024 * 1024, 1);
    let closed = false;
    const server = createServer((req, res) => {
      req.socket.on('close', () => {
        closed = true;
      });
      res.end(big);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/f`;
      const target = join(tempDir(), 'missing', 'a.mp4');
      expect(await downloadToFile(url, () => target)).toMatchObject({ kind: 'error', local: true });
      const until = Date.now() + 3_000;
      while (!closed && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(closed).toBe(true);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('isLocalFsError', () => {
  const LOCAL = [
    'ENOSPC',
    'EDQUOT',
    'EROFS',
    'EACCES',
    'EPERM',
    'EISDIR',
    'ENOTDIR',
    'EEXIST',
    'ENOTEMPTY',
    'ENOENT',
    'EMFILE',
    'ENFILE',
    'EIO',
    'EFBIG',
    'ENAMETOOLONG',
  ];
  it.each(LOCAL)('counts %s as our own disk', (code) => {
    expect(isLocalFsError(Object.assign(new Error('x'), { code }))).toBe(true);
  });
  it.each([
    ['a transfer error', { code: 'ECONNRESET' }],
    ['an undici error', { code: 'UND_ERR_SOCKET' }],
    ['a numeric code', { code: 28 }],
    ['no code', new Error('x')],
    ['null', null],
    ['undefined', undefined],
  ])('does not count %s', (_label, error) => {
    expect(isLocalFsError(error)).toBe(false);
  });
});

describe('errorCode', () => {
  it('is the errno code of an error that has one as text, and undefined otherwise', () => {
    expect(errorCode(Object.assign(new Error('full'), { code: 'ENOSPC' }))).toBe('ENOSPC');
    expect(errorCode(Object.assign(new Error('odd'), { code: 28 }))).toBeUndefined();
    expect(errorCode(new Error('plain'))).toBeUndefined();
    expect(errorCode(null)).toBeUndefined();
    expect(errorCode(undefined)).toBeUndefined();
  });
});

describe('redactUrl', () => {
  it('keeps origin and path only', () => {
    expect(redactUrl('https://cdn.example/v1/files/a/0?expires=9&sig=abc#frag')).toBe(
      'https://cdn.example/v1/files/a/0',
    );
  });
  it('says so for a URL it cannot parse, without echoing it', () => {
    expect(redactUrl('not a url ?sig=abc')).toBe('(unparseable URL)');
  });
});

describe('temporary names', () => {
  it('end in the suffix the cleanup looks for', () => {
    expect(TEMP_SUFFIX).toBe('.mbtmp');
  });
});
