import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/cli.js';
import type { CliIo } from '../../../src/cli/io.js';
import { jobSchema } from '../../../src/service-client/index.js';

const dir = mkdtempSync(join(tmpdir(), 'mediabatch-sandbox-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function fakeIo() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk) => {
    out += String(chunk);
  });
  stderr.on('data', (chunk) => {
    err += String(chunk);
  });
  const listeners: Array<(count: number) => void> = [];
  const io: CliIo = {
    stdout,
    stderr,
    env: {},
    cwd: dir,
    onInterrupt: (listener) => {
      listeners.push(listener);
    },
    exit: (code) => {
      throw new Error(`unexpected exit ${code}`);
    },
  };
  const interrupt = () => {
    for (const listener of listeners) listener(1);
  };
  return { io, out: () => out, err: () => err, interrupt };
}

const STARTUP = /listening on (http:\/\/127\.0\.0\.1:(\d+)\/v1) {2}API key: (mg_\S+)/;

describe('mediabatch sandbox (CLI)', () => {
  it('starts from a spawned process, serves a submission, and exits 0 on SIGINT', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'sandbox', '--port', '0'], {
      cwd: process.cwd(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (chunk) => {
      err += String(chunk);
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const match = await new Promise<RegExpExecArray>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        out += String(chunk);
        const found = STARTUP.exec(out);
        if (found) resolve(found);
      });
      child.on('exit', () => reject(new Error(`sandbox exited early: ${out}${err}`)));
    });
    const [, baseUrl, port, apiKey] = match;
    expect(Number(port)).toBeGreaterThan(0);
    const response = await request(`${baseUrl}/videos/generation`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${apiKey}`,
        'content-type': 'application/json',
        'idempotency-key': 'cli-1',
      },
      body: JSON.stringify({ input: { prompt: 'from the CLI test' } }),
    });
    expect(response.statusCode).toBe(202);
    expect(response.headers['x-request-id']).toMatch(/^req_/);
    expect(jobSchema.parse(await response.body.json()).status).toBe('queued');
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(out).toContain('stopped');
    expect(err).toBe('');
  });

  it('serves a --config file and stops cleanly when interrupted', async () => {
    const file = join(dir, 'sandbox.yaml');
    writeFileSync(
      file,
      'keys: [{key: mg_cli_config_key, id: 1, workspace: w}]\nworkspaces: [{id: w, balance_usd: "2"}]\n',
    );
    const fake = fakeIo();
    const running = main(['sandbox', '--port', '0', '--config', 'sandbox.yaml'], fake.io);
    await expect.poll(() => STARTUP.exec(fake.out()), { timeout: 15_000 }).not.toBeNull();
    const [, baseUrl, , apiKey] = STARTUP.exec(fake.out()) ?? [];
    expect(apiKey).toBe('mg_cli_config_key');
    const account = await request(`${baseUrl}/account`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(await account.body.json()).toMatchObject({ balance: { amount_usd: '2.000000' } });
    fake.interrupt();
    expect(await running).toBe(0);
  });

  it('with --state knows the jobs of its previous life', async () => {
    const start = async () => {
      const fake = fakeIo();
      const running = main(['sandbox', '--port', '0', '--state', 'state.jsonl'], fake.io);
      await expect.poll(() => STARTUP.exec(fake.out()), { timeout: 15_000 }).not.toBeNull();
      const [, baseUrl, , apiKey] = STARTUP.exec(fake.out()) ?? [];
      expect(fake.out()).toContain(`state kept in ${join(dir, 'state.jsonl')}`);
      return { fake, running, baseUrl: baseUrl!, auth: { authorization: `Bearer ${apiKey}` } };
    };
    const first = await start();
    const posted = await request(`${first.baseUrl}/videos/generation`, {
      method: 'POST',
      headers: { ...first.auth, 'content-type': 'application/json', 'idempotency-key': 'state-1' },
      body: JSON.stringify({ input: { prompt: 'kept across restarts' } }),
    });
    const job = jobSchema.parse(await posted.body.json());
    first.fake.interrupt();
    expect(await first.running).toBe(0);

    const second = await start();
    const fetched = await request(`${second.baseUrl}/jobs/${job.id}`, { headers: second.auth });
    expect(fetched.statusCode).toBe(200);
    expect(jobSchema.parse(await fetched.body.json()).created_at).toBe(job.created_at);
    second.fake.interrupt();
    expect(await second.running).toBe(0);
  });

  it('exits 2 with a message on bad flags, bad ports and bad config files', async () => {
    writeFileSync(join(dir, 'bad.yaml'), 'workspaces: [{id: w, balance_usd: "x"}]\n');
    const cases: Array<[string[], RegExp]> = [
      [['sandbox', '--bogus'], /bogus/],
      [['sandbox', 'extra'], /extra|positional/i],
      [['sandbox', '--port', 'abc'], /--port/],
      [['sandbox', '--port', '70000'], /--port/],
      [['sandbox', '--config', 'nope.yaml'], /nope\.yaml/],
      [['sandbox', '--config', 'bad.yaml'], /bad\.yaml.*workspaces\[0\]\.balance_usd/],
      [['sandbox', '--state', ''], /--state needs a file name/],
    ];
    for (const [argv, message] of cases) {
      const fake = fakeIo();
      expect(await main(argv, fake.io)).toBe(2);
      expect(fake.err()).toMatch(message);
    }
  });

  it('exits 2 when the port is taken', async () => {
    const first = fakeIo();
    const running = main(['sandbox', '--port', '0'], first.io);
    await expect.poll(() => STARTUP.exec(first.out())).not.toBeNull();
    const port = STARTUP.exec(first.out())?.[2] ?? '';
    const second = fakeIo();
    expect(await main(['sandbox', '--port', port], second.io)).toBe(2);
    expect(second.err()).toMatch(/EADDRINUSE/);
    first.interrupt();
    expect(await running).toBe(0);
  });
});
