import { existsSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, tempProject } from '../../support/cli.js';
import { expectNoStackTrace, filesUnder } from './support.js';

/**
 * A service that is not the sandbox and does not play fair: just enough of the interface to get a
 * job accepted and succeeded, with every value that could steer a file path made hostile.
 */
function hostileService() {
  const downloads: string[] = [];
  const jobs = new Map<string, { item: string; createdAt: string }>();
  let origin = '';
  const files: Record<string, Array<{ type: string; url: () => string }>> = {
    shot: [{ type: '../../evil', url: () => `${origin}/../../../evil.sh?x` }],
    pair: [
      { type: '/etc/passwd', url: () => `${origin}/%2e%2e/%2e%2e/evil%2f..%2fx.EXE?sig=topsecret` },
      { type: '..\\..\\evil', url: () => `${origin}/a/b.tar.gz/` },
    ],
  };
  const contentTypes: Record<string, string> = {
    '/evil.sh?x': 'text/x-sh/../../a',
    '/a/b.tar.gz/': 'application/json/../../x',
  };
  const job = (id: string, succeeded: boolean) => {
    const { item, createdAt } = jobs.get(id)!;
    return {
      id,
      object: 'job',
      capability: 'video.generation',
      model: null,
      status: succeeded ? 'succeeded' : 'queued',
      input: { prompt: 'p' },
      output: { files: succeeded ? files[item]!.map((file) => ({ type: file.type, url: file.url() })) : [] },
      cost: { amount_usd: '0.010000', refunded_usd: '0.000000' },
      error: null,
      // Returned "unchanged"? Not by this server: it claims the job belongs elsewhere.
      metadata: {
        'mediabatch.manifest': '../..',
        'mediabatch.item': '../../evil',
        'mediabatch.attempt': '1',
      },
      created_at: createdAt,
      completed_at: succeeded ? new Date().toISOString() : null,
      expires_at: succeeded ? new Date(Date.now() + 3600_000).toISOString() : null,
    };
  };
  const server: Server = createServer(async (req: IncomingMessage, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const url = req.url ?? '/';
    const send = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': 'req_1' });
      res.end(JSON.stringify(value));
    };
    if (req.method === 'POST' && url === '/v1/videos/generation') {
      const id = `job_evil${jobs.size + 1}`;
      jobs.set(id, {
        item: JSON.parse(body).metadata['mediabatch.item'],
        createdAt: new Date().toISOString(),
      });
      return send(202, job(id, false));
    }
    if (url === '/v1/account')
      return send(200, {
        object: 'account',
        balance: { amount_usd: '5.000000', enabled: true },
        concurrency: { active: 0, limit: 3 },
      });
    if (url.startsWith('/v1/jobs?'))
      return send(200, { object: 'list', data: [], has_more: false, next_cursor: null });
    const one = /^\/v1\/jobs\/([^/?]+)$/.exec(url);
    if (one && jobs.has(one[1]!)) return send(200, job(one[1]!, true));
    downloads.push(url);
    const content = `#!/bin/sh\necho pwned from ${url}\n`;
    res.writeHead(200, {
      'content-type': contentTypes[url] ?? 'video/mp4; name="../../x"',
      'content-length': Buffer.byteLength(content),
      'content-disposition': 'attachment; filename="../../../evil.sh"',
    });
    res.end(content);
  });
  return {
    downloads,
    async start(): Promise<string> {
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      return `${origin}/v1`;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let service: ReturnType<typeof hostileService> | undefined;
afterEach(async () => {
  await service?.close();
  service = undefined;
});

describe('server-supplied values never decide a path outside output.dir', () => {
  it('file types, URL paths, content types and headers that try to escape are ignored or sanitised', async () => {
    service = hostileService();
    const baseUrl = await service.start();
    // Nested deep enough that every `../` the server tries would still land inside the project.
    const root = tempProject({
      'p/q/r/batch.yaml':
        'version: 1\nname: evil\nitems:\n  - {id: shot, prompt: p}\n  - {id: pair, prompt: q}\n',
    });
    const manifestDir = join(root, 'p/q/r');
    const outsiders = ['/evil.sh', '/tmp/evil.sh', join(dirname(root), 'evil.sh'), '/evil', '/tmp/evil'];
    const existedBefore = outsiders.filter((path) => existsSync(path));

    const result = await runCli(['run', 'batch.yaml', '--poll-interval', '0.1', '--json'], {
      cwd: manifestDir,
      env: { MEDIAGEN_API_KEY: 'mg_hostile_key_0000000', MEDIAGEN_BASE_URL: baseUrl },
    });
    expectNoStackTrace(result);
    expect(service.downloads.length).toBeGreaterThanOrEqual(3);

    const written = filesUnder(root).map((file) => relative(root, file));
    const outputs = written.filter(
      (file) => !file.startsWith('p/q/r/.mediabatch/') && file !== 'p/q/r/batch.yaml',
    );
    // Whatever else happened, nothing landed anywhere but output.dir.
    for (const file of outputs) expect(file.startsWith('p/q/r/out/evil/'), file).toBe(true);
    expect(outsiders.filter((path) => existsSync(path))).toEqual(existedBefore);
    expect(result.stdout + result.stderr).not.toContain('topsecret');

    // The interface allows all of it, so the run completes, naming files after the item ids alone.
    expect(result.code, result.stderr).toBe(0);
    const inFolder = outputs.map((file) => file.slice('p/q/r/out/evil/'.length));
    // The folder's owner marker is mediabatch's own, beside the outputs.
    expect(inFolder).toContain('.mediabatch-owner.json');
    // So is the gallery page every run leaves there (docs/gallery.md, "After every run").
    expect(inFolder).toContain('index.html');
    const all = inFolder.filter((name) => name !== '.mediabatch-owner.json' && name !== 'index.html').sort();
    // Each file has its provenance sidecar beside it, named from the id alone too.
    expect(all.filter((name) => name.endsWith('.json'))).toEqual(['pair-1.json', 'pair-2.json', 'shot.json']);
    const names = all.filter((name) => !name.endsWith('.json'));
    expect(names).toHaveLength(3);
    for (const name of names) expect(name).toMatch(/^(shot|pair-1|pair-2)\.[a-z0-9]{1,10}$/);
    // Content type first ('video/mp4; name=..' is mp4), else the last URL segment, else bin.
    expect(names).toEqual(['pair-1.mp4', 'pair-2.bin', 'shot.sh']);
    for (const file of outputs) expect(statSync(join(root, file)).mode & 0o111, file).toBe(0);
  }, 60_000);
});
