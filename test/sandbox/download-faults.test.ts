import { createHash } from 'node:crypto';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { MediaGenClient } from '../../src/service-client/index.js';
import { body, type FakeClock, newKey, setup } from './helpers.js';

async function succeededUrl(client: MediaGenClient, clock: FakeClock, prompt: string): Promise<URL> {
  const job = await client.createVideoJob(body(prompt), newKey());
  clock.advance(3);
  const done = await client.getJob(job.data.id);
  return new URL(done.data.output.files[0]!.url);
}

interface RawAnswer {
  status: string;
  headers: Map<string, string>;
  /** The body as framed by the server (chunked decoded), not as Content-Length says. */
  body: Buffer;
}

/** One GET over a bare socket, read until the server closes it: no HTTP client judges the framing. */
function rawGet(url: URL): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('end', () => {
      const all = Buffer.concat(chunks);
      const split = all.indexOf('\r\n\r\n');
      const [status = '', ...lines] = all.subarray(0, split).toString('latin1').split('\r\n');
      const headers = new Map(
        lines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      let rest = all.subarray(split + 4);
      if (headers.get('transfer-encoding') === 'chunked') {
        const parts: Buffer[] = [];
        for (;;) {
          const eol = rest.indexOf('\r\n');
          const size = Number.parseInt(rest.subarray(0, eol).toString('latin1'), 16);
          if (size === 0) break;
          parts.push(rest.subarray(eol + 2, eol + 2 + size));
          rest = rest.subarray(eol + 2 + size + 2);
        }
        rest = Buffer.concat(parts);
      }
      resolve({ status, headers, body: rest });
    });
    socket.write(
      `GET ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\nconnection: close\r\n\r\n`,
    );
  });
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('sandbox: [[url-expired]]', () => {
  it('[[url-expiredx2]] refuses the first two downloads with 403 url_expired, then serves the file', async () => {
    const { sandbox, client, clock } = await setup();
    const url = await succeededUrl(client, clock, 'stale [[url-expiredx2]]');
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await rawGet(url)).status);
    expect(statuses).toEqual(['HTTP/1.1 403 Forbidden', 'HTTP/1.1 403 Forbidden', 'HTTP/1.1 200 OK']);
    const files = sandbox.records().requests.filter((request) => request.path.startsWith('/v1/files/'));
    expect(files.map((request) => request.status)).toEqual([403, 403, 200]);
  });
});

describe('sandbox: downloads whose Content-Length lies', () => {
  it('[[short-bodyx1]] sends the whole file with a Content-Length of twice its size, then closes', async () => {
    const { sandbox, client, clock } = await setup();
    const url = await succeededUrl(client, clock, 'liar [[short-bodyx1]]');
    const [file] = sandbox.records().jobs[0]!.files;
    const lying = await rawGet(url);
    expect(lying.status).toBe('HTTP/1.1 200 OK');
    expect(lying.headers.get('content-length')).toBe(String(2 * file!.bytes));
    expect(lying.headers.get('connection')).toBe('close');
    expect(lying.headers.get('x-request-id')).toMatch(/^req_/);
    expect(sha(lying.body)).toBe(file!.sha256);
    const honest = await rawGet(url);
    expect(honest.headers.get('content-length')).toBe(String(file!.bytes));
    expect(sha(honest.body)).toBe(file!.sha256);
  });

  it('[[long-bodyx1]] sends the whole file chunked, with a Content-Length of half its size', async () => {
    const { sandbox, client, clock } = await setup();
    const url = await succeededUrl(client, clock, 'liar [[long-bodyx1]]');
    const [file] = sandbox.records().jobs[0]!.files;
    const lying = await rawGet(url);
    expect(lying.headers.get('content-length')).toBe(String(Math.floor(file!.bytes / 2)));
    expect(lying.headers.get('transfer-encoding')).toBe('chunked');
    expect(sha(lying.body)).toBe(file!.sha256);
    expect((await rawGet(url)).headers.get('content-length')).toBe(String(file!.bytes));
  });

  it('download_wrong_length: 1 lies on every download, both ways across downloads', async () => {
    const { sandbox, client, clock } = await setup({ faults: { download_wrong_length: 1 } });
    const url = await succeededUrl(client, clock, 'always');
    const size = sandbox.records().jobs[0]!.files[0]!.bytes;
    const declared = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const answer = await rawGet(url);
      expect(answer.body.length).toBe(size);
      declared.add(answer.headers.get('content-length')!);
    }
    expect([...declared].sort()).toEqual([String(2 * size), String(Math.floor(size / 2))].sort());
  });
});
